#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.h"
#include "core/catalog/rules.h"
#include "core/catalog/types.h"
#include "core/decide/cluster_cost.h"
#include "core/decide/cost_model.h"
#include "core/decide/decision.h"
#include "core/decide/fit.h"
#include "core/decide/weighing.h"
#include "core/intent/policy.h"
#include "core/intent/workload.h"

namespace gpuplacement::core {

// Chooses placements from a catalog, a rule set and a policy: weighs every
// candidate of the matching rules, prices and ranks them, and says which
// rule decided (core/decide/weighing.h). Pure and deterministic: the same intent
// always gives the same weighing. Built once per policy version; weigh()
// is const and allocation-light. The words are core/explain/explainer.h's, which
// reads what the engine weighed and which the engine never calls.
class PlacementEngine {
 public:
  static Result<std::shared_ptr<const PlacementEngine>> create(
      std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules, Policy policy);

  // Priced by `costs`; `view` (may be null) is the cluster's: a type no node
  // carries and no NodePool may launch is no candidate, nor one whose nodes
  // lack room for every replica when no NodePool may add one (the
  // placement in force excepted: its pods are there). `intent`, `costs`
  // and `cluster` (may be null) must outlive the weighing.
  Weighing weigh(const WorkloadIntent& intent, const NodeCostModel& costs,
                 const ClusterContext* cluster) const;
  // Whole nodes with the cluster's idle devices when the view has capacity
  // and the policy prices whole nodes (kept in `storage`); the policy's
  // model otherwise.
  const NodeCostModel& costsFor(const ClusterContext* cluster,
                                std::optional<ClusterCost>& storage) const;
  // The placement in force (`count` devices of `instanceType` at
  // `capacity`) weighed as weigh() weighs a candidate: today's prices,
  // policy and intent say whether it may stay. `costStorage` holds the
  // cluster's cost model (costsFor); it and `intent` must outlive the result.
  InForceWeighing weighInForce(const WorkloadIntent& intent, const std::string& instanceType,
                               int count, const DeviceShare& share, CapacityType capacity,
                               const ClusterContext* cluster,
                               std::optional<ClusterCost>& costStorage) const;
  // Devices paid for and unused under `option` (whole-node pricing).
  int idleDevicesOf(const Option& option, const Request& request) const;

  const Catalog& catalog() const { return *catalog_; }
  const RuleSet& rules() const { return *rules_; }
  const Policy& policy() const { return policy_; }
  const RuleKnobs& knobs() const { return knobs_; }
  std::optional<double> price(int instance, CapacityType capacity) const;
  bool ruleDisabled(std::size_t rule) const { return disabledRules_[rule]; }
  // Places on the tiers a workload names when no matching rule offers them.
  const Rule& userTiersRule() const { return userTiersRule_; }
  // Bit per accelerator of a tier (catalog index).
  std::uint64_t acceleratorsOf(Tier tier) const {
    return acceleratorsOfTier_[static_cast<std::size_t>(tier)];
  }

 private:
  PlacementEngine(std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules,
                  Policy policy);

  // One decision's inputs, worked out once.
  Request requestFor(const WorkloadIntent& intent, const MemoryEstimate& memory,
                     const NodeCostModel& costs, const ClusterView* view) const;
  // A placement already in force, priced as weigh() would price it: the
  // fit of its device count or, when the model no longer fits (fit.misfit
  // says why), the shape it runs as.
  Option inForce(int instance, int count, int migProfile, int timeSlices, CapacityType capacity,
                 const Request& request) const;
  // The fewest ways the cluster's nodes of the type time-slice their GPU,
  // over the capacity types; 0: none does.
  int timeSlicesOffered(int index, const Request& request) const;
  // The MIG profiles the cluster's nodes of the type advertise, a bit per
  // index into its accelerator's (none unless slices are allowed): slices
  // are placed only where a node's GPUs are cut so, never on a node to be
  // launched.
  unsigned slicesOffered(int index, const Request& request) const;
  // The MIG profile of a slice option ("1g.10gb"); empty for whole devices.
  std::string_view sliceName(const Option& option) const;
  // What one replica of `option` asks of a node.
  ReplicaRequests replicaRequests(const Option& option, const Request& request) const;
  // The replicas `option`'s part at `capacity` (`replicas` of them) needs
  // room for on the nodes there are, and the workload's own pods on them,
  // whose room is given back.
  int replicasNeeded(const Option& option, CapacityType capacity, int replicas,
                     const Request& request, std::vector<const OwnPod*>& ownOnType) const;
  // Whether the workload may take the type's reserved nodes.
  bool reservedOffered(int index, const Request& request) const;
  // The devices a replica of this shape is asked for with are those the
  // intent's fixedDevices names (always, where it names none).
  bool keepsFixedDevices(int index, const Fit& fit, CapacityType capacity,
                         const Request& request) const;
  // Why the type's reserved nodes are passed over (they may end before the
  // workload's deadline, or be taken back); nullopt when they are not.
  std::optional<std::string> reservationPassedOver(int index, const Request& request) const;
  // Why the cluster cannot run `option`, or nullopt when it can.
  std::optional<Shortfall> shortfallOf(const Option& option, const Request& request,
                                       const Capacity& capacity) const;
  bool matches(const Rule& rule, const WorkloadIntent& intent, std::size_t bucket,
               LatencyClass latency) const;
  struct CandidateMask;
  bool isCandidate(const Rule& rule, const InstanceType& instance, const Request& request) const;
  bool withinMask(const CandidateMask& mask, const InstanceType& instance) const;
  bool allowedBy(const Request& request, const InstanceType& instance) const;
  const CandidateMask& maskOf(const Rule& rule) const;
  const std::vector<int>& candidatesOf(const Rule& rule) const;
  std::optional<std::size_t> indexOf(const Rule& rule) const;
  void evaluateRule(const Rule& rule, const Request& request, Evaluation& evaluation) const;
  void evaluateInstance(int index, const Request& request, Evaluation& evaluation) const;
  void addOptions(int index, const Fit& fit, const Request& request, Evaluation& evaluation) const;
  void evaluateAcrossNodes(int index, const Request& request, Evaluation& evaluation) const;
  // Quotes `option` (priced at nodeHourly): the cost model's, in two parts
  // when Mixed, whose spot node price it fills in.
  void quote(Option& option, const Request& request) const;
  void rankOf(Option& option, const Request& request) const;
  enum class RuleOutcome : std::uint8_t { None, Meets, Misses };
  RuleOutcome tryRule(const Rule& rule, const Request& request, Evaluation& evaluation) const;
  void rank(Evaluation& evaluation) const;
  bool userTiersUnoffered(const WorkloadIntent& intent,
                          const std::vector<std::size_t>& matched) const;
  void weighUnplaced(Weighing& weighing) const;

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
  std::vector<std::vector<int>> candidatesOf_;  // per rule: the instance types its mask admits
  std::vector<int> everyInstance_;              // the workload's own tiers' candidates
  Rule userTiersRule_;
  std::array<std::uint64_t, 4> acceleratorsOfTier_{};  // bit per accelerator, by Tier
  // The most memory one Inferentia2 node offers a replica, under the
  // policy's fill limit: Trainium serves only what it does not hold.
  double inferentiaHoldsGiB_ = 0;
  LabelScheme defaultScheme_ = LabelScheme::InstanceType;  // without a cluster view
  bool defaultCapacityLabeled_ = true;                     // without a cluster view
};

// Which size bucket (by name) a parameter count falls in.
std::size_t sizeBucketIndex(const RuleKnobs& knobs, std::uint64_t parameters);
LatencyClass latencyClassOf(const RuleKnobs& knobs, std::optional<double> latencyTargetMs);

}  // namespace gpuplacement::core
