// A Job as the target of a GpuWorkload, every branch: placed and resumed in
// one write while it is suspended and has never started; refused whole
// where the server will not change its pod resources; held once it has
// started; its run priced when it ends.
#include "core/plan/job_plan.h"

#include <doctest/doctest.h>

#include "support/workload_world.h"

namespace gpuplacement::core {
namespace {

using namespace planning;
using json = nlohmann::json;

// Seed 002's shape: a suspended Job, created by the chart's admission
// policy, with one container and nothing placed yet.
TargetState trainingJob() {
  TargetState state;
  state.kind = TargetKind::Job;
  state.uid = "u-job";
  state.generation = 1;
  state.replicas = 1;
  state.job.suspended = true;
  state.job.waitsFor = "w";  // labelled gpuplacement.io/workload=w, the GpuWorkload of the world
  state.containers = {{"train", {}, {}}};
  state.podSets = {{"main", "main", true, 1, "/spec/template"}};  // as the Job's adapter reads it
  return state;
}

// A Kueue ResourceFlavor of one GPU model at one capacity type, keyed on
// Karpenter's labels as config/samples/kueue/queues.yaml's are.
ResourceFlavorView kueueFlavor(const std::string& gpu, const std::string& capacity) {
  ResourceFlavorView flavor;
  flavor.nodeLabels = {{"karpenter.k8s.aws/instance-gpu-name", gpu},
                       {"karpenter.sh/capacity-type", capacity}};
  return flavor;
}

World jobWorld() {
  World world;
  world.spec["targetRef"] = {{"kind", "Job"}, {"name", "chat"}};
  world.target = trainingJob();
  world.finalizers = {};
  world.useFinalizer = false;
  return world;
}

// The world after the operator placed and resumed the Job, and the Job
// controller started it.
void placedAndStarted(World& world) {
  auto first = planning::reconcile(world);
  REQUIRE(first.outcome.has_value());
  REQUIRE(first.outcome->kind == TargetOutcome::Kind::Written);
  world.target = first.outcome->state;
  world.target->job.startTime = "2026-11-22T11:00:00Z";
  world.target->job.active = 1;
  world.status = workloadStatusFromJson(*first.record.status);
}

struct JobRow {
  const char* name;
  std::function<void(World&)> arrange;
  std::optional<TargetOutcome::Kind> serverSays;
  // Expected:
  bool writes;
  std::map<std::string, std::string> conditions;  // type -> "Status/Reason"
  std::vector<std::string> events;
  std::function<void(const Reconciled&)> more;
};

const JobRow kJobRows[] = {
    {"suspended, never started: placed and resumed in one patch",
     [](World&) {},
     {},
     true,
     {{"Applied", "True/Applied"}, {"Ready", "False/JobStarting"}},
     {"Placed"},
     [](const Reconciled& r) {
       const auto& patch = *r.plan.write->patch.patch;
       CHECK(patch["spec"]["suspend"] == false);
       CHECK(patch["spec"]["template"]["spec"].contains("nodeSelector"));
       CHECK(patch["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"].contains(
           "nvidia.com/gpu"));
       CHECK(conditionMessage(r.record, "Applied").find("resumed in the same write") !=
             std::string::npos);
       CHECK((*r.record.status)["applied"]["targetKind"] == "Job");
     }},
    {"queued by another controller (spec.managedBy): placed, its resume left to it",
     [](World& w) { w.target->job.queuedElsewhere = true; },
     {},
     true,
     {{"Applied", "True/Applied"}, {"Ready", "False/JobSuspended"}},
     {"Placed"},
     [](const Reconciled& r) {
       CHECK_FALSE((*r.plan.write->patch.patch)["spec"].contains("suspend"));
     }},
    {"queued by Kueue: nothing written; the placement handed to the admission check",
     [](World& w) {
       w.target->job.queuedElsewhere = w.target->job.queuedByKueue = true;
       w.kueue = {"job-chat-1a2b3", "gpu-placement"};
     },
     {},
     false,
     {{"Placed", "True/Placed"},
      {"Applied", "False/WaitingForKueue"},
      {"Ready", "False/WaitingForKueue"}},
     {},
     [](const Reconciled& r) {
       CHECK_FALSE(r.plan.write.has_value());
       REQUIRE(r.plan.kueue.has_value());
       REQUIRE(r.plan.kueue->scheduling.has_value());
       CHECK(r.plan.kueue->podSets == std::vector<std::string>{"main"});
       CHECK_FALSE(r.plan.kueue->scheduling->nodeSelector.empty());
       const auto message = conditionMessage(r.record, "Applied");
       for (const char* part : {"Job chat", "admission check gpu-placement",
                                "Workload job-chat-1a2b3", "does not write the Job"}) {
         CAPTURE(part);
         CHECK(message.find(part) != std::string::npos);
       }
       CHECK_FALSE(r.record.status->contains("applied"));
       CHECK((*r.record.status).contains("placement"));
     }},
    {"queued by Kueue, quota reserved on a flavor: decided within it, for that reservation",
     [](World& w) {
       w.target->job.queuedElsewhere = w.target->job.queuedByKueue = true;
       w.kueue = {"job-chat-1a2b3", "gpu-placement", "l40s-on-demand",
                  kueueFlavor("l40s", "on-demand")};
     },
     {},
     false,
     {{"Placed", "True/Placed"}, {"Applied", "False/WaitingForKueue"}},
     {},
     [](const Reconciled& r) {
       REQUIRE(r.plan.kueue.has_value());
       CHECK(r.plan.kueue->flavor == "l40s-on-demand");
       REQUIRE(r.plan.kueue->scheduling.has_value());
       // CostOptimized alone would take an L4 (g6.xlarge); within the
       // flavor, an L40S.
       CHECK(r.plan.kueue->scheduling->nodeSelector.at("node.kubernetes.io/instance-type")
                 .starts_with("g6e."));
       CHECK(r.record.status->at("placement").at("accelerator") == "L40S");
       CHECK(conditionMessage(r.record, "Applied").find("decided within flavor l40s-on-demand") !=
             std::string::npos);
     }},
    {"queued by Kueue, quota reserved on a spot flavor, on-demand asked: Retry, and why",
     [](World& w) {
       w.target->job.queuedElsewhere = w.target->job.queuedByKueue = true;
       w.kueue = {"job-chat-1a2b3", "gpu-placement", "l40s-spot", kueueFlavor("l40s", "spot")};
     },
     {},
     false,
     {{"Applied", "False/WaitingForKueue"}},
     {},
     [](const Reconciled& r) {
       REQUIRE(r.plan.kueue.has_value());
       CHECK_FALSE(r.plan.kueue->scheduling.has_value());
       CHECK(r.plan.kueue->flavor == "l40s-spot");
       CHECK(r.plan.kueue->unplaced ==
             "the flavor l40s-spot reaches spot capacity only, and "
             "spec.constraints.capacityType is OnDemand");
       const auto message = conditionMessage(r.record, "Applied");
       CAPTURE(message);
       CHECK(message.find("Kueue reserved flavor l40s-spot") != std::string::npos);
       CHECK(message.find("answers Retry") != std::string::npos);
     }},
    {"queued by Kueue, none of its Workload's checks the operator's: the status says so",
     [](World& w) {
       w.target->job.queuedElsewhere = w.target->job.queuedByKueue = true;
       w.kueue = {"job-chat-1a2b3", ""};
     },
     {},
     false,
     {{"Applied", "False/WaitingForKueue"}},
     {},
     [](const Reconciled& r) {
       CHECK(conditionMessage(r.record, "Applied").find("admissionChecksStrategy") !=
             std::string::npos);
     }},
    {"queued by Kueue and admitted (started): Applied through Kueue, still nothing written",
     [](World& w) {
       w.target->job.queuedElsewhere = w.target->job.queuedByKueue = true;
       w.target->job.suspended = false;
       w.target->job.startTime = "2026-11-22T11:00:00Z";
       w.target->job.active = 1;
       w.kueue = {"job-chat-1a2b3", "gpu-placement"};
     },
     {},
     false,
     {{"Applied", "True/ThroughKueue"}, {"Ready", "True/ThroughKueue"}},
     {},
     [](const Reconciled& r) {
       CHECK_FALSE(r.plan.write.has_value());
       CHECK(r.plan.kueue.has_value());
     }},
    {"a 1.34 server, the Job asks for no devices: nothing written, the Job stays suspended",
     [](World& w) {
       w.jobResourcesMutable = false;
       w.serverVersion = "v1.34.10";
     },
     {},
     false,
     {{"Placed", "True/Placed"}, {"Applied", "False/JobResourcesImmutable"}},
     {"JobResourcesImmutable"},
     [](const Reconciled& r) {
       const auto message = conditionMessage(r.record, "Applied");
       for (const char* part :
            {"v1.34.10", "KEP-5440", "spec.template.spec.containers[train].resources",
             "nvidia.com/gpu=1", "stays suspended", "upgrade the control plane to 1.36"}) {
         CAPTURE(part);
         CHECK(message.find(part) != std::string::npos);
       }
       CHECK_FALSE(r.record.status->contains("applied"));
     }},
    {"a 1.34 server, the Job's own requests match: the directives and the resume go through",
     [](World& w) {
       w.jobResourcesMutable = false;
       w.serverVersion = "v1.34.10";
       w.target->containers = {{"train", {{"nvidia.com/gpu", "1"}}, {{"nvidia.com/gpu", "1"}}}};
     },
     {},
     true,
     {{"Applied", "True/Applied"}},
     {"Placed"},
     [](const Reconciled& r) {
       CHECK_FALSE(r.plan.write->patch.resourcesChanged);
       CHECK((*r.plan.write->patch.patch)["spec"]["suspend"] == false);
     }},
    {"a 1.34 server, the Job asks for four GPUs: placed on four, as it asks, not refused",
     [](World& w) {
       w.jobResourcesMutable = false;
       w.serverVersion = "v1.34.10";
       w.target->containers = {{"train", {{"nvidia.com/gpu", "4"}}, {{"nvidia.com/gpu", "4"}}}};
     },
     {},
     true,
     {{"Applied", "True/Applied"}},
     {"Placed"},
     [](const Reconciled& r) {
       CHECK_FALSE(r.plan.write->patch.resourcesChanged);
       CHECK(r.plan.wanted.acceleratorCount == 4);
       CHECK(conditionMessage(r.record, "Placed")
                 .find("only placements asked for with nvidia.com/gpu: 4 considered, as the pod "
                       "set main asks") != std::string::npos);
     }},
    {"the same Job on a 1.36 server: decided freely, and the team's own count stands in the way",
     [](World& w) {
       w.target->containers = {{"train", {{"nvidia.com/gpu", "4"}}, {{"nvidia.com/gpu", "4"}}}};
     },
     {},
     true,
     {{"Applied", "False/Conflict"}},
     {"Conflict"},
     [](const Reconciled& r) { CHECK(r.plan.wanted.acceleratorCount == 1); }},
    {"the server refuses the resources (a 1.36 with the gate off): said, with its words",
     [](World&) {},
     TargetOutcome::Kind::JobResourcesImmutable,
     true,
     {{"Applied", "False/JobResourcesImmutable"}},
     {"JobResourcesImmutable"},
     [](const Reconciled& r) {
       CHECK(conditionMessage(r.record, "Applied").find("field is immutable") != std::string::npos);
     }},
    {"started before it was placed: never patched, said how to create it",
     [](World& w) {
       w.target->job.suspended = false;
       w.target->job.startTime = "2026-11-22T11:00:00Z";
     },
     {},
     false,
     {{"Applied", "False/JobStartedUnplaced"}},
     {"JobStartedUnplaced"},
     [](const Reconciled& r) {
       CHECK(conditionMessage(r.record, "Applied").find("gpuplacement.io/workload=w") !=
             std::string::npos);
     }},
    {"started on its placement, prices moved: held, the better one a note for its next run",
     [](World& w) {
       placedAndStarted(w);
       w.policy.prices[w.status.applied->instanceType] = {100.0, std::nullopt};
     },
     {},
     false,
     {{"Applied", "True/Applied"}, {"Ready", "True/JobRunning"}},
     {},
     [](const Reconciled& r) {
       REQUIRE(r.record.status->contains("recommendation"));
       CHECK((*r.record.status)["recommendation"]["note"].get<std::string>().find(
                 "a running Job is never moved") != std::string::npos);
     }},
    {"started, its pods unschedulable: said, not moved",
     [](World& w) {
       placedAndStarted(w);
       w.pending = {1, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", kNow};
     },
     {},
     false,
     {{"Ready", "False/Unschedulable"}},
     {"Unschedulable"},
     {}},
    {"completed: the run priced at the placement it ran on",
     [](World& w) {
       placedAndStarted(w);
       w.target->job.active = 0;
       w.target->job.end = JobProgress::End::Complete;
       w.target->job.endTime = "2026-11-22T13:30:00Z";  // 2 h 30 min
     },
     {},
     false,
     {{"Ready", "True/JobComplete"}},
     {"JobEnded"},
     [](const Reconciled& r) {
       const auto& run = (*r.record.status)["run"];
       CHECK(run["durationSeconds"] == 9000);
       CHECK(run["outcome"] == "Complete");
       const double hourly = std::stod(run["hourlyCost"].get<std::string>());
       CHECK(std::stod(run["cost"].get<std::string>()) ==
             doctest::Approx(hourly * 2.5).epsilon(1e-3));
       CHECK(run["instanceType"] == (*r.record.status)["placement"]["instanceType"]);
     }},
    {"failed: the run priced, the reason said",
     [](World& w) {
       placedAndStarted(w);
       w.target->job.active = 0;
       w.target->job.end = JobProgress::End::Failed;
       w.target->job.endTime = "2026-11-22T11:10:00Z";
       w.target->job.endReason =
           "BackoffLimitExceeded: Job has reached the specified backoff limit";
     },
     {},
     false,
     {{"Ready", "False/JobFailed"}},
     {"JobEnded"},
     [](const Reconciled& r) {
       CHECK((*r.record.status)["run"]["outcome"] == "Failed");
       CHECK(conditionMessage(r.record, "Ready").find("BackoffLimitExceeded") != std::string::npos);
     }},
    {"suspended but not labelled for this GpuWorkload (a person's pause): placed, not resumed",
     [](World& w) { w.target->job.waitsFor.clear(); },
     {},
     true,
     {{"Applied", "True/Applied"}, {"Ready", "False/JobSuspended"}},
     {"Placed"},
     [](const Reconciled& r) {
       CHECK_FALSE((*r.plan.write->patch.patch)["spec"].contains("suspend"));
       CHECK(conditionMessage(r.record, "Ready").find("whoever suspended it resumes it") !=
             std::string::npos);
     }},
    {"started, its pods unschedulable past fallbackAfter: no type left for another, not moved",
     [](World& w) {
       placedAndStarted(w);
       w.pending = {1, "0/3 nodes are available: 3 Insufficient nvidia.com/gpu.",
                    kNow - std::chrono::hours(1)};
     },
     {},
     false,
     {{"Ready", "False/Unschedulable"}},
     {"Unschedulable"},
     [](const Reconciled& r) {
       CHECK_FALSE(r.record.status->contains("unavailable"));
       CHECK(conditionMessage(r.record, "Ready").find("delete it and create it again") !=
             std::string::npos);
     }},
    {"a Job of the same name created again (another uid): placed afresh, not held",
     [](World& w) {
       placedAndStarted(w);
       w.target = trainingJob();
       w.target->uid = "u-job-2";
     },
     {},
     true,
     {{"Applied", "True/Applied"}},
     {"Placed"},
     [](const Reconciled& r) {
       CHECK((*r.plan.write->patch.patch)["spec"]["suspend"] == false);
       CHECK((*r.record.status)["applied"]["targetUid"] == "u-job-2");
     }},
    {"deleted after its run was priced (ttlSecondsAfterFinished): nothing wrong, no Warning",
     [](World& w) {
       placedAndStarted(w);
       w.target->job.active = 0;
       w.target->job.end = JobProgress::End::Complete;
       w.target->job.endTime = "2026-11-22T11:30:00Z";
       const auto ended = planning::reconcile(w);
       w.status = workloadStatusFromJson(*ended.record.status);
       w.target.reset();
     },
     {},
     false,
     {{"Applied", "False/JobDeleted"}, {"Ready", "True/JobComplete"}},
     {},
     [](const Reconciled& r) {
       CHECK(r.record.status->contains("run"));
       CHECK_FALSE(r.record.inForce.has_value());
     }},
    {"a price change for a placed Job its queue has not started: moved, without a rollout slot",
     [](World& w) {
       w.target->job.queuedElsewhere = true;
       auto first = planning::reconcile(w);
       w.target = first.outcome->state;  // placed, still suspended: Kueue has not admitted it
       w.status = workloadStatusFromJson(*first.record.status);
       w.policy.prices[w.status.applied->instanceType] = {100.0, std::nullopt};
       w.policy.replacement.cooldown = std::chrono::seconds(0);
       w.rollouts.inFlight = 99;  // every slot taken by Deployments
     },
     {},
     true,
     {{"Applied", "True/Applied"}},
     {"Replaced"},
     [](const Reconciled& r) {
       CHECK(r.plan.rollout == RolloutStep::None);
       CHECK_FALSE(r.record.inForce.has_value());  // queued: it holds no node yet
     }},
    {"running when nothing can be placed any more (its type disabled): its run is priced all "
     "the same",
     [](World& w) {
       placedAndStarted(w);
       w.policy.disabledInstanceTypes.insert(w.status.applied->instanceType);
       w.spec["constraints"]["instanceTypes"] = {w.status.applied->instanceType};
       w.target->job.active = 0;
       w.target->job.end = JobProgress::End::Complete;
       w.target->job.endTime = "2026-11-22T12:00:00Z";
     },
     {},
     false,
     {{"Placed", "False/CannotPlace"}, {"Ready", "True/JobComplete"}},
     {"CannotPlace", "JobEnded"},
     [](const Reconciled& r) { CHECK(r.record.status->contains("run")); }},
    {"its Jobs unreadable (RBAC): said, not taken for deleted",
     [](World& w) {
       placedAndStarted(w);
       w.target.reset();
       w.targetUnreadable = "the operator cannot list jobs (HTTP 403)";
     },
     {},
     false,
     {{"Applied", "False/TargetUnreadable"}},
     {"TargetUnreadable"},
     {}},
    {"Recommend mode: the Job is left suspended, and the status says so",
     [](World& w) { w.spec["mode"] = "Recommend"; },
     {},
     false,
     {{"Applied", "False/RecommendOnly"}},
     {},
     [](const Reconciled& r) {
       CHECK(conditionMessage(r.record, "Applied").find("stays suspended") != std::string::npos);
     }},
};

}  // namespace

TEST_CASE("a Job: placed and resumed once, held once started, its run priced") {
  for (const auto& row : kJobRows) {
    CAPTURE(std::string(row.name));
    World world = jobWorld();
    row.arrange(world);
    const auto result = planning::reconcile(world, row.serverSays);
    CHECK(result.plan.write.has_value() == row.writes);
    const auto conditions = conditionsOf(result.record);
    for (const auto& [type, expected] : row.conditions) {
      CAPTURE(type);
      REQUIRE(conditions.count(type) == 1);
      CHECK(conditions.at(type) == expected);
    }
    CHECK(eventReasons(result.record) == row.events);
    if (row.more) {
      row.more(result);
    }
  }
}

// A JobSet, created suspended for the GpuWorkload "w", whose workers ask
// for `gpus` NVIDIA GPUs each (none: its manifest asks for no devices).
TargetState trainingJobSet(int gpus) {
  json workers = {{"metadata", {{"labels", {{"app", "train"}}}}},
                  {"spec", {{"containers", {{{"name", "train"}}}}}}};
  if (gpus > 0) {
    workers["spec"]["containers"][0]["resources"] = {{"limits", {{"nvidia.com/gpu", gpus}}},
                                                     {"requests", {{"nvidia.com/gpu", gpus}}}};
  }
  return suspendedJobSet(workers);
}

TEST_CASE("a JobSet: placed and resumed while suspended; its resources stay as created") {
  const auto jobSetWorld = [](int gpus) {
    World world = jobWorld();
    world.spec["targetRef"] = {{"kind", "JobSet"}, {"name", "chat"}};
    world.target = trainingJobSet(gpus);
    return world;
  };
  SUBCASE("its manifest asks for the devices: scheduling written and resumed in one JSON patch") {
    World world = jobSetWorld(1);
    const auto result = planning::reconcile(world);
    REQUIRE(result.plan.write.has_value());
    const auto& patch = result.plan.write->patch;
    CHECK_FALSE(patch.resourcesChanged);
    REQUIRE(patch.patch.has_value());
    REQUIRE(patch.patch->is_array());  // RFC 6902: a custom resource
    bool resumes = false;
    bool selects = false;
    for (const auto& op : *patch.patch) {
      const auto path = op.value("path", "");
      resumes = resumes || (path == "/spec/suspend" && op["value"] == false);
      selects =
          selects ||
          path.rfind("/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector", 0) == 0;
    }
    CHECK(resumes);
    CHECK(selects);
    CHECK(conditionsOf(result.record).at("Applied") == "True/Applied");
  }
  SUBCASE("its manifest asks for four GPUs a worker: placed on four, though one would hold it") {
    World world = jobSetWorld(4);
    const auto result = planning::reconcile(world);
    REQUIRE(result.plan.write.has_value());
    CHECK_FALSE(result.plan.write->patch.resourcesChanged);
    CHECK(result.plan.wanted.acceleratorCount == 4);
    CHECK(conditionsOf(result.record).at("Applied") == "True/Applied");
  }
  SUBCASE("its manifest asks for none: nothing written, the condition says what to write") {
    World world = jobSetWorld(0);
    const auto result = planning::reconcile(world);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/ResourcesFixed");
    const auto message = conditionMessage(result.record, "Applied");
    for (const char* part :
         {"JobSet chat", "containers[train].resources", "nvidia.com/gpu=1",
          "pod template of workers", "stays suspended and unchanged", "create it again"}) {
      CAPTURE(part);
      CHECK(message.find(part) != std::string::npos);
    }
    CHECK_FALSE(result.record.status->contains("applied"));
  }
  SUBCASE("queued by Kueue: placed, its resume left to Kueue") {
    World world = jobSetWorld(1);
    world.target->job.queuedElsewhere = true;
    const auto result = planning::reconcile(world);
    REQUIRE(result.plan.write.has_value());
    for (const auto& op : *result.plan.write->patch.patch) {
      CHECK(op.value("path", "") != "/spec/suspend");
    }
    CHECK(conditionsOf(result.record).at("Ready") == "False/JobSuspended");
    CHECK(conditionMessage(result.record, "Ready").find("JobSet chat carries the placement") !=
          std::string::npos);
  }
}

// A TrainJob for the GpuWorkload "w" on the torch-distributed runtime,
// created suspended, of `nodes` nodes each asking for `resources` (none:
// no spec.trainer.resourcesPerNode).
TargetState suspendedTrainJob(int nodes, const json& resources) {
  json trainer = {{"numNodes", nodes}};
  if (!resources.empty()) {
    trainer["resourcesPerNode"] = {{"limits", resources}, {"requests", resources}};
  }
  const json object = {{"metadata",
                        {{"name", "chat"},
                         {"uid", "u-tj"},
                         {"generation", 1},
                         {"labels", {{"gpuplacement.io/workload", "w"}}}}},
                       {"spec",
                        {{"runtimeRef", {{"name", "torch-distributed"}}},
                         {"trainer", trainer},
                         {"suspend", true},
                         {"managedBy", "trainer.kubeflow.org/trainjob-controller"}}},
                       {"status", {{"conditions", {{{"type", "Suspended"}, {"status", "True"}}}}}}};
  return targetFromJson(TargetKind::TrainJob, object);
}

TEST_CASE("a TrainJob: placed while suspended, resumed by a write of its own; resources fixed") {
  const auto trainJobWorld = [](int nodes, const json& resources) {
    World world = jobWorld();
    world.spec["targetRef"] = {{"kind", "TrainJob"}, {"name", "chat"}};
    world.target = suspendedTrainJob(nodes, resources);
    return world;
  };
  const auto paths = [](const json& patch) {
    std::vector<std::string> all;
    for (const auto& op : patch) {
      all.push_back(op.value("path", ""));
    }
    return all;
  };
  const json oneGpu = {{"nvidia.com/gpu", 1}};
  SUBCASE("placed in its podSpecOverrides, left suspended; the next write only resumes it") {
    World world = trainJobWorld(1, oneGpu);
    const auto first = planning::reconcile(world);
    REQUIRE(first.plan.write.has_value());
    const auto& placing = first.plan.write->patch;
    CHECK_FALSE(placing.resourcesChanged);
    REQUIRE(placing.patch.has_value());
    CAPTURE(placing.patch->dump());
    // The Trainer's webhook refuses a change of podSpecOverrides in a write
    // that resumes it: this one leaves spec.suspend alone.
    CHECK(paths(*placing.patch) == std::vector<std::string>{"/metadata/resourceVersion",
                                                            "/metadata/annotations",
                                                            "/spec/podSpecOverrides"});
    const auto& entry = placing.patch->back()["value"][0];
    CHECK(entry["targetJobs"] == json::array({{{"name", "node"}}}));
    CHECK(entry["nodeSelector"]["node.kubernetes.io/instance-type"] ==
          first.plan.wanted.instanceType);
    CHECK(entry["tolerations"].size() == 1);
    CHECK(conditionsOf(first.record).at("Applied") == "True/Applied");
    CHECK(conditionsOf(first.record).at("Ready") == "False/JobSuspended");
    CHECK(conditionMessage(first.record, "Ready").find("the operator resumes it") !=
          std::string::npos);
    REQUIRE(first.outcome.has_value());
    REQUIRE(first.outcome->kind == TargetOutcome::Kind::Written);
    world.target = first.outcome->state;
    world.status = workloadStatusFromJson(*first.record.status);
    CHECK(world.target->job.suspended);
    const auto second = planning::reconcile(world);
    REQUIRE(second.plan.write.has_value());
    REQUIRE(second.plan.write->patch.patch.has_value());
    const auto& resuming = *second.plan.write->patch.patch;
    CHECK(paths(resuming) ==
          std::vector<std::string>{"/metadata/resourceVersion", "/spec/suspend"});
    CHECK(resuming.back()["value"] == false);
    CHECK(conditionsOf(second.record).at("Applied") == "True/Applied");
    CHECK(conditionMessage(second.record, "Applied").find("resumed by a write of its own") !=
          std::string::npos);
    // The resume puts nothing back: no Restored, no taking back counted.
    CHECK(eventReasons(second.record).empty());
    CHECK_FALSE(second.record.status->contains("reverts"));
    // Resumed, and seen by the Trainer: held on its placement.
    world.target = second.outcome->state;
    world.status = workloadStatusFromJson(*second.record.status);
    world.target->job.startTime = "2026-11-22T11:00:00Z";
    world.target->job.active = 1;
    const auto third = planning::reconcile(world);
    const bool writes = third.plan.write && third.plan.write->patch.patch.has_value();
    CHECK_FALSE(writes);
    CHECK(conditionsOf(third.record).at("Ready") == "True/JobRunning");
  }
  SUBCASE("its manifest asks for no device: nothing written, resourcesPerNode named") {
    World world = trainJobWorld(1, json::object());
    const auto result = planning::reconcile(world);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/ResourcesFixed");
    const auto message = conditionMessage(result.record, "Applied");
    for (const char* part : {"TrainJob chat", "spec.trainer.resourcesPerNode nvidia.com/gpu=1",
                             "for node", "stays suspended and unchanged", "create it again"}) {
      CAPTURE(part);
      CHECK(message.find(part) != std::string::npos);
    }
    CHECK_FALSE(result.record.status->contains("applied"));
  }
  SUBCASE("queued by Kueue: placed, its resume left to Kueue") {
    World world = trainJobWorld(1, oneGpu);
    world.target->job.queuedElsewhere = true;
    const auto result = planning::reconcile(world);
    REQUIRE(result.plan.write.has_value());
    for (const auto& path : paths(*result.plan.write->patch.patch)) {
      CHECK(path != "/spec/suspend");
    }
    CHECK(conditionsOf(result.record).at("Ready") == "False/JobSuspended");
    CHECK(conditionMessage(result.record, "Ready").find("its queue") != std::string::npos);
  }
  SUBCASE("a model no node holds and numNodes of another size: numNodes named, nothing written") {
    // Llama-3-70B trained in full on Trainium: three trn1.32xlarge.
    const auto trainiumWorld = [](int nodes) {
      World world;
      world.spec["targetRef"] = {{"kind", "TrainJob"}, {"name", "chat"}};
      world.target =
          suspendedTrainJob(nodes, {{"aws.amazon.com/neuron", 16}, {"vpc.amazonaws.com/efa", 8}});
      world.spec["workload"] = {{"kind", "Training"}};
      world.spec["model"] = {{"parameters", "70.6B"}, {"precision", "bf16"}};
      world.spec["constraints"] = {{"tiers", {"Trainium"}}};
      return world;
    };
    World single = trainiumWorld(1);
    const auto result = planning::reconcile(single);
    CHECK(result.plan.wanted.nodesPerReplica == 3);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/GroupSizeNeeded");
    CHECK(conditionMessage(result.record, "Applied")
              .find("spec.trainer.numNodes is 1: set it to 3") != std::string::npos);
    // A group the team sized binds the placement: two nodes cannot hold it.
    World pair = trainiumWorld(2);
    const auto two = planning::reconcile(pair);
    CHECK_FALSE(two.plan.write.has_value());
    CHECK(conditionsOf(two.record).at("Placed") == "False/CannotPlace");
    CHECK(conditionMessage(two.record, "Placed")
              .find("nor does a group of 2 nodes, as spec.trainer.numNodes gives") !=
          std::string::npos);
  }
}

// A RayJob for the GpuWorkload "w", created suspended, whose one worker
// group asks for no device: KubeRay takes the placement's resources.
TargetState fineTuneRayJob(bool selectsCluster) {
  const json head = {{"spec", {{"containers", {{{"name", "ray-head"}}}}}}};
  const json worker = {{"spec", {{"containers", {{{"name", "ray-worker"}}}}}}};
  json spec = {
      {"entrypoint", "python tune.py"},
      {"shutdownAfterJobFinishes", true},
      {"suspend", true},
      {"rayClusterSpec",
       {{"headGroupSpec", {{"template", head}}},
        {"workerGroupSpecs", {{{"groupName", "gpu"}, {"replicas", 2}, {"template", worker}}}}}}};
  if (selectsCluster) {
    spec.erase("suspend");
    spec.erase("rayClusterSpec");
    spec["clusterSelector"] = {{"ray.io/cluster", "shared"}};
  }
  const json object = {{"metadata",
                        {{"name", "chat"},
                         {"uid", "u-rj"},
                         {"generation", 1},
                         {"labels", {{"gpuplacement.io/workload", "w"}}}}},
                       {"spec", spec},
                       {"status", {{"jobDeploymentStatus", "Suspended"}}}};
  return targetFromJson(TargetKind::RayJob, object);
}

TEST_CASE("a RayJob: placed and resumed in one write while suspended, its resources with it") {
  const auto rayJobWorld = [](bool selectsCluster) {
    World world = jobWorld();
    world.spec["targetRef"] = {{"kind", "RayJob"}, {"name", "chat"}};
    world.target = fineTuneRayJob(selectsCluster);
    return world;
  };
  SUBCASE("its worker group's template placed, devices too, and the resume, in one JSON patch") {
    World world = rayJobWorld(false);
    const auto result = planning::reconcile(world);
    REQUIRE(result.plan.write.has_value());
    const auto& patch = result.plan.write->patch;
    CHECK(patch.resourcesChanged);  // KubeRay takes them: no ResourcesFixed
    REQUIRE(patch.patch.has_value());
    REQUIRE(patch.patch->is_array());
    bool resumes = false;
    bool selects = false;
    bool headTouched = false;
    for (const auto& op : *patch.patch) {
      const auto path = op.value("path", "");
      resumes = resumes || (path == "/spec/suspend" && op["value"] == false);
      selects =
          selects ||
          path.rfind("/spec/rayClusterSpec/workerGroupSpecs/0/template/spec/nodeSelector", 0) == 0;
      headTouched = headTouched || path.rfind("/spec/rayClusterSpec/headGroupSpec", 0) == 0;
    }
    CHECK(resumes);
    CHECK(selects);
    CHECK_FALSE(headTouched);  // the head runs Ray's control processes on CPU
    CHECK(conditionsOf(result.record).at("Applied") == "True/Applied");
    CHECK(result.plan.wanted.replicas == 2);
  }
  SUBCASE("started by KubeRay on the placement: held, and its run priced when it ends") {
    World world = rayJobWorld(false);
    placedAndStarted(world);
    world.target->job.active = 0;
    world.target->job.end = JobProgress::End::Failed;
    world.target->job.endTime = "2026-11-22T11:30:00Z";
    world.target->job.endReason = "JobDeploymentStatusTransitionGracePeriodExceeded";
    const auto ended = planning::reconcile(world);
    CHECK_FALSE(ended.plan.write.has_value());
    CHECK(conditionsOf(ended.record).at("Ready") == "False/JobFailed");
    REQUIRE(ended.record.status.has_value());
    const auto& run = (*ended.record.status)["run"];
    CHECK(run["outcome"] == "Failed");
    CHECK(run["durationSeconds"] == 1800);
    CHECK(conditionMessage(ended.record, "Ready").find("RayJob chat failed on") !=
          std::string::npos);
  }
  SUBCASE("selecting a running RayCluster: nothing written, the condition names the cluster") {
    World world = rayJobWorld(true);
    const auto result = planning::reconcile(world);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/PlacedThrough");
    CHECK(conditionsOf(result.record).at("Placed") == "True/Placed");
    const auto message = conditionMessage(result.record, "Applied");
    for (const char* part : {"RayJob chat runs on RayCluster shared", "spec.clusterSelector",
                             "spec.targetRef kind: RayCluster, name: shared"}) {
      CAPTURE(part);
      CHECK(message.find(part) != std::string::npos);
    }
    CHECK_FALSE(result.record.status->contains("applied"));
  }
}

TEST_CASE("a completed Job's run is recorded once, never repriced, and costs nothing from then") {
  World world = jobWorld();
  placedAndStarted(world);
  CHECK(planning::reconcile(world)
            .record.inForce.has_value());  // running: counted in the cost gauges
  world.target->job.active = 0;
  world.target->job.end = JobProgress::End::Complete;
  world.target->job.endTime = "2026-11-22T12:00:00Z";
  const auto ended = planning::reconcile(world);
  REQUIRE(ended.record.status.has_value());
  CHECK_FALSE(ended.record.inForce.has_value());  // ended: it holds no node
  const auto run = (*ended.record.status)["run"];
  world.status = workloadStatusFromJson(*ended.record.status);
  {
    world.statusHash = statusDigest(*ended.record.status);
    const auto input = world.input();
    const auto again = recordWorkload(input, planWorkload(input), nullptr);
    CHECK_FALSE(again.status.has_value());
    CHECK(again.events.empty());
  }
  // Prices change after the run: the run keeps the price it was priced at.
  world.policy.prices[world.status.applied->instanceType] = {100.0, std::nullopt};
  const auto later = planning::reconcile(world);
  REQUIRE(later.record.status.has_value());
  CHECK((*later.record.status)["run"] == run);
  CHECK(eventReasons(later.record).empty());
}

TEST_CASE(
    "deleting the GpuWorkload of a started Job releases it: the record goes, the pods run on") {
  World world = jobWorld();
  placedAndStarted(world);
  world.deleting = true;
  world.finalizers = {kFinalizer};
  const auto result = planning::reconcile(world);
  CHECK(releasedNames(result.plan) == std::vector<std::string>{"Job chat"});
  const auto release = testing::planPatch(*world.target, nullptr, {}, "w", "50");
  REQUIRE(release.patch.has_value());
  CHECK_FALSE(release.patch->contains("spec"));
}

TEST_CASE("the run's figures: what the nodes cost for as long as it ran") {
  TargetState job = trainingJob();
  job.job.startTime = "2026-11-25T10:00:00Z";
  Placement placement;
  placement.instanceType = "trn1.32xlarge";
  placement.replicas = 2;
  placement.totalHourlyCost = 2 * 21.50;
  CHECK_FALSE(jobRun(job, "llama-training", placement).has_value());  // still running
  job.job.end = JobProgress::End::Complete;
  job.job.endTime = "2026-11-25T13:15:00Z";
  const auto run = jobRun(job, "llama-training", placement);
  REQUIRE(run.has_value());
  CHECK(run->durationSeconds == 3 * 3600 + 15 * 60);
  CHECK(run->pods == 2);
  CHECK(run->hourlyCost == "43");
  CHECK(run->cost == "139.75");  // 43 $/h x 3.25 h
  job.job.endTime = "not a time";
  CHECK_FALSE(jobRun(job, "llama-training", placement).has_value());
}

TEST_CASE("after the resume, the Job's own change writes no status until it starts") {
  World world = jobWorld();
  auto first = planning::reconcile(world);
  REQUIRE(first.record.status.has_value());
  world.target = first.outcome->state;  // resumed; the Job controller has not started it yet
  world.status = workloadStatusFromJson(*first.record.status);
  world.statusHash = statusDigest(*first.record.status);
  const auto input = world.input();
  const auto next = recordWorkload(input, planWorkload(input), nullptr);
  CHECK_MESSAGE(!next.status.has_value(),
                (next.status ? nlohmann::json::diff(*first.record.status, *next.status).dump()
                             : std::string()));
  CHECK(next.events.empty());
}

}  // namespace gpuplacement::core
