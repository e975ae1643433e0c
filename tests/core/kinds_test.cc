// Each kind's adapter: the pod sets it reads, how far the object has got,
// and which pods are its own (core/kinds/).
#include <doctest/doctest.h>

#include "core/cluster/cluster.h"
#include "core/kinds/kind_adapter.h"
#include "core/kinds/pod_sets.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

// A pod template asking for `gpus` NVIDIA GPUs in one container.
json podTemplate(const std::string& container, int gpus) {
  json templ = {{"metadata", {{"labels", {{"app", container}}}}},
                {"spec", {{"containers", {{{"name", container}}}}}}};
  if (gpus > 0) {
    templ["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = gpus;
  }
  return templ;
}

json rayClusterSpec(int workerGroups) {
  json spec = {
      {"headGroupSpec",
       {{"rayStartParams", {{"num-cpus", "0"}}}, {"template", podTemplate("ray-head", 0)}}}};
  for (int i = 0; i < workerGroups; ++i) {
    spec["workerGroupSpecs"].push_back({{"groupName", "gpu-" + std::to_string(i)},
                                        {"replicas", i + 1},
                                        {"minReplicas", 0},
                                        {"template", podTemplate("ray-worker", 1)}});
  }
  return spec;
}

// A JobSet of a driver (one Job of one pod) and `workers` Jobs of
// `parallelism` pods each, asking for `gpus` GPUs a worker.
json jobSet(int workers, int parallelism, int gpus) {
  json spec = {
      {"replicatedJobs",
       {{{"name", "driver"}, {"template", {{"spec", {{"template", podTemplate("driver", 0)}}}}}},
        {{"name", "workers"},
         {"replicas", workers},
         {"template",
          {{"spec",
            {{"parallelism", parallelism},
             {"completions", parallelism},
             {"template", podTemplate("trainer", gpus)}}}}}}}}};
  return {{"metadata", {{"name", "train"}, {"creationTimestamp", "2026-12-07T10:00:00Z"}}},
          {"spec", spec}};
}

// A RayJob that brings its own cluster spec of `workerGroups` worker groups,
// waiting suspended for its placement.
json rayJob(int workerGroups) {
  return {{"metadata", {{"name", "tune"}, {"creationTimestamp", "2026-12-07T10:00:00Z"}}},
          {"spec",
           {{"entrypoint", "python tune.py"},
            {"shutdownAfterJobFinishes", true},
            {"suspend", true},
            {"rayClusterSpec", rayClusterSpec(workerGroups)}}}};
}

// A TrainJob on the torch-distributed runtime of `nodes` nodes, each asking
// for `gpus` GPUs (none: no resourcesPerNode), waiting suspended.
json trainJob(int nodes, int gpus) {
  json trainer = {{"image", "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime"}, {"numNodes", nodes}};
  if (gpus > 0) {
    trainer["resourcesPerNode"] = {{"limits", {{"nvidia.com/gpu", gpus}}}};
  }
  return {{"metadata", {{"name", "tune"}, {"creationTimestamp", "2026-12-07T10:00:00Z"}}},
          {"spec",
           {{"runtimeRef", {{"name", "torch-distributed"}}},
            {"trainer", trainer},
            {"suspend", true},
            {"managedBy", "trainer.kubeflow.org/trainjob-controller"}}}};
}

TEST_CASE("each kind's pod sets: name, role, placed by default, pods, template") {
  struct Row {
    const char* label;
    TargetKind kind;
    json object;
    std::vector<PodSet> podSets;
    std::int32_t replicas;  // the pods of the pod sets placed by default
    std::string container;  // the target's own template: the first placed pod set's
    PodGroups groups{};     // the groups a replica may span nodes in
  };
  json lws = {{"spec",
               {{"replicas", 2},
                {"leaderWorkerTemplate",
                 {{"size", 4},
                  {"leaderTemplate", podTemplate("leader", 1)},
                  {"workerTemplate", podTemplate("worker", 1)}}}}}};
  json lwsOneTemplate = {
      {"spec",
       {{"replicas", 3},
        {"leaderWorkerTemplate", {{"size", 2}, {"workerTemplate", podTemplate("vllm", 8)}}}}}};
  const Row rows[] = {
      {"a Deployment: one pod set",
       TargetKind::Deployment,
       {{"spec", {{"replicas", 3}, {"template", podTemplate("vllm", 1)}}}},
       {{"main", "main", true, 3, "/spec/template"}},
       3,
       "vllm",
       {}},
      {"a RayCluster: the head left as written, each worker group placed",
       TargetKind::RayCluster,
       {{"spec", rayClusterSpec(2)}},
       {{"head", "head", false, 1, "/spec/headGroupSpec/template"},
        {"gpu-0", "worker", true, 1, "/spec/workerGroupSpecs/0/template"},
        {"gpu-1", "worker", true, 2, "/spec/workerGroupSpecs/1/template"}},
       3,
       "ray-worker",
       {1, 2, "spec.workerGroupSpecs[1].replicas"}},
      {"a RayCluster of a head alone: the head runs the model",
       TargetKind::RayCluster,
       {{"spec", rayClusterSpec(0)}},
       {{"head", "head", true, 1, "/spec/headGroupSpec/template"}},
       1,
       "ray-head",
       {}},
      {"a RayService: its cluster's spec under rayClusterConfig",
       TargetKind::RayService,
       {{"spec", {{"rayClusterConfig", rayClusterSpec(1)}}}},
       {{"head", "head", false, 1, "/spec/rayClusterConfig/headGroupSpec/template"},
        {"gpu-0", "worker", true, 1, "/spec/rayClusterConfig/workerGroupSpecs/0/template"}},
       1,
       "ray-worker",
       {1, 1, "spec.rayClusterConfig.workerGroupSpecs[0].replicas"}},
      {"a LeaderWorkerSet: leaders and workers, groups of the team's size",
       TargetKind::LeaderWorkerSet,
       lws,
       {{"leader", "leader", true, 2, "/spec/leaderWorkerTemplate/leaderTemplate"},
        {"worker", "worker", true, 6, "/spec/leaderWorkerTemplate/workerTemplate"}},
       8,
       "leader",
       {2, 4, "spec.leaderWorkerTemplate.size"}},
      {"a LeaderWorkerSet of one template: leaders run the workers'",
       TargetKind::LeaderWorkerSet,
       lwsOneTemplate,
       {{"worker", "leader and worker", true, 6, "/spec/leaderWorkerTemplate/workerTemplate"}},
       6,
       "vllm",
       {3, 2, "spec.leaderWorkerTemplate.size"}},
      {"a JobSet: each replicated job, its Jobs times their pods",
       TargetKind::JobSet,
       jobSet(3, 2, 8),
       {{"driver", "job", true, 1, "/spec/replicatedJobs/0/template/spec/template"},
        {"workers", "job", true, 6, "/spec/replicatedJobs/1/template/spec/template"}},
       7,
       "driver",
       {1, 6, "spec.replicatedJobs[1].template.spec.parallelism"}},
      {"a RayJob: its cluster spec's groups; the submitter is no pod set",
       TargetKind::RayJob,
       rayJob(2),
       {{"head", "head", false, 1, "/spec/rayClusterSpec/headGroupSpec/template"},
        {"gpu-0", "worker", true, 1, "/spec/rayClusterSpec/workerGroupSpecs/0/template"},
        {"gpu-1", "worker", true, 2, "/spec/rayClusterSpec/workerGroupSpecs/1/template"}},
       3,
       "ray-worker",
       {1, 2, "spec.rayClusterSpec.workerGroupSpecs[1].replicas"}},
      // Its runtime's template is not in it: the trainer's "node", as
      // spec.trainer and the override entry for it state it (none yet).
      {"a TrainJob: its runtime's trainer job, numNodes pods",
       TargetKind::TrainJob,
       trainJob(2, 1),
       {{"node", "trainer", true, 2, "/spec/podSpecOverrides/0"}},
       2,
       "node",
       {1, 2, "spec.trainer.numNodes"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    const auto state = targetFromJson(row.kind, row.object);
    CHECK(state.podSets == row.podSets);
    if (row.kind == TargetKind::TrainJob) {
      // No pod template in the object to keep (core/kinds/train_job.cc).
      REQUIRE(state.podSetTemplates.size() == 1);
      CHECK(state.containers.front().limits.at("nvidia.com/gpu") == "1");
      CHECK(state.podLabels.at("jobset.sigs.k8s.io/jobset-name") == "tune");
      continue;
    }
    CHECK(state.replicas == row.replicas);
    CAPTURE(state.groups.sizeField);
    CHECK(state.groups.groups == row.groups.groups);
    CHECK(state.groups.size == row.groups.size);
    CHECK(state.groups.sizeField == row.groups.sizeField);
    REQUIRE(state.containers.size() == 1);
    CHECK(state.containers.front().name == row.container);
    // A kind written by JSON patch keeps each template as it is stored.
    if (traitsOf(row.kind).write == WriteMethod::JsonPatch) {
      REQUIRE(state.podSetTemplates.size() == state.podSets.size());
      for (std::size_t i = 0; i < state.podSets.size(); ++i) {
        CHECK(state.podSetTemplates[i].raw ==
              row.object.at(json::json_pointer(state.podSets[i].templatePointer)));
      }
    } else {
      CHECK(state.podSetTemplates.empty());
      CHECK(state.raw.is_null());
    }
  }
}

TEST_CASE("spec.targetRef.podSets chooses the pod sets; a name the kind lacks is an error") {
  const auto ray = targetFromJson(TargetKind::RayCluster, {{"spec", rayClusterSpec(2)}});
  struct Row {
    std::vector<std::string> names;
    std::vector<std::size_t> indexes;
    std::int32_t pods;
    std::string error;
  };
  const Row rows[] = {
      {{}, {1, 2}, 3, ""},
      {{"gpu-1"}, {2}, 2, ""},
      {{"head", "gpu-0"}, {0, 1}, 2, ""},
      {{"gpu-9"},
       {},
       0,
       "spec.targetRef.podSets: the RayCluster has no pod set named gpu-9 (it has head, gpu-0, "
       "gpu-1)"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.names.size());
    const auto placed = placedPodSets(ray, row.names);
    CHECK(placed.indexes == row.indexes);
    CHECK(placed.error == row.error);
    CHECK(placedReplicas(ray, placed) == row.pods);
  }
}

TEST_CASE("how far a custom kind has got") {
  struct Row {
    const char* label;
    TargetKind kind;
    json object;
    bool rolledOut;
  };
  json cluster = {{"metadata", {{"generation", 2}}}, {"spec", rayClusterSpec(1)}};
  json lws = {{"spec",
               {{"replicas", 2},
                {"leaderWorkerTemplate", {{"size", 2}, {"workerTemplate", podTemplate("w", 1)}}}}}};
  const auto with = [](json object, const json& status) {
    object["status"] = status;
    return object;
  };
  json service = {{"metadata", {{"generation", 1}}},
                  {"spec", {{"rayClusterConfig", rayClusterSpec(1)}}}};
  const Row rows[] = {
      {"a RayCluster whose workers are ready", TargetKind::RayCluster,
       with(cluster,
            {{"observedGeneration", 2}, {"readyWorkerReplicas", 1}, {"desiredWorkerReplicas", 1}}),
       true},
      {"a RayCluster that has not seen its new spec", TargetKind::RayCluster,
       with(cluster,
            {{"observedGeneration", 1}, {"readyWorkerReplicas", 1}, {"desiredWorkerReplicas", 1}}),
       false},
      {"a RayCluster with a worker not ready", TargetKind::RayCluster,
       with(cluster,
            {{"observedGeneration", 2}, {"readyWorkerReplicas", 0}, {"desiredWorkerReplicas", 1}}),
       false},
      {"a RayService serving from its cluster", TargetKind::RayService,
       with(service, {{"observedGeneration", 1},
                      {"activeServiceStatus", {{"rayClusterName", "svc-raycluster-abc"}}}}),
       true},
      {"a RayService upgrading to a second cluster", TargetKind::RayService,
       with(service, {{"observedGeneration", 1},
                      {"activeServiceStatus", {{"rayClusterName", "svc-raycluster-abc"}}},
                      {"pendingServiceStatus", {{"rayClusterName", "svc-raycluster-def"}}}}),
       false},
      {"a RayService whose applications never served", TargetKind::RayService,
       with(service, {{"observedGeneration", 1}}), false},
      {"a LeaderWorkerSet with every group updated and ready", TargetKind::LeaderWorkerSet,
       with(lws, {{"replicas", 2}, {"updatedReplicas", 2}, {"readyReplicas", 2}}), true},
      {"a LeaderWorkerSet rolling its groups", TargetKind::LeaderWorkerSet,
       with(lws, {{"replicas", 2},
                  {"updatedReplicas", 2},
                  {"readyReplicas", 2},
                  {"conditions", {{{"type", "UpdateInProgress"}, {"status", "True"}}}}}),
       false},
      {"a LeaderWorkerSet with a group not ready", TargetKind::LeaderWorkerSet,
       with(lws, {{"replicas", 2}, {"updatedReplicas", 2}, {"readyReplicas", 1}}), false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    const auto state = targetFromJson(row.kind, row.object);
    CHECK(state.rolledOut() == row.rolledOut);
    CHECK(state.templateMutable());  // none of them fixes its templates
  }
}

TEST_CASE("a JobSet's run: placed while it waits suspended, fixed once it started, priced") {
  struct Row {
    const char* label;
    json suspend;  // spec.suspend; null: absent
    json status;
    bool mutableTemplate;
    std::string startTime;
    JobProgress::End end;
    std::string endTime;
  };
  const json resumed = {{"type", "Suspended"},
                        {"status", "False"},
                        {"reason", "ResumeJobs"},
                        {"lastTransitionTime", "2026-12-07T10:05:00Z"}};
  const json completed = {
      {"type", "Completed"}, {"status", "True"}, {"lastTransitionTime", "2026-12-07T11:05:00Z"}};
  const json activeWorkers = {
      {"replicatedJobsStatus",
       {{{"name", "workers"}, {"active", 3}, {"ready", 0}}, {{"name", "driver"}, {"active", 1}}}}};
  const Row rows[] = {
      {"created suspended: its Jobs made, none active",
       true,
       {{"replicatedJobsStatus", {{{"name", "workers"}, {"suspended", 3}}}},
        {"conditions", {{{"type", "Suspended"}, {"status", "True"}}}}},
       true,
       "",
       JobProgress::End::Running,
       ""},
      {"resumed: started when the Suspended condition turned False",
       false,
       {{"conditions", json::array({resumed})}},
       false,
       "2026-12-07T10:05:00Z",
       JobProgress::End::Running,
       ""},
      {"created running: started at its creation once a Job is active", json(), activeWorkers,
       false, "2026-12-07T10:00:00Z", JobProgress::End::Running, ""},
      {"completed: the run ends at the Completed condition",
       false,
       {{"conditions", json::array({resumed, completed})}, {"terminalState", "Completed"}},
       false,
       "2026-12-07T10:05:00Z",
       JobProgress::End::Complete,
       "2026-12-07T11:05:00Z"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    auto object = jobSet(2, 1, 1);
    if (!row.suspend.is_null()) {
      object["spec"]["suspend"] = row.suspend;
    }
    object["status"] = row.status;
    const auto state = targetFromJson(TargetKind::JobSet, object);
    CHECK(state.templateMutable() == row.mutableTemplate);
    CHECK(state.job.startTime == row.startTime);
    CHECK(state.job.end == row.end);
    CHECK(state.job.endTime == row.endTime);
    CHECK(state.rolledOut() == !row.startTime.empty());
  }
  // Kueue's label, or another controller in spec.managedBy, queues it.
  auto queued = jobSet(1, 1, 1);
  queued["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  CHECK(targetFromJson(TargetKind::JobSet, queued).job.queuedElsewhere);
  queued["spec"]["managedBy"] = "jobset.sigs.k8s.io/jobset-controller";
  CHECK_FALSE(targetFromJson(TargetKind::JobSet, queued).job.queuedElsewhere);
  queued["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "training";
  CHECK(targetFromJson(TargetKind::JobSet, queued).job.queuedElsewhere);
}

// A run-once kind's progress as a table row states it: whether its
// templates may change, when its run started and ended, and how.
template <typename Row>
void checkRun(const TargetState& state, const Row& row) {
  CHECK(state.templateMutable() == row.mutableTemplate);
  CHECK(state.job.startTime == row.startTime);
  CHECK(state.job.active == row.active);
  CHECK(state.job.end == row.end);
  CHECK(state.job.endTime == row.endTime);
  CHECK(state.job.endReason == row.endReason);
  CHECK(state.rolledOut() == !row.startTime.empty());
}

TEST_CASE("a RayJob's run: placed while it waits suspended, fixed once KubeRay starts it") {
  struct Row {
    const char* label;
    bool suspend;
    json status;
    bool mutableTemplate;
    std::string startTime;
    std::int32_t active;
    JobProgress::End end;
    std::string endTime;
    std::string endReason;
  };
  const Row rows[] = {
      // KubeRay passes a suspended RayJob through Initializing, which sets
      // status.startTime, on its way to Suspended: it keeps that time.
      {"created suspended: Suspended, with the startTime Initializing left",
       true,
       {{"jobDeploymentStatus", "Suspended"}, {"startTime", "2026-12-07T10:00:01Z"}},
       true,
       "",
       0,
       JobProgress::End::Running,
       "",
       ""},
      {"still Initializing on its way to Suspended",
       true,
       {{"jobDeploymentStatus", "Initializing"}, {"startTime", "2026-12-07T10:00:01Z"}},
       true,
       "",
       0,
       JobProgress::End::Running,
       "",
       ""},
      {"resumed, not yet seen by KubeRay: not started, and no longer suspended",
       false,
       {{"jobDeploymentStatus", "Suspended"}, {"startTime", "2026-12-07T10:00:01Z"}},
       false,
       "",
       0,
       JobProgress::End::Running,
       "",
       ""},
      {"resumed: started when it turned Initializing again",
       false,
       {{"jobDeploymentStatus", "Initializing"},
        {"startTime", "2026-12-07T10:05:00Z"},
        {"rayClusterName", "tune-x2b9k"}},
       false,
       "2026-12-07T10:05:00Z",
       0,
       JobProgress::End::Running,
       "",
       ""},
      {"its job submitted: running",
       false,
       {{"jobDeploymentStatus", "Running"}, {"startTime", "2026-12-07T10:05:00Z"}},
       false,
       "2026-12-07T10:05:00Z",
       1,
       JobProgress::End::Running,
       "",
       ""},
      {"complete: the run ends at status.endTime",
       false,
       {{"jobDeploymentStatus", "Complete"},
        {"jobStatus", "SUCCEEDED"},
        {"startTime", "2026-12-07T10:05:00Z"},
        {"endTime", "2026-12-07T11:05:00Z"}},
       false,
       "2026-12-07T10:05:00Z",
       0,
       JobProgress::End::Complete,
       "2026-12-07T11:05:00Z",
       ""},
      {"failed: KubeRay's reason and message",
       false,
       {{"jobDeploymentStatus", "Failed"},
        {"reason", "JobDeploymentStatusTransitionGracePeriodExceeded"},
        {"message", "The RayJob submitter finished"},
        {"startTime", "2026-12-07T10:05:00Z"},
        {"endTime", "2026-12-07T10:06:40Z"}},
       false,
       "2026-12-07T10:05:00Z",
       0,
       JobProgress::End::Failed,
       "2026-12-07T10:06:40Z",
       "JobDeploymentStatusTransitionGracePeriodExceeded: The RayJob submitter finished"},
      {"refused by KubeRay's validation: failed, and no run to price",
       false,
       {{"jobDeploymentStatus", "ValidationFailed"},
        {"message", "one of RayClusterSpec or ClusterSelector must be set"},
        {"startTime", "2026-12-07T10:00:01Z"}},
       false,
       "",
       0,
       JobProgress::End::Failed,
       "",
       "ValidationFailed: one of RayClusterSpec or ClusterSelector must be set"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    auto object = rayJob(1);
    object["spec"]["suspend"] = row.suspend;
    object["status"] = row.status;
    const auto state = targetFromJson(TargetKind::RayJob, object);
    checkRun(state, row);
    CHECK(state.placedThrough.empty());
  }
  // Its pods are found through the cluster KubeRay made for the run.
  auto running = rayJob(1);
  running["status"] = {{"jobDeploymentStatus", "Running"}, {"rayClusterName", "tune-x2b9k"}};
  CHECK(targetFromJson(TargetKind::RayJob, running).job.runsOn == "tune-x2b9k");
  // Kueue's label, or MultiKueue in spec.managedBy, queues it.
  auto queued = rayJob(1);
  queued["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  CHECK(targetFromJson(TargetKind::RayJob, queued).job.queuedElsewhere);
  queued["spec"]["managedBy"] = "ray.io/kuberay-operator";
  CHECK_FALSE(targetFromJson(TargetKind::RayJob, queued).job.queuedElsewhere);
  queued["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "training";
  CHECK(targetFromJson(TargetKind::RayJob, queued).job.queuedElsewhere);
}

TEST_CASE("a TrainJob's run: placed while it waits suspended, fixed once resumed, priced") {
  struct Row {
    const char* label;
    json suspend;  // spec.suspend; null: absent
    json status;
    bool mutableTemplate;
    std::string startTime;
    std::int32_t active;
    JobProgress::End end;
    std::string endTime;
    std::string endReason;
  };
  const json suspended = {{"type", "Suspended"}, {"status", "True"}, {"reason", "Suspended"}};
  const json resumed = {{"type", "Suspended"},
                        {"status", "False"},
                        {"reason", "Resumed"},
                        {"lastTransitionTime", "2026-12-07T10:05:00Z"}};
  const json complete = {{"type", "Complete"},
                         {"status", "True"},
                         {"reason", "AllJobsCompleted"},
                         {"lastTransitionTime", "2026-12-07T11:05:00Z"}};
  const json failed = {{"type", "Failed"},
                       {"status", "True"},
                       {"reason", "FailedJobs"},
                       {"message", "jobset failed"},
                       {"lastTransitionTime", "2026-12-07T10:35:00Z"}};
  const Row rows[] = {
      {"created suspended",
       true,
       {{"conditions", {suspended}}},
       true,
       "",
       0,
       JobProgress::End::Running,
       "",
       ""},
      {"new, not yet seen by the Trainer", true, json::object(), true, "", 0,
       JobProgress::End::Running, "", ""},
      {"resumed: started when the Suspended condition turned False",
       false,
       {{"conditions", {resumed}}},
       false,
       "2026-12-07T10:05:00Z",
       1,
       JobProgress::End::Running,
       "",
       ""},
      {"resumed, not yet seen by the Trainer: no longer mutable, not started",
       false,
       {{"conditions", {suspended}}},
       false,
       "",
       0,
       JobProgress::End::Running,
       "",
       ""},
      {"created running: started at its creation", json(), json::object(), false,
       "2026-12-07T10:00:00Z", 1, JobProgress::End::Running, "", ""},
      {"complete: the Trainer's copy of its JobSet's Completed",
       false,
       {{"conditions", {resumed, complete}}},
       false,
       "2026-12-07T10:05:00Z",
       0,
       JobProgress::End::Complete,
       "2026-12-07T11:05:00Z",
       ""},
      {"failed: its reason and message",
       false,
       {{"conditions", {resumed, failed}}},
       false,
       "2026-12-07T10:05:00Z",
       0,
       JobProgress::End::Failed,
       "2026-12-07T10:35:00Z",
       "FailedJobs: jobset failed"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    auto object = trainJob(2, 1);
    object["spec"].erase("suspend");
    if (!row.suspend.is_null()) {
      object["spec"]["suspend"] = row.suspend;
    }
    object["status"] = row.status;
    const auto state = targetFromJson(TargetKind::TrainJob, object);
    checkRun(state, row);
    // Its pods are its JobSet's, which the Trainer names as the TrainJob.
    CHECK(state.job.runsOn == "tune");
  }
  // Kueue's label, or MultiKueue in spec.managedBy, queues it; the
  // Trainer's own default does not.
  auto queued = trainJob(2, 1);
  CHECK_FALSE(targetFromJson(TargetKind::TrainJob, queued).job.queuedElsewhere);
  queued["spec"]["managedBy"] = "kueue.x-k8s.io/multikueue";
  CHECK(targetFromJson(TargetKind::TrainJob, queued).job.queuedElsewhere);
  queued["spec"].erase("managedBy");
  queued["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "training";
  CHECK(targetFromJson(TargetKind::TrainJob, queued).job.queuedElsewhere);
}

TEST_CASE("a TrainJob's template is written into its podSpecOverrides and spec.trainer") {
  // The placed template: two keys and a toleration more, and eight GPUs.
  const auto placed = [](json templ) {
    templ["spec"]["nodeSelector"]["karpenter.k8s.aws/instance-gpu-name"] = "l4";
    templ["spec"]["tolerations"] = {
        {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
    return templ;
  };
  struct Row {
    const char* label;
    json overrides;  // spec.podSpecOverrides; null: absent
    bool devices;    // the placed template asks for other devices too
    json ops;        // expected; null: an error
    std::string error;
  };
  const json gpuToleration = {
      {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}};
  const Row rows[] = {
      {"no overrides: the list made, with an entry for node",
       json(),
       false,
       {{{"op", "add"},
         {"path", "/spec/podSpecOverrides"},
         {"value",
          {{{"targetJobs", {{{"name", "node"}}}},
            {"nodeSelector", {{"karpenter.k8s.aws/instance-gpu-name", "l4"}}},
            {"tolerations", gpuToleration}}}}}},
       ""},
      {"an entry for another job: one for node added after it",
       {{{"targetJobs", {{{"name", "dataset-initializer"}}}}, {"serviceAccountName", "hf"}}},
       false,
       {{{"op", "add"},
         {"path", "/spec/podSpecOverrides/-"},
         {"value",
          {{"targetJobs", {{{"name", "node"}}}},
           {"nodeSelector", {{"karpenter.k8s.aws/instance-gpu-name", "l4"}}},
           {"tolerations", gpuToleration}}}}},
       ""},
      {"node's own entry: its fields, each whole, the team's key kept",
       {{{"targetJobs", {{{"name", "dataset-initializer"}}}}},
        {{"targetJobs", {{{"name", "node"}}}}, {"nodeSelector", {{"team", "ml"}}}}},
       false,
       {{{"op", "add"},
         {"path", "/spec/podSpecOverrides/1/nodeSelector"},
         {"value", {{"karpenter.k8s.aws/instance-gpu-name", "l4"}, {"team", "ml"}}}},
        {{"op", "add"},
         {"path", "/spec/podSpecOverrides/1/tolerations"},
         {"value", gpuToleration}}},
       ""},
      {"devices: into spec.trainer.resourcesPerNode",
       {{{"targetJobs", {{{"name", "node"}}}}}},
       true,
       {{{"op", "add"},
         {"path", "/spec/podSpecOverrides/0/nodeSelector"},
         {"value", {{"karpenter.k8s.aws/instance-gpu-name", "l4"}}}},
        {{"op", "add"}, {"path", "/spec/podSpecOverrides/0/tolerations"}, {"value", gpuToleration}},
        {{"op", "add"},
         {"path", "/spec/trainer/resourcesPerNode"},
         {"value", {{"limits", {{"nvidia.com/gpu", 8}}}}}}},
       ""},
      {"node's entry targets the launcher too: said, nothing written",
       {{{"targetJobs", {{{"name", "launcher"}}, {{"name", "node"}}}}}},
       false,
       json(),
       "spec.podSpecOverrides[0] targets node together with other jobs, which the placement "
       "would reach too: give node an entry of its own"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    auto object = trainJob(2, 1);
    if (!row.overrides.is_null()) {
      object["spec"]["podSpecOverrides"] = row.overrides;
    }
    const auto state = targetFromJson(TargetKind::TrainJob, object);
    const auto& before = state.podSetTemplates.at(0).raw;
    auto after = placed(before);
    if (row.devices) {
      after["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", 8}}}};
    }
    json ops = json::array();
    const auto error = adapterOf(TargetKind::TrainJob).templateOps(state, 0, before, after, ops);
    CHECK(error == row.error);
    if (row.ops.is_null()) {
      CHECK(ops.empty());
    } else {
      CHECK(ops == row.ops);
      // The operations apply to the object as it is.
      CHECK_NOTHROW((void)object.patch(ops));
    }
  }
  // What no override carries is said, not written.
  const auto state = targetFromJson(TargetKind::TrainJob, trainJob(2, 1));
  auto after = state.podSetTemplates.at(0).raw;
  after["spec"]["topologySpreadConstraints"] = json::array({{{"topologyKey", "zone"}}});
  json ops = json::array();
  CHECK(adapterOf(TargetKind::TrainJob)
            .templateOps(state, 0, state.podSetTemplates.at(0).raw, after, ops) ==
        "a TrainJob's spec.podSpecOverrides carry no topologySpreadConstraints (only "
        "nodeSelector, tolerations and schedulingGates)");
  CHECK(ops.empty());
  CHECK(adapterOf(TargetKind::TrainJob).fieldOf(state, 0, "spec.template.spec.tolerations") ==
        "spec.podSpecOverrides[0].tolerations");
  CHECK(adapterOf(TargetKind::TrainJob).fieldOf(state, 0, "spec.template.spec.containers") ==
        "spec.trainer.resourcesPerNode");
}

TEST_CASE("placed through another object: a RayJob on a selected cluster, a cluster KubeRay made") {
  struct Row {
    const char* label;
    TargetKind kind;
    json object;
    std::vector<std::string> said;  // in placedThrough; none: placed as itself
    bool recordKept;                // the ownership record it carries is the operator's
  };
  const auto record = R"({"workload":"tune","podSets":["gpu-0"]})";
  json onCluster = {
      {"metadata", {{"name", "tune"}}},
      {"spec",
       {{"entrypoint", "python tune.py"}, {"clusterSelector", {{"ray.io/cluster", "shared"}}}}}};
  json made = {{"metadata",
                {{"name", "tune-x2b9k"},
                 {"labels",
                  {{"ray.io/originated-from-crd", "RayJob"},
                   {"ray.io/originated-from-cr-name", "tune"},
                   {"gpuplacement.io/workload", "tune"}}},
                 {"annotations", {{"gpuplacement.io/owned-fields", record}}}}},
               {"spec", rayClusterSpec(1)}};
  json own = made;
  own["metadata"]["labels"].erase("ray.io/originated-from-crd");
  const Row rows[] = {
      {"a RayJob selecting a running RayCluster: place that cluster",
       TargetKind::RayJob,
       onCluster,
       {"RayJob tune runs on RayCluster shared", "spec.clusterSelector ray.io/cluster: shared",
        "spec.targetRef kind: RayCluster, name: shared"},
       true},
      {"a RayCluster a RayJob made: its copied record dropped, the RayJob named",
       TargetKind::RayCluster,
       made,
       {"RayCluster tune-x2b9k", "RayJob tune", "ray.io/originated-from-crd: RayJob",
        "spec.targetRef kind: RayJob, name: tune"},
       false},
      {"a RayCluster of the team's own: placed as itself, its record read",
       TargetKind::RayCluster,
       own,
       {},
       true},
      {"a JobSet a TrainJob made: the TrainJob named",
       TargetKind::JobSet,
       {{"metadata",
         {{"name", "tune"},
          {"ownerReferences",
           {{{"apiVersion", "trainer.kubeflow.org/v1alpha1"},
             {"kind", "TrainJob"},
             {"name", "tune"},
             {"controller", true}}}}}},
        {"spec", jobSet(1, 2, 1)["spec"]}},
       {"JobSet tune for TrainJob tune", "spec.targetRef kind: TrainJob, name: tune"},
       true},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    const auto state = targetFromJson(row.kind, row.object);
    CHECK(state.placedThrough.empty() == row.said.empty());
    for (const auto& part : row.said) {
      CAPTURE(part);
      CHECK(state.placedThrough.find(part) != std::string::npos);
    }
    const bool annotated = row.object["metadata"].contains("annotations");
    CHECK((annotated && row.recordKept) == (state.ownership.fields.workload == "tune"));
  }
}

TEST_CASE("which pods are whose: the kind that made them, through its adapter") {
  struct Row {
    const char* label;
    json metadata;
    TargetKind kind;
    std::string owner;
    std::optional<PodOwner> adapterSays;  // of the kind's adapter: the pod set too
  };
  const auto owned = [](const char* kind, const char* name) {
    return json::array({{{"kind", kind}, {"name", name}}});
  };
  const Row rows[] = {
      {"a Deployment's, through its ReplicaSet",
       {{"ownerReferences", owned("ReplicaSet", "chat-7d9f8b6c5")}},
       TargetKind::Deployment,
       "chat",
       PodOwner{"chat", "main"}},
      {"a RayCluster's worker",
       {{"ownerReferences", owned("RayCluster", "llm")},
        {"labels", {{"ray.io/group", "gpu-0"}, {"ray.io/node-type", "worker"}}}},
       TargetKind::RayCluster,
       "llm",
       PodOwner{"llm", "gpu-0"}},
      {"a RayCluster's head",
       {{"ownerReferences", owned("RayCluster", "llm")},
        {"labels", {{"ray.io/group", "headgroup"}, {"ray.io/node-type", "head"}}}},
       TargetKind::RayCluster,
       "llm",
       PodOwner{"llm", "head"}},
      {"a RayService's worker: the service's, not its cluster's",
       {{"ownerReferences", owned("RayCluster", "chat-x2b9k")},
        {"labels",
         {{"ray.io/group", "gpu"}, {"ray.io/node-type", "worker"}, {"ray.io/serve", "true"}}}},
       TargetKind::RayService,
       "chat",
       PodOwner{"chat", "gpu"}},
      {"a LeaderWorkerSet's leader: the set's, not its StatefulSet's",
       {{"ownerReferences", owned("StatefulSet", "llama")},
        {"labels",
         {{"leaderworkerset.sigs.k8s.io/name", "llama"},
          {"leaderworkerset.sigs.k8s.io/worker-index", "0"}}}},
       TargetKind::LeaderWorkerSet,
       "llama",
       PodOwner{"llama", "leader"}},
      {"a LeaderWorkerSet's worker",
       {{"ownerReferences", owned("StatefulSet", "llama-0")},
        {"labels",
         {{"leaderworkerset.sigs.k8s.io/name", "llama"},
          {"leaderworkerset.sigs.k8s.io/worker-index", "2"}}}},
       TargetKind::LeaderWorkerSet,
       "llama",
       PodOwner{"llama", "worker"}},
      {"a JobSet's: the set's, not its child Job's",
       {{"ownerReferences", owned("Job", "train-workers-1")},
        {"labels",
         {{"jobset.sigs.k8s.io/jobset-name", "train"},
          {"jobset.sigs.k8s.io/replicatedjob-name", "workers"}}}},
       TargetKind::JobSet,
       "train",
       PodOwner{"train", "workers"}},
      // No label on it names the RayJob: the RayJob finds its pods through
      // status.rayClusterName (app/target_reads.cc, podsKeyOf).
      {"a RayJob's worker: its RayCluster's, by its ownerReference",
       {{"ownerReferences", owned("RayCluster", "tune-x2b9k")},
        {"labels", {{"ray.io/group", "gpu-0"}, {"ray.io/node-type", "worker"}}}},
       TargetKind::RayCluster,
       "tune-x2b9k",
       PodOwner{"tune-x2b9k", "gpu-0"}},
      // Nor does any name the TrainJob: it finds its pods through the
      // JobSet of its name (podsKeyOf).
      {"a TrainJob's node: its JobSet's",
       {{"ownerReferences", owned("Job", "tune-node-0")},
        {"labels",
         {{"jobset.sigs.k8s.io/jobset-name", "tune"},
          {"jobset.sigs.k8s.io/replicatedjob-name", "node"}}}},
       TargetKind::JobSet,
       "tune",
       PodOwner{"tune", "node"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    const json pod = {{"metadata", row.metadata}, {"spec", {{"nodeName", "n1"}}}};
    const auto view = podFromJson(pod);
    CHECK(view.ownerKind == row.kind);
    CHECK(view.owner == row.owner);
    CHECK(adapterOf(row.kind).ownerOf(pod) == row.adapterSays);
  }
}

TEST_CASE("a custom kind's object of the wrong shape reads as empty, never throws") {
  for (const auto kind :
       {TargetKind::RayCluster, TargetKind::RayService, TargetKind::LeaderWorkerSet,
        TargetKind::JobSet, TargetKind::RayJob, TargetKind::TrainJob}) {
    CAPTURE(base::nameOf(kind));
    for (const auto& object : {json::parse(R"({"spec": "nope", "status": []})"),
                               json::parse(R"({"spec": {"workerGroupSpecs": [3, {"template": 1}],
                                   "rayClusterConfig": [], "rayClusterSpec": {"workerGroupSpecs":
                                     [{"replicas": -3}]}, "clusterSelector": 2,
                                   "leaderWorkerTemplate": {"size": -4},
                                   "trainer": {"numNodes": -2, "resourcesPerNode": 3},
                                   "podSpecOverrides": [1, {"targetJobs": 2},
                                     {"targetJobs": [{"name": "node"}], "nodeSelector": 5}],
                                   "replicatedJobs": [7, {"replicas": -2, "template": []},
                                     {"replicas": 4611686018427387904, "template": {"spec":
                                       {"parallelism": 4611686018427387904}}},
                                     {"replicas": 4611686018427387904, "template": {"spec":
                                       {"parallelism": 4611686018427387904}}}]},
                                   "status": {"replicatedJobsStatus": 5, "conditions": {}}})"),
                               json()}) {
      const auto state = targetFromJson(kind, object);
      CHECK(state.replicas >= 0);
      for (const auto& podSet : state.podSets) {
        CHECK(podSet.replicas >= 0);
      }
    }
  }
}

}  // namespace
}  // namespace gpuplacement::core
