// Reading the targets the operator places: a Deployment, a StatefulSet and
// a Job, with how far each has got running its pod template.
#include "core/kinds/target.h"

#include <doctest/doctest.h>

#include "base/hash.h"

namespace gpuplacement::core {

using json = nlohmann::json;

TEST_CASE("reading a Deployment object") {
  const auto state = targetFromJson(TargetKind::Deployment, json::parse(R"({
    "metadata": {"uid": "u1", "generation": 7,
                 "annotations": {"gpuplacement.io/owned-fields": "{\"workload\":\"w\"}"}},
    "spec": {"replicas": 3, "template": {"spec": {
      "nodeSelector": {"disk": "ssd"},
      "tolerations": [{"key": "a", "operator": "Exists"}],
      "containers": [{"name": "c", "resources": {"limits": {"cpu": "2", "nvidia.com/gpu": 1,
                                                            "ephemeral-storage": "1Gi"},
                                                 "requests": {"memory": "1Gi"}}}]}}},
    "status": {"observedGeneration": 7, "replicas": 3, "updatedReplicas": 3,
               "availableReplicas": 3}})"));
  CHECK(state.uid == "u1");
  CHECK(state.replicas == 3);
  CHECK(state.nodeSelector.at("disk") == "ssd");
  CHECK(state.tolerations.at(0).op == "Exists");
  // What placement may set: extended resources, cpu and memory.
  CHECK(state.containers.at(0).limits ==
        std::map<std::string, std::string>{{"cpu", "2"}, {"nvidia.com/gpu", "1"}});
  CHECK(state.containers.at(0).requests == std::map<std::string, std::string>{{"memory", "1Gi"}});
  CHECK(state.ownership.form == OwnershipRecord::Form::Readable);
  CHECK(state.ownership.fields.workload == "w");
  CHECK(state.ownership.digest == base::stableHash(R"({"workload":"w"})"));
  CHECK(state.rolledOut());
  auto rolling = state;
  rolling.generation = 8;
  CHECK_FALSE(rolling.rolledOut());
  rolling.observedGeneration = 8;
  rolling.availableReplicas = 2;
  CHECK_FALSE(rolling.rolledOut());
  // Nothing but garbage: defaults, no crash.
  const auto empty =
      targetFromJson(TargetKind::Deployment, json::parse(R"({"spec": "nope", "status": []})"));
  CHECK(empty.replicas == 1);
  CHECK(empty.containers.empty());
}

TEST_CASE("a Deployment's surge: maxSurge as pods, rounded up; none under Recreate") {
  struct Case {
    const char* strategy;  // spec.strategy as JSON; empty: absent
    int replicas;
    int surge;
  };
  const Case cases[] = {
      {"", 3, 1},                                           // 25% of 3, up
      {"", 8, 2},                                           // 25% of 8
      {R"({"type": "Recreate"})", 3, 0},                    //
      {R"({"rollingUpdate": {"maxSurge": 2}})", 3, 2},      //
      {R"({"rollingUpdate": {"maxSurge": "50%"}})", 3, 2},  // 1.5, up
      {R"({"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})", 3, 0},
      {R"({"rollingUpdate": {"maxSurge": "300%"}})", 2, 2},  // never over replicas
      {R"({"rollingUpdate": {"maxSurge": "x%"}})", 4, 1},    // garbage: the default
      {R"({"rollingUpdate": {"maxSurge": 1}})", 0, 0},       // scaled to zero
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.strategy));
    CAPTURE(c.replicas);
    json object = {{"spec", {{"replicas", c.replicas}}}};
    if (*c.strategy != '\0') {
      object["spec"]["strategy"] = json::parse(c.strategy);
    }
    CHECK(targetFromJson(TargetKind::Deployment, object).surge == c.surge);
  }
  CHECK(
      targetFromJson(TargetKind::StatefulSet, json::parse(R"({"spec": {"replicas": 3}})")).surge ==
      0);
}

TEST_CASE("the team's own pod requests: requests, else limits, summed, ours left out") {
  TargetState state;
  state.containers = {{"vllm", {{"memory", "32Gi"}}, {{"cpu", "4"}, {"memory", "32Gi"}}},
                      {"sidecar", {{"cpu", "500m"}, {"memory", "512Mi"}}, {}},
                      {"ours", {{"cpu", "2"}}, {{"cpu", "2"}, {"nvidia.com/gpu", "1"}}}};
  auto pod = teamPodRequests(state);
  CHECK(pod.cpu == doctest::Approx(6.5));
  CHECK(pod.memoryGiB == doctest::Approx(32.5));
  // What the ownership record says the operator set is not the team's.
  state.ownership.form = OwnershipRecord::Form::Readable;
  state.ownership.fields.resources["ours"] = {{"cpu", "2"}};
  pod = teamPodRequests(state);
  CHECK(pod.cpu == doctest::Approx(4.5));
  CHECK(teamPodRequests(TargetState{}).cpu == 0);
}

TEST_CASE("reading a StatefulSet: rolled out once every replica is ready on one revision") {
  const auto state = targetFromJson(TargetKind::StatefulSet, json::parse(R"({
    "metadata": {"uid": "u2", "generation": 2},
    "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "cache"}]}}},
    "status": {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 2,
               "readyReplicas": 2, "availableReplicas": 1,
               "currentRevision": "cache-6b9", "updateRevision": "cache-6b9"}})"));
  CHECK(state.kind == TargetKind::StatefulSet);
  CHECK(state.replicas == 2);
  CHECK(state.availableReplicas == 2);  // readyReplicas, as kubectl rollout status reads it
  CHECK(state.rolledOut());
  CHECK(state.templateMutable());
  auto rolling = state;
  rolling.revisionPending = true;  // currentRevision behind updateRevision
  CHECK_FALSE(rolling.rolledOut());
  const auto behind = targetFromJson(TargetKind::StatefulSet, json::parse(R"({
    "metadata": {"generation": 3}, "spec": {"replicas": 2},
    "status": {"observedGeneration": 3, "updatedReplicas": 1, "readyReplicas": 2,
               "currentRevision": "a", "updateRevision": "b"}})"));
  CHECK(behind.revisionPending);
  CHECK_FALSE(behind.rolledOut());
}

TEST_CASE("reading a Job: suspended, started, ended; its pods at once") {
  const auto suspended = targetFromJson(TargetKind::Job, json::parse(R"({
    "metadata": {"uid": "u3", "generation": 1},
    "spec": {"suspend": true, "parallelism": 4, "completions": 2,
             "template": {"spec": {"containers": [{"name": "train",
               "resources": {"limits": {"aws.amazon.com/neuron": 16}}}]}}},
    "status": {}})"));
  CHECK(suspended.kind == TargetKind::Job);
  CHECK(suspended.replicas == 2);  // parallelism, no more than completions
  CHECK(suspended.job.suspended);
  CHECK_FALSE(suspended.job.started());
  CHECK(suspended.templateMutable());
  CHECK_FALSE(suspended.rolledOut());
  CHECK(suspended.containers.at(0).limits.at("aws.amazon.com/neuron") == "16");

  const auto running = targetFromJson(TargetKind::Job, json::parse(R"({
    "spec": {"suspend": false}, "status": {"startTime": "2026-11-25T10:00:00Z", "active": 1}})"));
  CHECK(running.replicas == 1);  // parallelism defaults to 1
  CHECK(running.job.started());
  CHECK(running.rolledOut());
  CHECK_FALSE(running.templateMutable());
  CHECK(running.job.end == JobProgress::End::Running);

  // Suspended again after it started (Kueue preempting, a person pausing):
  // still started, never re-placed.
  auto paused = running;
  paused.job.suspended = true;
  paused.job.active = 0;
  CHECK_FALSE(paused.templateMutable());

  const auto complete = targetFromJson(TargetKind::Job, json::parse(R"({
    "status": {"startTime": "2026-11-25T10:00:00Z", "completionTime": "2026-11-25T12:30:00Z",
               "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                              {"type": "Complete", "status": "True",
                               "lastTransitionTime": "2026-11-25T12:30:01Z"}]}})"));
  CHECK(complete.job.end == JobProgress::End::Complete);
  CHECK(complete.job.endTime == "2026-11-25T12:30:00Z");

  const auto failed = targetFromJson(TargetKind::Job, json::parse(R"({
    "status": {"startTime": "2026-11-25T10:00:00Z",
               "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                               "message": "Job has reached the specified backoff limit",
                               "lastTransitionTime": "2026-11-25T10:05:00Z"}]}})"));
  CHECK(failed.job.end == JobProgress::End::Failed);
  CHECK(failed.job.endTime == "2026-11-25T10:05:00Z");
  CHECK(failed.job.endReason ==
        "BackoffLimitExceeded: Job has reached the specified backoff limit");

  // Another controller queues it: Kueue's label, or spec.managedBy.
  CHECK(targetFromJson(TargetKind::Job, json::parse(R"({
    "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "team"}}, "spec": {"suspend": true}})"))
            .job.queuedElsewhere);
  CHECK(targetFromJson(TargetKind::Job, json::parse(R"({
    "spec": {"suspend": true, "managedBy": "kueue.x-k8s.io/multikueue"}})"))
            .job.queuedElsewhere);
  CHECK_FALSE(targetFromJson(TargetKind::Job, json::parse(R"({
    "spec": {"suspend": true, "managedBy": "kubernetes.io/job-controller"}})"))
                  .job.queuedElsewhere);
}

TEST_CASE("the kinds, as the API names them") {
  CHECK(targetKindNamed("StatefulSet") == TargetKind::StatefulSet);
  CHECK_FALSE(targetKindNamed("statefulset").has_value());  // kinds are exact
  CHECK(apiVersionOf(TargetKind::Job) == "batch/v1");
  CHECK(resourceOf(TargetKind::StatefulSet) == "statefulsets");
  CHECK(supportedTargets() ==
        "apps/v1 Deployment, apps/v1 StatefulSet, batch/v1 Job, ray.io/v1 RayCluster, ray.io/v1 "
        "RayService, leaderworkerset.x-k8s.io/v1 LeaderWorkerSet, jobset.x-k8s.io/v1alpha2 "
        "JobSet, ray.io/v1 RayJob and trainer.kubeflow.org/v1alpha1 TrainJob");
  CHECK(targetKindNamed("RayJob") == TargetKind::RayJob);
  CHECK(targetKindNamed("TrainJob") == TargetKind::TrainJob);
  CHECK(targetKindNamed("LeaderWorkerSet") == TargetKind::LeaderWorkerSet);
  CHECK(describeTarget(TargetKind::Job, "llama-training") == "Job llama-training");
}

TEST_CASE("what each kind does: one row each, in the enum's order") {
  struct Row {
    TargetKind kind;
    const char* apiVersion;
    const char* resource;
    bool runsOnce;
    bool rollsOut;
    bool resumedByPlacement;
    ResourcesWritable resources;
    const char* crd = "";
    WriteMethod write = WriteMethod::StrategicMerge;
    const char* podRevisionLabel = "";
    bool resumedApart = false;
    const char* resourcesField = "";
  };
  const Row rows[] = {
      {TargetKind::Deployment, "apps/v1", "deployments", false, true, false,
       ResourcesWritable::Always, "", WriteMethod::StrategicMerge, "pod-template-hash"},
      {TargetKind::StatefulSet, "apps/v1", "statefulsets", false, true, false,
       ResourcesWritable::Always},
      {TargetKind::Job, "batch/v1", "jobs", true, false, true, ResourcesWritable::From136},
      // Custom resources: written by JSON patch, served only with their CRD.
      {TargetKind::RayCluster, "ray.io/v1", "rayclusters", false, true, true,
       ResourcesWritable::Always, "rayclusters.ray.io", WriteMethod::JsonPatch},
      {TargetKind::RayService, "ray.io/v1", "rayservices", false, true, false,
       ResourcesWritable::Always, "rayservices.ray.io", WriteMethod::JsonPatch},
      {TargetKind::LeaderWorkerSet, "leaderworkerset.x-k8s.io/v1", "leaderworkersets", false, true,
       false, ResourcesWritable::Always, "leaderworkersets.leaderworkerset.x-k8s.io",
       WriteMethod::JsonPatch},
      // Run once like a Job, its resources fixed by its webhook.
      {TargetKind::JobSet, "jobset.x-k8s.io/v1alpha2", "jobsets", true, false, true,
       ResourcesWritable::Never, "jobsets.jobset.x-k8s.io", WriteMethod::JsonPatch},
      // Run once like a Job; KubeRay takes any rayClusterSpec while it is
      // suspended, resources too.
      {TargetKind::RayJob, "ray.io/v1", "rayjobs", true, false, true, ResourcesWritable::Always,
       "rayjobs.ray.io", WriteMethod::JsonPatch},
      // Run as a JobSet, its resources fixed as the JobSet's; the Trainer's
      // webhook takes a change of podSpecOverrides only in a write that
      // leaves it suspended: resumed by a write of its own.
      {TargetKind::TrainJob, "trainer.kubeflow.org/v1alpha1", "trainjobs", true, false, true,
       ResourcesWritable::Never, "trainjobs.trainer.kubeflow.org", WriteMethod::JsonPatch, "", true,
       "spec.trainer.resourcesPerNode"},
  };
  REQUIRE(std::size(rows) == kTargetKinds.size());
  for (const auto& row : rows) {
    CAPTURE(base::nameOf(row.kind));
    const auto& traits = traitsOf(row.kind);
    CHECK(traits.apiVersion == row.apiVersion);
    CHECK(traits.resource == row.resource);
    CHECK(traits.runsOnce == row.runsOnce);
    CHECK(traits.rollsOut == row.rollsOut);
    CHECK(traits.resumedByPlacement == row.resumedByPlacement);
    CHECK(traits.resources == row.resources);
    CHECK(traits.crd == row.crd);
    CHECK(traits.write == row.write);
    CHECK(traits.podRevisionLabel == row.podRevisionLabel);
    CHECK(traits.resumedApart == row.resumedApart);
    CHECK(traits.resourcesField == row.resourcesField);
  }
  // A template that runs once is fixed once it starts; the others never are.
  TargetState job;
  job.kind = TargetKind::Job;
  job.job.suspended = false;
  job.job.startTime = "2026-11-28T00:00:00Z";
  CHECK_FALSE(job.templateMutable());
  TargetState deployment;
  deployment.kind = TargetKind::Deployment;
  CHECK(deployment.templateMutable());
}

}  // namespace gpuplacement::core
