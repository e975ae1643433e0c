#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/time_format.h"
#include "core/decide/engine.h"
#include "core/explain/throughput_advice.h"
#include "core/kinds/target.h"
#include "core/plan/fallback.h"

namespace gpuplacement::core {

// metav1.Condition.
struct Condition {
  std::string type;
  std::string status;  // True, False, Unknown
  std::string reason;
  std::string message;
  std::string lastTransitionTime;
  std::int64_t observedGeneration = 0;

  bool operator==(const Condition&) const = default;
};

// Replaces or adds a condition; lastTransitionTime moves only when the
// status changes (apimachinery's SetStatusCondition).
void setCondition(std::vector<Condition>& conditions, Condition next, const std::string& now);
const Condition* findCondition(const std::vector<Condition>& conditions, const std::string& type);

// status.applied: what the operator last wrote to the target.
struct AppliedRecord {
  TargetKind targetKind = TargetKind::Deployment;
  std::string targetName;
  // The target object's uid: a Job deleted and created again under the
  // same name is another Job, not the one placed. Empty in statuses
  // written before it was recorded.
  std::string targetUid;
  std::string instanceType;
  std::string accelerator;
  Tier tier = Tier::CPU;
  int acceleratorCount = 0;
  CapacityType capacityType = CapacityType::OnDemand;
  std::int64_t targetGeneration = 0;  // the generation the patch produced
  std::int64_t specGeneration = 0;    // the GpuWorkload generation it was decided for
  std::string time;
  bool replacement = false;  // moved by a price or rule change, not by the spec
  std::string migProfile{};  // a MIG slice per replica ("1g.10gb"); empty: whole devices
  int timeSlices = 0;        // replicas (acceleratorCount) of a GPU time-sliced this many ways
  bool claim = false;        // asked for by a ResourceClaimTemplate (DRA)

  DeviceShare share() const { return {migProfile, timeSlices}; }

  bool operator==(const AppliedRecord&) const = default;
};

// status.lastReplacement: the last move a price or rule change caused.
struct ReplacementRecord {
  std::string from;
  std::string to;
  std::string monthlySaving;  // decimal USD for all replicas; negative when the move costs more
  std::string time;
  std::string reason;

  bool operator==(const ReplacementRecord&) const = default;
};

// status.reverts: someone keeps taking back the fields the operator wrote
// to the target (a GitOps tool re-applying, another controller
// replacing the pod template). core/plan/reverts.h decides what it does.
struct RevertRecord {
  int count = 0;                    // takings-back in this series
  std::string since;                // the first of the series
  std::string last;                 // the latest
  std::vector<std::string> fields;  // what was taken, the last time
  std::string fieldManager;         // the last other writer of the template, when known
  // The target's generation when the operator stopped putting the
  // fields back; 0 while it still does.
  std::int64_t stoppedAtGeneration = 0;
  // Its pod template's digest then: the operator tries again once the
  // template changes (a new commit, a rollout restart), not when the same
  // manifest is applied again.
  std::uint64_t stoppedAtTemplate = 0;

  bool stopped() const { return stoppedAtGeneration != 0; }
  bool operator==(const RevertRecord&) const = default;
};

// status.run: a Job's run once it has ended, priced at the placement it
// ran on (what the nodes its pods held cost for as long as it ran).
struct JobRunRecord {
  std::string job;
  std::string startTime;
  std::string endTime;
  std::int64_t durationSeconds = 0;
  std::string outcome;  // Complete or Failed
  std::string instanceType;
  CapacityType capacityType = CapacityType::OnDemand;
  int pods = 1;            // run at once (the Job's parallelism)
  std::string hourlyCost;  // decimal USD an hour for all of them
  std::string cost;        // decimal USD for the run

  bool operator==(const JobRunRecord&) const = default;
};

// The parts of a GpuWorkload's status the controller reads back.
struct WorkloadStatus {
  std::int64_t observedGeneration = 0;
  std::optional<AppliedRecord> applied;
  std::optional<ReplacementRecord> lastReplacement;
  std::optional<RevertRecord> reverts;
  std::vector<UnavailableType> unavailable;
  std::optional<JobRunRecord> run;
  std::vector<Condition> conditions;

  bool operator==(const WorkloadStatus&) const = default;
};

WorkloadStatus workloadStatusFromJson(const nlohmann::json& status);

// One pod set a placement runs on, for a kind of several (a Ray cluster's
// worker groups, a LeaderWorkerSet's leader and workers): its pods and
// what they cost an hour at the placement's price per replica.
struct PodSetCost {
  std::string name;
  std::string role;
  std::int32_t pods = 0;
  double hourlyCost = 0;

  bool operator==(const PodSetCost&) const = default;
};

// For a target of several pod sets, each placed one with its pods priced
// at `hourlyCostPerReplica` (status.podSets); empty for a kind of one.
std::vector<PodSetCost> podSetCosts(const TargetState& target,
                                    const std::vector<std::string>& names,
                                    double hourlyCostPerReplica);

// Everything that goes into a status document.
struct StatusView {
  std::int64_t observedGeneration = 0;
  std::string mode;  // Apply or Recommend
  // The placement in force (applied) or, in Recommend mode, recommended.
  std::optional<Placement> placement;
  // A better placement that is held back, and why.
  std::optional<Placement> recommendation;
  std::string recommendationNote;
  const Decision* decision = nullptr;  // rule, reason, alternatives, memory
  std::optional<AppliedRecord> applied;
  std::optional<ReplacementRecord> lastReplacement;
  std::optional<RevertRecord> reverts;
  std::vector<UnavailableType> unavailable;  // left for lack of capacity
  std::optional<JobRunRecord> run;
  // Whether the target's replicas carry the serving load's throughput target.
  std::optional<ThroughputAdvice> throughput;
  // With a placement, for a target of several pod sets: each placed one.
  std::vector<PodSetCost> podSets;
  std::string policyName;
  std::int64_t policyGeneration = 0;  // 0: the built-in policy
  std::vector<Condition> conditions;
};

nlohmann::json statusToJson(const StatusView& view);

nlohmann::json conditionsToJson(const std::vector<Condition>& conditions);

// A PlacementPolicy's status: whether this generation is accepted (and,
// when it is not, which version stays in force) and how many GpuWorkloads
// use it.
struct PolicyStatusInput {
  std::int64_t generation = 0;
  const Error* invalid = nullptr;  // why this generation is rejected; null when valid
  std::optional<std::int64_t> generationInForce;
  std::size_t workloads = 0;
  std::vector<Condition> conditions;  // as stored, for their transition times
  Timestamp now;
  // What the version in force sees of the cluster; null: nothing to report.
  const ClusterView* cluster = nullptr;
  // Whether Karpenter weighs the policy's prices (core/plan/price_sharing.h);
  // nullopt: nothing to report.
  std::optional<Condition> pricesShared;
};

// Adds status.capacity, status.nodeLabels and the CapacityKnown condition
// (False, reason NodesUnreadable, when the nodes cannot be read and the
// policy places as under source None).
nlohmann::json policyStatus(const PolicyStatusInput& input);

}  // namespace gpuplacement::core
