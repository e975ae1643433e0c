#include "core/plan/job_plan.h"

#include <chrono>
#include <cstdio>

#include "base/decimal.h"
#include "base/enum_names.h"
#include "core/plan/job_steps.h"

namespace gpuplacement::core {

JobStep jobStep(const TargetState& job, bool placedHere) {
  if (job.templateMutable()) {
    return JobStep::Place;
  }
  return placedHere ? JobStep::Hold : JobStep::StartedUnplaced;
}

std::string heldJobNote(const TargetState& job, const std::string& name) {
  const std::string kind(base::nameOf(job.kind));
  return kind + " " + name + " started" +
         (job.job.startTime.empty() ? std::string() : " at " + job.job.startTime) +
         " on the placement in force: a running " + kind + " is never moved; its next run (a new " +
         kind + ") gets this placement";
}

std::string startedUnplacedMessage(TargetKind kind, const std::string& job,
                                   const std::string& workload, bool queued) {
  const std::string name(base::nameOf(kind));
  if (queued) {
    return name + " " + job +
           " was started by its queue (Kueue, or the controller its spec.managedBy names) before "
           "the operator placed it, and a started " +
           name + "'s pod template cannot change: create the GpuWorkload before the " + name +
           ", so that it is placed while it waits to be admitted";
  }
  return name + " " + job + " started before the operator placed it, and a started " + name +
         "'s pod template cannot change. Create " + name + "s suspended: label the " + name +
         " gpuplacement.io/workload=" + workload +
         " (the chart's admission policy then creates it with spec.suspend: true) or set "
         "spec.suspend: true yourself; the operator places it and resumes it in one write";
}

namespace {

// "nvidia.com/gpu=1, memory=16Gi (request only)": the resources a
// placement writes.
std::string resourcesNeeded(const Scheduling& scheduling) {
  std::string needs;
  for (const auto& [name, value] : scheduling.resources) {
    needs += (needs.empty() ? "" : ", ") + name + "=" + value;
  }
  for (const auto& [name, value] : scheduling.requestsOnly) {
    needs += (needs.empty() ? "" : ", ") + name + "=" + value + " (request only)";
  }
  return needs;
}

}  // namespace

std::string resourcesImmutableMessage(const std::string& job, const std::string& serverVersion,
                                      const std::string& container, const Scheduling& scheduling,
                                      const std::string& serverWords) {
  const auto needs = resourcesNeeded(scheduling);
  // A 1.36 server that refuses has the gate turned off; an older one has
  // no such gate on by default.
  unsigned major = 0;
  unsigned minor = 0;
  const bool gateOff = std::sscanf(serverVersion.c_str(), "v%u.%u", &major, &minor) == 2 &&
                       (major > 1 || minor >= 36);
  return "the API server (" +
         (serverVersion.empty() ? std::string("version unknown") : serverVersion) +
         ") does not let a suspended Job's pod resources change (KEP-5440, on by default from "
         "Kubernetes 1.36), and the placement needs spec.template.spec.containers[" +
         container + "].resources " + needs + " (requests and limits unless said), which Job " +
         job +
         " does not ask for. The Job stays suspended and unchanged: set these in its manifest "
         "and create it again, or " +
         (gateOff ? std::string("turn on the API server's feature gate "
                                "MutablePodResourcesForSuspendedJobs")
                  : std::string("upgrade the control plane to 1.36")) +
         (serverWords.empty() ? std::string() : " (the server said: " + serverWords + ")");
}

std::string resourcesFixedMessage(TargetKind kind, const std::string& name,
                                  const std::vector<std::string>& podSets,
                                  const std::string& container, const Scheduling& scheduling) {
  std::string sets;
  for (std::size_t i = 0; i < podSets.size(); ++i) {
    sets += (i == 0 ? "" : i + 1 == podSets.size() ? " and " : ", ") + podSets[i];
  }
  const auto target = describeTarget(kind, name);
  // A kind whose pods' resources the team sets elsewhere than a template
  // (a TrainJob's spec.trainer.resourcesPerNode) is told that field.
  const auto field = traitsOf(kind).resourcesField;
  const std::string where =
      field.empty() ? "containers[" + container + "].resources " + resourcesNeeded(scheduling) +
                          " (requests and limits unless said) in the pod template" +
                          (podSets.size() == 1 ? " of " : "s of ") + sets
                    : std::string(field) + " " + resourcesNeeded(scheduling) +
                          " (requests and limits unless said) for " + sets;
  return "the controller of " + target +
         " keeps its pods' resources as they were created (while it waits suspended, only their "
         "labels, annotations, nodeSelector, tolerations and scheduling gates may change), and "
         "the placement needs " +
         where + ", which " + target +
         " does not ask for. It stays suspended and unchanged: set these in its manifest and "
         "create it again";
}

Readiness jobReadiness(const TargetState& job, const std::string& name, const std::string& workload,
                       const std::string& instanceType, int pendingPods,
                       const std::string& pendingMessage) {
  const auto& progress = job.job;
  const std::string kind(base::nameOf(job.kind));
  switch (progress.end) {
    case JobProgress::End::Complete:
      return {"True", "JobComplete", kind + " " + name + " completed on " + instanceType};
    case JobProgress::End::Failed:
      return {"False", "JobFailed",
              kind + " " + name + " failed on " + instanceType +
                  (progress.endReason.empty() ? std::string() : ": " + progress.endReason)};
    case JobProgress::End::Running:
      break;
  }
  if (pendingPods > 0) {
    return {"False", "Unschedulable",
            std::to_string(pendingPods) + (pendingPods == 1 ? " pod" : " pods") + " of " + kind +
                " " + name + " cannot be scheduled on " + instanceType + ": " + pendingMessage +
                (progress.started()
                     ? "; a started " + kind +
                           " is not moved: to place it anew, delete it and create it again, "
                           "suspended"
                     : "")};
  }
  if (progress.suspended) {
    std::string why;
    if (progress.started()) {
      why = "it was suspended after it started, and goes on when it is resumed";
    } else if (progress.queuedElsewhere) {
      why = "its queue (spec.managedBy or Kueue) starts it";
    } else if (progress.waitsFor == workload) {
      why = "the operator resumes it";
    } else {
      why = "it is not labelled " + std::string(kWorkloadLabel) +
            " for this GpuWorkload, so whoever suspended it resumes it";
    }
    return {"False", "JobSuspended",
            kind + " " + name + " carries the placement and is suspended: " + why};
  }
  if (progress.active > 0) {
    // No pod count: each change of it would be one more status write.
    return {"True", "JobRunning", kind + " " + name + " runs on " + instanceType};
  }
  return {"False", "JobStarting", kind + " " + name + " is starting on " + instanceType};
}

std::optional<JobRunRecord> jobRun(const TargetState& job, const std::string& name,
                                   const Placement& inForce) {
  const auto& progress = job.job;
  if (progress.end == JobProgress::End::Running || progress.startTime.empty()) {
    return std::nullopt;
  }
  const auto start = base::parseRfc3339(progress.startTime);
  const auto end = base::parseRfc3339(progress.endTime);
  if (!start || !end || *end < *start) {
    return std::nullopt;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*end - *start).count();
  JobRunRecord run;
  run.job = name;
  run.startTime = progress.startTime;
  run.endTime = progress.endTime;
  run.durationSeconds = seconds;
  run.outcome = progress.end == JobProgress::End::Complete ? "Complete" : "Failed";
  run.instanceType = inForce.instanceType;
  run.capacityType = inForce.capacityType;
  run.pods = inForce.replicas * std::max(inForce.nodesPerReplica, 1);  // a group's pods too
  run.hourlyCost = base::decimalString(inForce.totalHourlyCost, 4);
  run.cost = base::decimalString(inForce.totalHourlyCost * static_cast<double>(seconds) / 3600, 4);
  return run;
}

// The steps planWorkload takes for a kind that runs once.

using reconcile::placementInForce;
using reconcile::StatusDraft;

void holdJob(const WorkloadInput& input, const WorkloadIntent& intent,
             const PlacementEngine& engine, const std::optional<Assessment>& current,
             StatusDraft& draft, WorkloadPlan& plan) {
  const auto& applied = *plan.view.applied;
  const TargetState& job = *input.target;
  // The decision for a new run: none when nothing could be placed now.
  const auto& best = plan.decision->placement;
  if (best && best->instanceType == applied.instanceType &&
      best->acceleratorCount == applied.acceleratorCount &&
      best->migProfile == applied.migProfile && best->timeSlices == applied.timeSlices &&
      best->claim == applied.claim && best->capacityType == applied.capacityType) {
    plan.wanted = *best;  // the decision is what runs: described in full
  } else {
    plan.wanted = placementInForce(applied, *current, *plan.decision, engine, intent);
    if (best) {
      plan.view.recommendation = *best;
      plan.view.recommendationNote = heldJobNote(job, applied.targetName);
    }
  }
  plan.view.placement = plan.wanted;
  // Said when it was placed (and resumed); said again in the same words,
  // it would be one more status write per Job.
  if (const auto* said = findCondition(plan.conditions, "Applied");
      !said || said->status != "True") {
    draft.set("Applied", "True", "Applied",
              describeTarget(job.kind, applied.targetName) + " carries the placement (generation " +
                  std::to_string(applied.targetGeneration) + ")");
  }
  const auto ready = jobReadiness(job, applied.targetName, input.name, applied.instanceType,
                                  input.pending.count, input.pending.message);
  draft.set("Ready", ready.status, ready.reason, ready.message);
  if (ready.reason == "Unschedulable") {
    draft.report("Ready", ready.reason, "Warning", ready.message);
  }
  const auto& recorded = plan.view.run;
  if (recorded && recorded->job == applied.targetName && recorded->startTime == job.job.startTime) {
    return;  // this run is priced already: a later price change does not reprice it
  }
  if (auto run = jobRun(job, applied.targetName, plan.wanted)) {
    // One Event for the end, failed or not: its cost, and why it failed.
    const bool complete = run->outcome == "Complete";
    plan.events.push_back(
        {complete ? "Normal" : "Warning", "JobEnded",
         describeTarget(job.kind, run->job) + (complete ? " completed" : " failed") + " after " +
             base::formatDuration(std::chrono::seconds(run->durationSeconds)) + " on " +
             run->instanceType + ": $" + run->cost + " at $" + run->hourlyCost + "/h" +
             (complete || job.job.endReason.empty() ? "" : " (" + job.job.endReason + ")")});
    plan.view.run = std::move(run);
  }
}

bool jobCannotMove(const WorkloadInput& input, const WorkloadIntent& intent,
                   const PlacementEngine& engine, const std::optional<Assessment>& current,
                   StatusDraft& draft, WorkloadPlan& plan) {
  if (!traitsOf(input.target->kind).runsOnce) {
    return false;
  }
  switch (jobStep(*input.target, plan.view.applied.has_value())) {
    case JobStep::Place:
      return false;
    case JobStep::Hold:
      holdJob(input, intent, engine, current, draft, plan);
      return true;
    case JobStep::StartedUnplaced:
      plan.view.placement = plan.decision->placement;
      draft.notApplied("JobStartedUnplaced",
                       startedUnplacedMessage(input.target->kind, input.workload->targetName,
                                              input.name, input.target->job.queuedElsewhere));
      return true;
  }
  return false;
}

void forgetAnotherJob(const WorkloadInput& input, WorkloadPlan& plan) {
  const auto& applied = plan.view.applied;
  if (applied && input.target && traitsOf(input.target->kind).runsOnce &&
      !applied->targetUid.empty() && applied->targetUid != input.target->uid) {
    plan.view.applied.reset();
  }
}

void recordJobGone(const TargetRef& target, StatusDraft& draft, WorkloadPlan& plan) {
  const auto& run = plan.view.run;
  const bool priced = run && run->job == target.name;
  draft.set("Applied", "False", "JobDeleted",
            describeTarget(target) + " is deleted" +
                (priced ? "; its run is in status.run" : ", before the operator saw it end"));
  if (priced) {
    draft.set("Ready", run->outcome == "Complete" ? "True" : "False",
              run->outcome == "Complete" ? "JobComplete" : "JobFailed",
              describeTarget(target) + " ran " +
                  base::formatDuration(std::chrono::seconds(run->durationSeconds)) + " on " +
                  run->instanceType + " and is deleted");
  } else {
    draft.set("Ready", "False", "JobDeleted", describeTarget(target) + " is deleted");
  }
}

}  // namespace gpuplacement::core
