#include <algorithm>

#include "base/decimal.h"
#include "base/hash.h"
#include "core/plan/job_plan.h"
#include "core/plan/reverts.h"
#include "core/plan/status_draft.h"
#include "core/plan/workload_plan.h"

// Step two of a reconcile: what to record once the target writes are done.
namespace gpuplacement::core {
namespace {

using reconcile::joined;
using reconcile::StatusDraft;

void recordRollout(const TargetState& state, const std::string& name, const std::string& workload,
                   const Placement& wanted, const PendingPods& pending, StatusDraft& draft) {
  const std::string target = describeTarget(state.kind, name);
  if (traitsOf(state.kind).runsOnce) {
    const auto ready =
        jobReadiness(state, name, workload, wanted.instanceType, pending.count, pending.message);
    draft.set("Ready", ready.status, ready.reason, ready.message);
    if (ready.reason == "Unschedulable") {
      draft.report("Ready", ready.reason, "Warning", ready.message);
    }
    return;
  }
  if (state.onDelete && state.observedGeneration >= state.generation && state.revisionPending) {
    draft.set("Ready", "False", "OnDelete",
              target +
                  " has updateStrategy OnDelete: each pod takes the placement when it is "
                  "deleted (kubectl delete pod), not before");
  } else if (state.rolledOut()) {
    draft.set("Ready", "True", "RolloutComplete",
              std::to_string(state.availableReplicas) + " of " + std::to_string(state.replicas) +
                  " replicas updated and available");
  } else if (state.progressDeadlineExceeded) {
    const std::string message = "the rollout of " + target +
                                " exceeded its progress deadline; is there capacity for " +
                                wanted.instanceType + "?";
    draft.set("Ready", "False", "ProgressDeadlineExceeded", message);
    draft.report("Ready", "ProgressDeadlineExceeded", "Warning", message);
  } else if (pending.count > 0) {
    const std::string message =
        std::to_string(pending.count) + (pending.count == 1 ? " pod" : " pods") + " of " + target +
        " cannot be scheduled on " + wanted.instanceType + ": " + pending.message;
    draft.set("Ready", "False", "Unschedulable", message);
    draft.report("Ready", "Unschedulable", "Warning", message);
  } else {
    // No replica counts: each step of the rollout would be a status write
    // (three more per placement on a real cluster); the target's own
    // status has them.
    draft.set("Ready", "False", "RolloutInProgress",
              target + " is rolling out onto " + wanted.instanceType +
                  "; its status shows the replicas updated and available");
  }
}

// The target carries the placement: what the status and Events say.
void recordApplied(const WorkloadInput& input, const TargetOutcome& outcome, StatusDraft& draft,
                   WorkloadPlan& plan, WorkloadRecord& record) {
  const WorkloadObject& workload = *input.workload;
  if (input.useFinalizer && !workload.hasFinalizer()) {
    // Right after the first patch, not before it: the placement reaches the
    // target one round trip sooner, and a deletion in between is caught
    // by the ownership record.
    record.finalizers = workload.finalizers;
    record.finalizers->push_back(kFinalizer);
  }
  const TargetState& state = outcome.state;
  const TargetRef& target = plan.write->target;
  const Placement& wanted = plan.wanted;
  const Gate& gate = plan.gate;
  auto& applied = plan.view.applied;
  if (gate.verdict == GateVerdict::Apply || !applied) {
    record.placedNow = wanted;
    if (gate.replacement && applied) {
      plan.view.lastReplacement =
          ReplacementRecord{applied->instanceType, wanted.instanceType,
                            base::decimalString(gate.monthlySaving, 2), draft.now(), gate.message};
      record.monthlySaving = gate.monthlySaving;
      plan.events.push_back(
          {"Normal", "Replaced",
           "moved from " + applied->instanceType + " to " + describePlacement(wanted) +
               (gate.monthlySaving >= 0
                    ? ", saving " + base::formatMoney(gate.monthlySaving)
                    : ", costing " + base::formatMoney(-gate.monthlySaving) + " more") +
               "/month: " + gate.message});
    } else {
      plan.events.push_back({"Normal", "Placed",
                             "placed on " + describePlacement(wanted) + " at " +
                                 base::formatMoney(wanted.hourlyCost) + "/h (" +
                                 base::formatMoney(wanted.totalMonthlyCost) +
                                 "/month for all replicas): " + plan.decision->reason});
    }
    AppliedRecord record;
    record.targetKind = target.kind;
    record.targetName = target.name;
    record.targetUid = state.uid;
    record.instanceType = wanted.instanceType;
    record.accelerator = wanted.accelerator;
    record.tier = wanted.tier;
    record.acceleratorCount = wanted.acceleratorCount;
    record.migProfile = wanted.migProfile;
    record.timeSlices = wanted.timeSlices;
    record.claim = wanted.claim;
    record.capacityType = wanted.capacityType;
    record.targetGeneration = state.generation;
    record.specGeneration = workload.generation;
    record.time = draft.now();
    record.replacement = gate.replacement;
    applied = std::move(record);
  } else if (outcome.kind == TargetOutcome::Kind::Written) {
    applied->targetGeneration = state.generation;
    auto& reverts = plan.view.reverts;
    if (reverts && !outcome.templateWriter.empty()) {
      reverts->fieldManager = outcome.templateWriter;  // the answer names who wrote last
    }
    const std::string by = reverts && !reverts->fieldManager.empty()
                               ? " (last written by " + reverts->fieldManager + ")"
                               : "";
    const std::string count = reverts ? "; taken back " + std::to_string(reverts->count) + " of " +
                                            std::to_string(kStopAfterReverts) +
                                            " times before the operator stops"
                                      : "";
    if (!plan.write->patch.resumesOnly) {
      plan.events.push_back({"Normal", "Restored",
                             "put back " + joined(plan.write->patch.fields) + " of " +
                                 describeTarget(target) + by + count});
    }
  }
  applied->specGeneration = workload.generation;  // a new spec may want the same placement
  plan.view.placement = wanted;
  draft.set("Applied", "True", "Applied",
            describeTarget(target) + " carries the placement (generation " +
                std::to_string(applied->targetGeneration) + ")" +
                (!plan.write->patch.patch || !plan.write->patchRequest.start ||
                         outcome.kind != TargetOutcome::Kind::Written || state.job.suspended
                     ? ""
                 : plan.write->patch.resumesOnly
                     ? " and was resumed by a write of its own, after the one that placed it "
                       "(its controller takes no change of the placed fields in the write that "
                       "resumes it)"
                     : " and was resumed in the same write"));
  recordRollout(state, target.name, input.name, wanted, input.pending, draft);
  record.releaseSlot = state.rolledOut() || state.progressDeadlineExceeded;
}

// What the write to the target came to.
void recordOutcome(const WorkloadInput& input, const TargetOutcome& outcome, StatusDraft& draft,
                   WorkloadPlan& plan, WorkloadRecord& record) {
  const TargetRef& target = plan.write->target;
  switch (outcome.kind) {
    case TargetOutcome::Kind::NotFound:
      plan.view.applied.reset();
      plan.view.placement = plan.decision->placement;
      draft.notApplied("TargetNotFound", describeTarget(target) + " does not exist in " + input.ns);
      break;
    case TargetOutcome::Kind::JobResourcesImmutable: {
      plan.view.applied.reset();
      plan.view.placement = plan.decision->placement;
      draft.notApplied("JobResourcesImmutable",
                       resourcesImmutableMessage(
                           target.name, input.serverVersion,
                           deviceContainer(outcome.state, plan.write->patchRequest.containers),
                           plan.write->scheduling, outcome.error));
      break;
    }
    case TargetOutcome::Kind::Blocked:
      // The team's own fields (or another GpuWorkload) stand in the way; the
      // target is not touched until they are resolved.
      plan.view.placement = plan.decision->placement;
      draft.notApplied(outcome.conflicts.empty() ? "InvalidTarget" : "Conflict",
                       outcome.conflicts.empty() ? outcome.error : joined(outcome.conflicts));
      break;
    case TargetOutcome::Kind::Forbidden:
      // RBAC out of date: nothing was written; the caller retries.
      plan.view.placement = plan.decision->placement;
      draft.notApplied("Forbidden", outcome.error);
      break;
    case TargetOutcome::Kind::Written:
    case TargetOutcome::Kind::Unchanged:
      recordApplied(input, outcome, draft, plan, record);
      break;
  }
  if (plan.rollout == RolloutStep::Reserve && outcome.kind != TargetOutcome::Kind::Written) {
    record.releaseSlot = true;  // the move did not start
  }
}

// What runs now, for the cost gauges: a Job holds nodes only from its
// start to its end (not while it waits suspended or queued, nor once gone).
bool costsNow(const WorkloadInput& input, const WorkloadPlan& plan) {
  if (!plan.view.applied || !plan.view.placement) {
    return false;
  }
  if (!traitsOf(plan.view.applied->targetKind).runsOnce) {
    return true;
  }
  const TargetState* job = input.target;
  return job && traitsOf(job->kind).runsOnce && job->job.started() && !job->job.suspended &&
         job->job.end == JobProgress::End::Running;
}

}  // namespace

std::optional<TargetOutcome> outcomeWithoutWrite(const TargetWrite& write,
                                                 const TargetState& state) {
  if (write.patch.blocked()) {
    return TargetOutcome{TargetOutcome::Kind::Blocked, state, write.patch.conflicts,
                         write.patch.error};
  }
  if (!write.patch.patch) {
    return TargetOutcome{TargetOutcome::Kind::Unchanged, state, {}, ""};
  }
  return std::nullopt;
}

WorkloadRecord recordWorkload(const WorkloadInput& input, WorkloadPlan plan,
                              const TargetOutcome* outcome) {
  WorkloadRecord record;
  if (!input.workload) {
    return record;  // the orphans' fields are taken back; nothing else is left
  }
  const WorkloadObject& workload = *input.workload;
  if (plan.deletion) {
    if (workload.hasFinalizer()) {
      record.finalizers = workload.finalizers;
      std::erase(*record.finalizers, std::string(kFinalizer));
    }
    return record;
  }
  if (!input.useFinalizer && workload.hasFinalizer()) {
    record.finalizers = workload.finalizers;  // held by a run with --finalizer
    std::erase(*record.finalizers, std::string(kFinalizer));
  }
  StatusDraft draft(workload, input, plan);
  if (plan.write && outcome) {
    recordOutcome(input, *outcome, draft, plan, record);
  }
  plan.view.conditions = plan.conditions;
  if (costsNow(input, plan)) {
    record.inForce = plan.view.placement;
  }
  plan.view.decision = plan.decision ? &*plan.decision : nullptr;
  if (plan.view.placement && input.target && workload.spec) {
    plan.view.throughput =
        adviseThroughput(*plan.view.placement, workload.spec->intent.serving, input.target->kind,
                         workload.spec->targetRef.name, input.target->replicas, input.autoscaler);
    plan.view.podSets = podSetCosts(
        *input.target, workload.spec->podSets,
        // A pod of a group across nodes takes one of its nodes.
        plan.view.placement->hourlyCost / std::max(plan.view.placement->nodesPerReplica, 1));
  }
  auto status = statusToJson(plan.view);
  if (const auto digest = statusDigest(status); digest != workload.statusHash) {
    record.status = std::move(status);
    record.statusDigest = digest;
  }
  record.events = std::move(plan.events);
  record.next = plan.next;
  return record;
}

bool WorkloadObject::hasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

std::uint64_t statusDigest(const nlohmann::json& status) {
  return status.is_null() ? 0 : base::jsonDigest(status);
}

std::string describePlacement(const Placement& placement) {
  return placement.instanceType +
         (placement.accelerator.empty() ? " (CPU)"
          : !placement.migProfile.empty()
              ? " (MIG " + placement.migProfile + " of an " + placement.accelerator + ")"
          : placement.timeSlices > 0
              ? " (" + std::to_string(placement.acceleratorCount) + " of " +
                    std::to_string(placement.timeSlices) + " time-sliced replicas of an " +
                    placement.accelerator + ")"
              : " (" + std::to_string(placement.acceleratorCount) + "x " + placement.accelerator +
                    ")") +
         (placement.capacityType == CapacityType::Spot    ? " spot"
          : placement.capacityType == CapacityType::Mixed ? " spot and on-demand"
                                                          : "");
}

}  // namespace gpuplacement::core
