#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/catalog/rules.h"
#include "core/catalog/types.h"
#include "core/decide/cluster_cost.h"
#include "core/decide/cost_model.h"
#include "core/decide/fit.h"
#include "core/intent/policy.h"
#include "core/intent/workload.h"

// What the placement engine weighs for one decision, as data: the options
// it priced and ranked, what it learned of the others, and the rule that
// decided. The engine (core/decide/engine.h) fills it; the explainer
// (core/explain/explainer.h) turns it into a Decision's words.
namespace gpuplacement::core {

// The figures behind "memory needed", shown with every result.
struct MemoryEstimate {
  std::uint64_t parameters = 0;
  Precision precision = Precision::FP16;
  double bytesPerParameter = 0;
  double overhead = 0;
  double weightsGiB = 0;  // parameters x bytes per parameter
  // Weights x overhead; training: 2 bytes a parameter x overhead. With a
  // serving load: weights + KV cache + one device's reserve (on more
  // devices, requiredOn in core/decide/fit.h).
  double requiredGiB = 0;
  double runtimeGiB = 0;    // host memory of the framework's process, on top
  const char* method = "";  // "full training with Adam", "QLoRA (...)", ...
  // With a serving load stated (ServingLoad::stated); zero otherwise, but
  // kvBytesPerToken where the model's shape is known.
  ServingLoad serving;
  double kvBytesPerToken =
      0;                  // at the KV cache's precision (fp16 without a load); 0: shape unknown
  double kvCacheGiB = 0;  // concurrentSequences x contextTokens x kvBytesPerToken
  double reserveGiB = 0;  // per device: the runtime's context and activations
  int kvHeads = 0;        // the KV cache splits by them across devices
  // Training and fine-tuning: requiredGiB by part, as a group of nodes
  // splits it (core/decide/training_layout.h).
  TrainingMemory training;
};

MemoryEstimate estimateMemory(const WorkloadIntent& intent, const MemoryOverheads& overheads);
// Training's and fine-tuning's requiredGiB by part; none for serving.
TrainingMemory trainingMemoryOf(WorkloadKind kind, const MemoryEstimate& memory);
// How the work uses memory: full training, LoRA or QLoRA, serving.
const char* methodOf(const WorkloadIntent& intent);

// The host memory a GPU replica loads its weights through: one checkpoint
// shard (Hugging Face's default max_shard_size, 5 GB).
inline constexpr double kLoadShardGiB = 5e9 / (1024.0 * 1024.0 * 1024.0);

// What a decision knows of the cluster: the candidates that can exist, the
// devices idle on existing nodes, the labels to select on (null view: none,
// as offline), and the workload's own devices in force.
struct ClusterContext {
  const ClusterView* view = nullptr;
  OwnDevices own;
  // The workload's pods bound to nodes: the room they hold is its own.
  std::vector<OwnPod> ownPods;
};

// Money closer than this is the same price.
inline constexpr double kSamePrice = 5e-5;

// How many runners-up a decision reports: the engine ranks enough options
// to cover them.
inline constexpr std::size_t kRunnersUp = 3;

// One way to run the replicas: an instance type, a capacity type, how a
// replica fits there, and what the cost model charges for it.
struct Option {
  int instance = -1;
  CapacityType capacity = CapacityType::OnDemand;
  Fit fit;
  CostQuote cost;
  double nodeHourly = 0;      // Mixed: the on-demand node's
  double spotNodeHourly = 0;  // Mixed only: the spot node's
  // The decision's order as a key, smallest best (see rankOf).
  std::tuple<double, double, double, double, int, int, int> rank{};
};

// The decision's order: smaller rank first.
inline bool better(const Option& a, const Option& b) {
  return a.rank < b.rank;
}

// Why the cluster cannot run an option, as the engine found it: the
// capacity type it lacks (a Mixed option's on-demand or spot half), and,
// when that part's nodes are there and no NodePool may add one, the room
// they have against what the part needs.
struct Shortfall {
  CapacityType part = CapacityType::OnDemand;
  bool offered = false;  // some node or NodePool offers the part: it lacks room
  int replicas = 0;      // the part's replicas (at least 1)
  int needed = 0;        // and a rollout's surge beside its pods there
  int room = 0;          // replicas the nodes have room for
};

// An option that would run, left out because of the cluster.
struct Unoffered {
  Option option;
  Shortfall shortfall;
};

// A replica across a group of nodes of one type, passed over.
struct AcrossNodes {
  int instance = -1;  // catalog index; -1: none
  int nodes = 0;
};

// Everything learned while trying a rule's candidates: the options that
// work, and enough about the others to explain a failure. No strings are
// built here; that waits until the few that are reported are known.
struct Evaluation {
  std::vector<Option> feasible;
  // Indexes into feasible: each instance type's best option, the first
  // kRunnersUp + 1 of them in order, best first (PlacementEngine::rank).
  std::vector<std::uint32_t> ranked;
  bool anyCandidate = false;
  bool anyPriced = false;
  bool anyRunnable = false;  // some candidate's hardware runs the precision
  bool anyFits = false;
  bool spotWithheld = false;  // spot offered nothing: online serving without the policy's consent
  // Nodes that offer their devices only through DRA passed over: the
  // target's pod template cannot gain a claim (a Job's).
  bool claimsUnwritable = false;
  // Options passed over for asking other devices than the team's template,
  // which cannot change once created (WorkloadIntent::fixedDevices).
  bool devicesFixedOut = false;
  // No node of a type holds a replica, and a group of its nodes would: the
  // type with the fewest such nodes, where the target's pods form no groups
  // (acrossNodesUnformed) or the type has no EFA to join them
  // (acrossNodesWithoutEfa). Never candidates.
  AcrossNodes acrossNodesUnformed;
  AcrossNodes acrossNodesWithoutEfa;
  // Reserved nodes passed over, and why: their reservation ends before the
  // workload's deadline, or may (a Capacity Block whose end is not known),
  // or may be taken back and the work did not consent to that.
  std::string reservationPassedOver;
  bool mixedUnlabeled = false;  // Mixed asked for, and no capacity-type label to spread over
  double bestMs = 0;            // tryRule: the best option's latency when all miss the target
  double largestGiB = 0;
  int largestInstance = -1;  // offers the most usable memory of the runnable candidates
  bool largestFits = false;
  Misfit largestMisfit = Misfit::None;
  std::optional<Option> cheapestOverBudget;
  unsigned neuronBlockedTiers = 0;     // bit per Tier that the Neuron gate kept out
  std::uint64_t precisionBlocked = 0;  // bit per accelerator that cannot run the precision
  std::uint64_t karpenterBlocked = 0;  // bit per fractional accelerator under Karpenter
  // Would run, but no node or NodePool offers them, or the only nodes
  // there are lack room for every replica.
  std::vector<Unoffered> unoffered;
  FitChoices fits;  // scratch for one instance type's choices

  // Forgets everything but the storage of the options and their ranking.
  void reset() {
    auto options = std::move(feasible);
    auto order = std::move(ranked);
    auto absent = std::move(unoffered);
    options.clear();
    order.clear();
    absent.clear();
    *this = Evaluation{};
    feasible = std::move(options);
    ranked = std::move(order);
    unoffered = std::move(absent);
  }
};

// One decision's inputs, worked out once.
struct Request {
  const WorkloadIntent& intent;
  const NodeCostModel& costs;
  Requirement need;
  const Capacity* capacity = nullptr;  // null or source None: every type is offered
  int replicas = 1;                    // for pricing: at least one
  // Online serving asked for Any capacity and the policy does not allow
  // spot for it: only on-demand is priced.
  bool spotWithheld = false;
  // The labels select a capacity type: a Mixed placement can spread over it.
  bool capacityLabeled = true;
  unsigned neuronBlocked = 0;
  std::size_t bucket = 0;
  LatencyClass latency = LatencyClass::Relaxed;
  std::uint32_t tiers = ~0U;  // bit per Tier the workload allows (constraints.tiers)
  // The placement in force, whose pods are on its nodes already: the room
  // check passes it (fallback decides when they cannot be scheduled).
  int ownInstance = -1;
  CapacityType ownCapacity = CapacityType::OnDemand;
  // And the share of a GPU it holds there: only an option of the same kind
  // (whole devices, that MIG profile, time-sliced replicas) has its room.
  std::string_view ownMigProfile{};
  bool ownShared = false;
  const std::vector<OwnPod>* ownPods = nullptr;
  // The target's pods form groups (WorkloadIntent::groups): its replicas
  // for pricing a replica that spans nodes, and the nodes such a replica
  // has (the team's group size where it is more than one; 0: the fewest
  // that hold it).
  int groups = 0;
  int groupNodes = 0;
  // The nearest network domain the cluster's nodes carry a label of
  // (NodeLabels::networkDomainKey); empty without a cluster view.
  std::string networkDomainKey{};
};

// The replicas an option prices: groups where a replica spans nodes, the
// target's replicas (its pods) otherwise.
inline int replicasOf(const Fit& fit, const Request& request) {
  return fit.nodes > 1 ? std::max(request.groups, 1) : request.replicas;
}

// The replicas of this option a throughput target (a serving load's
// tokensPerSecond) takes: that over one replica's tokens a second; 0
// without a target.
int replicasToCarry(const Option& option, const Request& request);

// Whether the placement in force may stay, as the engine judges it; the
// explainer words the verdict, and never judges again.
enum class InForceVerdict : std::uint8_t {
  Keeps,
  NotInCatalog,
  Unpriced,            // no price at its capacity type any more
  OutsideConstraints,  // tiers, instanceTypes or excludedInstanceTypes rule it out
  CapacityNotAllowed,  // constraints.capacityType rules its capacity type out
  NeuronIneligible,    // the Neuron gate keeps its tier out
  SpotWithheld,        // online serving on spot, which the policy no longer allows
  NoLongerFits,        // the model no longer fits its devices within the fill limit
  OverBudget,          // it costs more than constraints.maxHourlyCost
};

// A placement in force, weighed as weigh() weighs a candidate.
struct InForceWeighing {
  InForceVerdict verdict = InForceVerdict::Keeps;
  int instance = -1;
  int count = 0;  // the devices it was placed with
  MemoryEstimate memory;
  std::optional<Request> request;  // set unless NotInCatalog or Unpriced
  std::optional<Option> option;    // priced as it runs; with `request`
  bool keeps() const { return verdict == InForceVerdict::Keeps; }
};

// One decision, weighed: what the explainer reads.
struct Weighing {
  MemoryEstimate memory;
  Request request;
  std::vector<std::size_t> matched;  // the rules that match, by index
  // The rule that places the workload (the workload's own tiers rule when
  // userTiers): null when nothing could, and then `evaluation` is the
  // union of every tried rule's candidates.
  const Rule* rule = nullptr;
  bool userTiers = false;  // the workload's own tiers were tried
  // The deciding rule's options; evaluation.ranked says which are best.
  Evaluation evaluation;
  bool placed() const { return rule != nullptr; }
  const Option& best() const { return evaluation.feasible[evaluation.ranked.front()]; }
};

}  // namespace gpuplacement::core
