#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/cluster_cost.h"
#include "core/cost_model.h"
#include "core/fit.h"
#include "core/policy.h"
#include "core/rules.h"
#include "core/types.h"
#include "core/workload.h"

namespace gpuplacement::core {

// The figures behind "memory needed", shown with every result.
struct MemoryEstimate {
  std::uint64_t parameters = 0;
  Precision precision = Precision::FP16;
  double bytesPerParameter = 0;
  double overhead = 0;
  double weightsGiB = 0;    // parameters x bytes per parameter
  double requiredGiB = 0;   // weights x overhead; training: 2 bytes a parameter x overhead
  double runtimeGiB = 0;    // host memory of the framework's process, on top
  const char* method = "";  // "full training with Adam", "QLoRA (...)", ...
};

MemoryEstimate estimateMemory(const WorkloadIntent& intent, const MemoryOverheads& overheads);
// How the work uses memory: full training, LoRA or QLoRA, serving.
const char* methodOf(const WorkloadIntent& intent);

// The host memory a GPU replica loads its weights through: one checkpoint
// shard (Hugging Face's default max_shard_size, 5 GB).
inline constexpr double kLoadShardGiB = 5e9 / (1024.0 * 1024.0 * 1024.0);

struct Placement {
  Tier tier = Tier::CPU;
  std::string accelerator;  // empty for CPU
  std::string instanceType;
  int acceleratorCount = 0;  // per replica; 0 for CPU
  int acceleratorsPerInstance = 0;
  CapacityType capacityType = CapacityType::OnDemand;  // OnDemand or Spot, never Any
  double hourlyCost = 0;                               // per replica
  // Per replica, what the cluster pays more for it: nothing for devices
  // idle on nodes other pods keep up. Unset: hourlyCost (no cluster view).
  std::optional<double> clusterHourlyCost;
  double paidByCluster() const { return clusterHourlyCost.value_or(hourlyCost); }
  double monthlyCost = 0;  // per replica
  int replicas = 1;
  double totalHourlyCost = 0;
  double totalMonthlyCost = 0;
  double requiredMemoryGiB = 0;
  double availableMemoryGiB = 0;  // what the replica gets: count x usable per-accelerator memory
  double memoryFillLimit = 0;     // the policy's: the most of availableMemoryGiB a model may fill
  double performance = 0;         // the figure the objective compared
  const char* performanceUnit = "";
  // The nodes behind the price.
  CostModel costModel = CostModel::WholeInstance;
  double nodeHourlyCost = 0;  // one node of instanceType at capacityType
  int nodes = 0;              // nodes the replicas occupy
  int replicasPerNode = 0;
  int idleAccelerators = 0;  // on those nodes, paid for and unused (whole-node pricing)
  int replicasOnIdle = 0;    // with a cluster view: replicas on devices idle on existing nodes
  std::string costNote;      // "1 of 16 Trainium on one trn1.32xlarge at $3.91/h; 15 idle"
  // CPU placements: what each replica requests (and is limited to).
  double cpuRequest = 0;
  // Host memory per replica: CPU the model and its runtime; GPU and Neuron
  // the runtime and the shard its weights load through.
  double memoryRequestGiB = 0;
  int neededAccelerators = 0;  // the fewest that hold the model; fewer than
                               // acceleratorCount when training data-parallel
  // Inference: the least time a unit of work (latencyUnit) can take here,
  // by the roofline (core/performance_model.h), and whether compute binds.
  std::optional<double> latencyMs;
  LatencyUnit latencyUnit = LatencyUnit::OutputToken;
  bool latencyComputeBound = false;
};

// An option that lost, and why.
struct Alternative {
  std::string instanceType;  // empty when the line is about a tier or an accelerator
  std::string accelerator;
  Tier tier = Tier::CPU;
  int acceleratorCount = 0;
  CapacityType capacityType = CapacityType::OnDemand;
  std::optional<double> hourlyCost;  // per replica, when it could be priced
  std::string rejected;
};

struct Decision {
  MemoryEstimate memory;
  std::string sizeBucket;
  LatencyClass latency = LatencyClass::Relaxed;
  std::optional<Placement> placement;
  std::string rule;  // the rule that decided; empty when nothing matched
  std::string ruleSource;
  std::string reason;  // one line for people
  std::vector<Alternative> alternatives;
  // When placement is empty: the binding constraint, e.g. "needs 5,588 GiB;
  // the largest eligible instance offers 1,128 GiB (p5en.48xlarge)".
  std::string cannotPlace;
  // Placed, but no option meets latencyTargetMs: the fastest is placed and
  // the reason gives its estimate.
  bool latencyTargetUnreachable = false;

  // The Placed condition's reason: Placed, LatencyTargetUnreachable or CannotPlace.
  const char* placedReason() const {
    return !placement                 ? "CannotPlace"
           : latencyTargetUnreachable ? "LatencyTargetUnreachable"
                                      : "Placed";
  }
};

// Whether a placement already in use can stay, under this engine's prices
// and the workload's current intent, and what it costs now.
struct Assessment {
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  double hourlyCost = 0;
  std::optional<double> clusterHourlyCost;  // see Placement
  double paidByCluster() const { return clusterHourlyCost.value_or(hourlyCost); }
  double performance = 0;
  // The placement in force, described and priced as decide() would (when
  // the instance type is still in the catalog and has a price).
  std::optional<Placement> placement;
};

// What a decision knows of the cluster: the candidates that can exist, the
// devices idle on existing nodes, the labels to select on (null view: none,
// as offline), and the workload's own devices in force.
struct ClusterContext {
  const ClusterView* view = nullptr;
  OwnDevices own;
};

// Decides placements from a catalog, a rule set and a policy. Pure and
// deterministic: the same intent always gives the same decision. Built once
// per policy version; decide() is const and allocation-light.
class PlacementEngine {
 public:
  static Result<std::shared_ptr<const PlacementEngine>> create(
      std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules, Policy policy);

  // Priced by the policy's cost model.
  Decision decide(const WorkloadIntent& intent) const;
  // Priced by `costs`: what a caller that knows the cluster passes (devices
  // already paid for on existing nodes cost only their share).
  Decision decide(const WorkloadIntent& intent, const NodeCostModel& costs) const;
  // Within what the cluster has or can get: a type no node carries and no
  // NodePool may launch is no candidate, and under whole-node pricing
  // idle devices on existing nodes cost their share (ClusterCost).
  Decision decide(const WorkloadIntent& intent, const ClusterContext& cluster) const;

  // `cluster`, when given, prices the placement as decide() with it would.
  Assessment assess(const WorkloadIntent& intent, const std::string& instanceType, int count,
                    CapacityType capacity, const ClusterContext* cluster = nullptr) const;

  const Catalog& catalog() const { return *catalog_; }
  const RuleSet& rules() const { return *rules_; }
  const Policy& policy() const { return policy_; }
  const RuleKnobs& knobs() const { return knobs_; }
  std::optional<double> price(int instance, CapacityType capacity) const;

 private:
  struct Option;
  struct Evaluation;
  struct Request;
  PlacementEngine(std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules,
                  Policy policy);

  Request requestFor(const WorkloadIntent& intent, const MemoryEstimate& memory,
                     const NodeCostModel& costs, const ClusterView* view) const;
  const NodeCostModel& costsFor(const ClusterContext* cluster,
                                std::optional<ClusterCost>& storage) const;
  Decision decideWith(const WorkloadIntent& intent, const NodeCostModel& costs,
                      const ClusterView* view) const;
  bool matches(const Rule& rule, const WorkloadIntent& intent, std::size_t bucket,
               LatencyClass latency) const;
  std::string whyNotMatched(const Rule& rule, const WorkloadIntent& intent, std::size_t bucket,
                            LatencyClass latency) const;
  bool isCandidate(const Rule& rule, const InstanceType& instance,
                   const Constraints& constraints) const;
  void evaluateRule(const Rule& rule, const Request& request, Evaluation& evaluation) const;
  void evaluateInstance(int index, const Request& request, Evaluation& evaluation) const;
  void addOptions(int index, const Fit& fit, const Request& request, Evaluation& evaluation) const;
  void rankOf(Option& option, const Request& request) const;
  int idleDevicesOf(const Option& option, const Request& request) const;
  static bool better(const Option& a, const Option& b);
  Placement placementOf(const Option& option, const Request& request) const;
  std::string costNote(const Option& option, const Placement& placement) const;
  std::string clusterCostNote(const Option& option, const Placement& placement,
                              const std::string& shape, const std::string& price) const;
  enum class RuleOutcome : std::uint8_t { None, Meets, Misses };
  RuleOutcome tryRule(const Rule& rule, const Request& request, Evaluation& evaluation) const;
  void choose(const Rule& rule, const Request& request, Evaluation& evaluation,
              Decision& decision) const;
  void explainChoice(const Rule& rule, const Option& best, const Request& request,
                     Decision& decision) const;
  void listRunnersUp(const Option& best, const Request& request, const Evaluation& evaluation,
                     Decision& decision) const;
  void listRuledOut(const Request& request, const Evaluation& evaluation, Decision& decision) const;
  void listUnoffered(const Option* best, const Evaluation& evaluation, Decision& decision) const;
  std::vector<const Option*> bestUnoffered(const Evaluation& evaluation, const Option* best,
                                           std::size_t limit) const;
  Alternative alternativeOf(const Option& option, std::string why) const;
  std::string lostBecause(const Option& option, const Option& best, const Request& request) const;
  static std::optional<double> valueLoss(const Option& option, const Option& best);
  bool userTiersUnoffered(const WorkloadIntent& intent,
                          const std::vector<std::size_t>& matched) const;
  std::string userTiersNote(const WorkloadIntent& intent, std::size_t bucket,
                            LatencyClass latency) const;
  void explainFailure(const Request& request, const std::vector<std::size_t>& matched,
                      Decision& decision) const;
  std::string bindingConstraint(const Request& request, const Evaluation& overall,
                                const std::string& rulesText) const;
  std::string tooSmall(const Request& request, const Evaluation& overall) const;
  std::string unofferedConstraint(const Request& request, const Evaluation& overall) const;
  std::string precisionBlocked(const Request& request, const Evaluation& evaluation,
                               std::optional<Tier> tier = std::nullopt) const;
  std::string neuronIneligibility(Tier tier, const WorkloadIntent& intent) const;
  std::string outsideIntent(const WorkloadIntent& intent, const InstanceType& instance,
                            CapacityType capacity) const;
  Fit shapeInForce(const InstanceType& instance, int count) const;

  std::shared_ptr<const Catalog> catalog_;
  std::shared_ptr<const RuleSet> rules_;
  Policy policy_;
  RuleKnobs knobs_;                              // the rule set's, with the policy's overrides
  std::vector<std::optional<double>> onDemand_;  // effective prices by instance index
  std::vector<std::optional<double>> spot_;
  std::vector<bool> disabledRules_;
  // The candidates each rule names, as bits: tiers, and accelerators.
  struct CandidateMask {
    std::uint32_t tiers = ~0U;
    std::uint64_t accelerators = ~0ULL;
    bool within(const CandidateMask& wider) const {
      return (tiers & ~wider.tiers) == 0 && (accelerators & ~wider.accelerators) == 0;
    }
  };
  std::vector<CandidateMask> candidateMasks_;
  Rule userTiersRule_;  // places on the tiers a workload names when no matching rule offers them
  std::array<std::uint64_t, 4> acceleratorsOfTier_{};      // bit per accelerator, by Tier
  std::string fillLimitText_;                              // "90%"
  LabelScheme defaultScheme_ = LabelScheme::InstanceType;  // without a cluster view
};

// Which size bucket (by name) a parameter count falls in.
std::size_t sizeBucketIndex(const RuleKnobs& knobs, std::uint64_t parameters);
LatencyClass latencyClassOf(const RuleKnobs& knobs, std::optional<double> latencyTargetMs);

}  // namespace gpuplacement::core
