#include <array>

#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// KubeRay's RayJob (ray.io/v1): a Ray job run once on a RayCluster that
// KubeRay makes from spec.rayClusterSpec when the RayJob starts (or
// resumes), disregarding any later change of it, and deletes when it
// ends. Its pod sets are that spec's head and
// worker groups; the submitter (a Job running `ray job submit`) is CPU
// work and no pod set. KubeRay's validation lets only a RayJob with its own
// rayClusterSpec and shutdownAfterJobFinishes wait suspended; one that
// selects a running RayCluster (spec.clusterSelector) is placed through
// that RayCluster.
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// The controller that runs a RayJob by default; any other spec.managedBy
// (MultiKueue) runs it elsewhere.
constexpr std::string_view kKubeRayController = "ray.io/kuberay-operator";
// The key of spec.clusterSelector naming the RayCluster a RayJob runs on.
constexpr const char* kClusterSelectorKey = "ray.io/cluster";

// status.jobDeploymentStatus values from which KubeRay has not made the
// cluster for this run: new, on the way to suspended, or suspended (a
// suspended RayJob passes through Initializing, and keeps the startTime
// that set, before it turns Suspending).
bool notStarted(const std::string& deployment) {
  static constexpr std::array<std::string_view, 4> kWaiting = {"", "New", "Suspending",
                                                               "Suspended"};
  for (const auto waiting : kWaiting) {
    if (deployment == waiting) {
      return true;
    }
  }
  return false;
}

// Its run: started once resumed and past New (status.startTime, set when
// it turned Initializing), running while its job is submitted or runs,
// ended at status.endTime when its deployment is Complete or Failed.
void readRun(const json& object, JobProgress& job) {
  const auto& status = memberOf(object, "status");
  const auto deployment = stringMember(status, "jobDeploymentStatus");
  job.runsOn = stringMember(status, "rayClusterName");
  if (deployment == "ValidationFailed") {
    // KubeRay refused its spec and runs nothing: no run, whatever it says.
    job.end = JobProgress::End::Failed;
    job.endReason = "ValidationFailed: " + stringMember(status, "message");
    return;
  }
  if (job.suspended || notStarted(deployment)) {
    return;
  }
  job.startTime = stringMember(status, "startTime");
  if (job.startTime.empty()) {
    job.startTime = stringMember(memberOf(object, "metadata"), "creationTimestamp");
  }
  job.active = deployment == "Running" || deployment == "Waiting" ? 1 : 0;
  if (deployment == "Complete" || deployment == "Failed") {
    job.end = deployment == "Complete" ? JobProgress::End::Complete : JobProgress::End::Failed;
    job.endTime = stringMember(status, "endTime");
    if (job.end == JobProgress::End::Failed) {
      job.endReason = stringMember(status, "reason");
      if (const auto message = stringMember(status, "message"); !message.empty()) {
        job.endReason += (job.endReason.empty() ? "" : ": ") + message;
      }
    }
  }
}

class RayJobAdapter final : public RunOnceAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    if (const auto cluster = stringMember(memberOf(spec, "clusterSelector"), kClusterSelectorKey);
        !cluster.empty()) {
      state.placedThrough = "RayJob " + stringMember(memberOf(object, "metadata"), "name") +
                            " runs on RayCluster " + cluster +
                            ", which it selects (spec.clusterSelector " + kClusterSelectorKey +
                            ": " + cluster +
                            ") and KubeRay does not make, suspend or delete: place that "
                            "RayCluster (spec.targetRef kind: RayCluster, name: " +
                            cluster + ")";
    }
    readRayClusterSpec(memberOf(spec, "rayClusterSpec"), "/spec/rayClusterSpec", state);
    auto& job = state.job;
    readSuspension(object, job, kKubeRayController);
    readRun(object, job);
  }

  // Its pods are its RayCluster's (their ownerReference, no label naming
  // the RayJob): found through status.rayClusterName (JobProgress::runsOn).
  std::optional<PodOwner> ownerOf(const json& pod) const override {
    (void)pod;
    return std::nullopt;
  }
};

}  // namespace

const KindAdapter& rayJobAdapter() {
  static const RayJobAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
