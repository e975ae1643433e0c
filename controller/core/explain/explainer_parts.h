#pragma once

// What the two files of the explainer share (core/explain/explainer.cc: the choice
// and what lost to it; core/explain/explain_unplaced.cc: what ruled options out and
// what bound when nothing could be placed). Not for other callers: they use
// core/explain/explainer.h.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/decimal.h"
#include "core/explain/explainer.h"

namespace gpuplacement::core::explaining {

using base::formatCount;
using base::formatFixed;
using base::formatGiB;
using base::formatMoney;

// How many rejected options a decision reports, runners-up included.
inline constexpr std::size_t kMaxAlternatives = 6;

inline const char* capacityLabel(CapacityType capacity) {
  return capacity == CapacityType::Spot    ? "spot"
         : capacity == CapacityType::Mixed ? "half spot, half on-demand"
                                           : "on-demand";
}

inline std::string describeShape(const InstanceType& instance, const AcceleratorSpec* accelerator,
                                 int count) {
  if (!accelerator) {
    return instance.type + " (CPU)";
  }
  return instance.type + " (" + std::to_string(count) + "x " + accelerator->name + ")";
}

// The same for a fit, which may be a share of a GPU: "p4d.24xlarge (MIG
// 1g.5gb of an A100-40GB)", "g6.xlarge (1 of 4 time-sliced replicas of an L4)".
inline std::string describeShape(const InstanceType& instance, const AcceleratorSpec* accelerator,
                                 const Fit& fit) {
  if (accelerator && fit.migProfile >= 0) {
    return instance.type + " (MIG " +
           accelerator->migProfiles[static_cast<std::size_t>(fit.migProfile)].name + " of an " +
           accelerator->name + ")";
  }
  if (accelerator && fit.timeSlices > 0) {
    return instance.type + " (" + std::to_string(fit.devices) + " of " +
           std::to_string(fit.timeSlices) + " time-sliced replicas of an " + accelerator->name +
           ")";
  }
  return describeShape(instance, accelerator, fit.devices);
}

inline std::string milliseconds(double ms) {
  return formatFixed(ms, ms < 100 ? 1 : 0) + " ms";
}

inline bool containsTier(const std::vector<Tier>& tiers, Tier tier) {
  return tiers.empty() || std::find(tiers.begin(), tiers.end(), tier) != tiers.end();
}

inline bool containsString(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

inline unsigned tierBit(Tier tier) {
  return 1U << static_cast<unsigned>(tier);
}

// Writes a Decision's words from what the engine weighed: it reads the
// options, never weighs them again.
class Explainer {
 public:
  explicit Explainer(const PlacementEngine& engine)
      : engine_(engine),
        catalog_(&engine.catalog()),
        rules_(&engine.rules()),
        policy_(engine.policy()),
        knobs_(engine.knobs()),
        userTiersRule_(engine.userTiersRule()) {}

  Decision explain(const Weighing& weighing) const;
  void explainSlice(const Option& best, const Evaluation& evaluation, Decision& decision) const;
  Assessment assess(const WorkloadIntent& intent, const std::string& instanceType, int count,
                    const DeviceShare& share, CapacityType capacity,
                    const ClusterContext* cluster) const;

 private:
  std::string fillLimitText() const { return base::formatPercent(policy_.memoryFillLimit); }
  std::string whyNotMatched(const Rule& rule, const WorkloadIntent& intent, std::size_t bucket,
                            LatencyClass latency) const;
  std::string neuronIneligibility(Tier tier, const WorkloadIntent& intent) const;
  std::string userTiersNote(const WorkloadIntent& intent, std::size_t bucket,
                            LatencyClass latency) const;
  void choose(const Weighing& weighing, Decision& decision) const;
  Placement placementOf(const Option& option, const Request& request) const;
  std::string costNote(const Option& option, const Placement& placement) const;
  std::string clusterCostNote(const Option& option, const Placement& placement,
                              const std::string& shape, const std::string& price) const;
  void explainChoice(const Rule& rule, const Option& best, const Request& request,
                     Decision& decision) const;
  Alternative alternativeOf(const Option& option, std::string why) const;
  static std::optional<double> valueLoss(const Option& option, const Option& best);
  std::string lostBecause(const Option& option, const Option& best, const Request& request) const;
  void listRunnersUp(const Option& best, const Request& request, const Evaluation& evaluation,
                     Decision& decision) const;
  static std::string sizingBelowNeed(const Requirement& need, const Placement& placement);
  static std::string mixedSplitNote(const Placement& placement);
  static std::string idleUnit(const Placement& placement, int count);
  int slicesPerNode(const Option& option) const;  // a MIG option's slices on one node
  static std::string shareText(const Option& option);
  // One option per instance type, or with eachCapacityType one per type
  // and capacity type (a type full on-demand may be absent as spot).
  std::vector<const Unoffered*> bestUnoffered(const Evaluation& evaluation, const Option* best,
                                              std::size_t limit,
                                              bool eachCapacityType = false) const;
  void listUnoffered(const Option* best, const Request& request, const Evaluation& evaluation,
                     Decision& decision) const;
  void listRuledOut(const Request& request, const Evaluation& evaluation, Decision& decision) const;
  std::string precisionBlocked(const Request& request, const Evaluation& evaluation,
                               std::optional<Tier> tier = std::nullopt) const;
  std::string tooSmall(const Request& request, const Evaluation& overall) const;
  std::string acrossNodesText(const Placement& placement, const Request& request) const;
  void explainFailure(const Weighing& weighing, Decision& decision) const;
  std::string unofferedConstraint(const Request& request, const Evaluation& overall) const;
  // Why an unoffered option cannot be had: its nodes are full, its
  // NodePools at their limits; empty when nothing offers it at all.
  std::string shortOfRoom(const Unoffered& unoffered, const Request& request) const;
  // "g6.xlarge", or "g6.xlarge spot": an option as the cluster messages name it.
  std::string typeLabel(const Option& option) const;
  std::string bindingConstraint(const Request& request, const Evaluation& overall,
                                const std::string& rulesText) const;
  std::string whyNotKept(const InForceWeighing& weighing, const WorkloadIntent& intent) const;

  const PlacementEngine& engine_;
  const Catalog* catalog_;
  const RuleSet* rules_;
  const Policy& policy_;
  const RuleKnobs& knobs_;
  const Rule& userTiersRule_;
};

}  // namespace gpuplacement::core::explaining
