#pragma once

// What the two steps of a reconcile (core/plan/workload_plan.cc plans,
// core/plan/workload_record.cc records) share: the conditions and Events as they
// are set, and the placement in force described. Internal to core/.
#include <chrono>
#include <string>
#include <vector>

#include "base/decimal.h"
#include "core/explain/explainer.h"
#include "core/plan/workload_plan.h"

namespace gpuplacement::core::reconcile {

inline std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : "; ") + item;
  }
  return text;
}

// The next reconcile at the earlier of what is planned and `after`.
inline void wakeAfter(NextReconcile& next, std::chrono::seconds after) {
  if (next.kind != NextReconcile::Kind::After || after < next.after) {
    next = {NextReconcile::Kind::After, after, ""};
  }
}

// Conditions and Events as a reconcile sets them.
class StatusDraft {
 public:
  StatusDraft(const WorkloadObject& workload, const WorkloadInput& input, WorkloadPlan& plan)
      : workload_(workload), now_(base::formatRfc3339(input.now)), plan_(plan) {}

  void set(const std::string& type, const std::string& status, const std::string& reason,
           const std::string& message) {
    setCondition(plan_.conditions, {type, status, reason, message, "", workload_.generation}, now_);
  }
  // An Event for a condition that has just become this reason: not again
  // on every resync.
  void report(const std::string& type, const std::string& reason, const std::string& eventType,
              const std::string& message) {
    const auto* before = findCondition(workload_.status.conditions, type);
    if (!before || before->reason != reason) {
      plan_.events.push_back({eventType, reason, message});
    }
  }
  // Placed=False and Ready=False for one reason, reported once.
  void notPlaced(const std::string& reason, const std::string& message,
                 const std::string& eventMessage) {
    set("Placed", "False", reason, message);
    set("Ready", "False", reason, message);
    report("Placed", reason, "Warning", eventMessage);
  }
  // Applied=False and Ready=False for one reason, reported once.
  void notApplied(const std::string& reason, const std::string& message) {
    set("Applied", "False", reason, message);
    set("Ready", "False", reason, message);
    report("Applied", reason, "Warning", message);
  }
  const std::string& now() const { return now_; }

 private:
  const WorkloadObject& workload_;
  std::string now_;
  WorkloadPlan& plan_;
};

// The placement in force, described with today's prices.
inline Placement placementInForce(const AppliedRecord& applied, const Assessment& current,
                                  const Decision& decision, const PlacementEngine& engine,
                                  const WorkloadIntent& intent) {
  const int replicas = intent.replicas;
  Placement placement;
  placement.tier = applied.tier;
  placement.accelerator = applied.accelerator;
  placement.instanceType = applied.instanceType;
  placement.acceleratorCount = applied.acceleratorCount;
  // The share it holds and how it asks for it: the template keeps them.
  placement.migProfile = applied.migProfile;
  placement.timeSlices = applied.timeSlices;
  placement.claim = applied.claim;
  placement.claimByResource = applied.claim && !intent.claimsWritable;
  placement.capacityType = applied.capacityType;
  if (const auto* instance = engine.catalog().find(applied.instanceType)) {
    placement.acceleratorsPerInstance = instance->acceleratorCount;
    if (const auto* accelerator = engine.catalog().acceleratorOf(*instance)) {
      placement.availableMemoryGiB = accelerator->memoryGiB * applied.acceleratorCount;
    }
  }
  const double hoursPerMonth = engine.policy().hoursPerMonth;
  placement.hourlyCost = current.hourlyCost;
  placement.clusterHourlyCost = current.clusterHourlyCost;
  placement.monthlyCost = current.hourlyCost * hoursPerMonth;
  placement.replicas = replicas;
  placement.totalHourlyCost = current.hourlyCost * replicas;
  placement.totalMonthlyCost = placement.monthlyCost * replicas;
  placement.requiredMemoryGiB = decision.memory.requiredGiB;
  placement.performance = current.performance;
  if (current.placement) {
    // What each replica is sized to ask of its node, as the engine sizes it
    // today: the pod template keeps carrying it while the placement holds.
    placement.cpuRequest = current.placement->cpuRequest;
    placement.availableMemoryGiB = current.placement->availableMemoryGiB;
    placement.memoryRequestGiB = current.placement->memoryRequestGiB;
    // And the nodes behind its price, so no figure reads as zero.
    const Placement& priced = *current.placement;
    placement.costModel = priced.costModel;
    placement.nodeHourlyCost = priced.nodeHourlyCost;
    placement.nodes = priced.nodes;
    placement.replicasPerNode = priced.replicasPerNode;
    placement.idleAccelerators = priced.idleAccelerators;
    placement.costNote = priced.costNote;
    placement.onDemandReplicas = priced.onDemandReplicas;
    placement.spotReplicas = priced.spotReplicas;
    placement.spotNodeHourlyCost = priced.spotNodeHourlyCost;
  }
  return placement;
}

inline Assessment assessApplied(const PlacementEngine& engine, const WorkloadIntent& intent,
                                const AppliedRecord& applied, const ClusterContext& cluster) {
  return assess(engine, intent, applied.instanceType, applied.acceleratorCount, applied.share(),
                applied.capacityType, &cluster);
}

// The cluster as this workload's decision sees it: its own scheduled
// replicas' devices count as idle to it.

}  // namespace gpuplacement::core::reconcile
