#pragma once

// The cached world one reconcile of a GpuWorkload reads, and one reconcile
// of it: the "server" only applies the plan's patch as the API server
// would. Shared by the tables of tests/core/workload_plan_test.cc and
// tests/core/job_plan_test.cc.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/explain/explainer.h"
#include "core/plan/workload_plan.h"
#include "support/cluster_fixture.h"
#include "support/engine_fixture.h"
#include "support/template_patch.h"

namespace gpuplacement::core::planning {

using json = nlohmann::json;

inline const Timestamp kNow = *base::parseRfc3339("2026-11-22T12:00:00Z");

inline json specJson() {
  return {{"targetRef", {{"name", "chat"}}},
          {"workload", {{"kind", "Inference"}}},
          {"model", {{"parameters", "7B"}, {"precision", "fp16"}}},
          {"objective", "CostOptimized"},
          {"constraints", {{"tiers", {"NVIDIA"}}}}};
}

// A JobSet "chat", created suspended for the GpuWorkload "w": one
// replicated job "workers" of one Job running `workerTemplate`, `parallelism`
// pods at once (0: the Job's default).
inline TargetState suspendedJobSet(const json& workerTemplate, int parallelism = 0) {
  json jobSpec = {{"template", workerTemplate}};
  if (parallelism > 0) {
    jobSpec["parallelism"] = parallelism;
    jobSpec["completions"] = parallelism;
  }
  const json object = {
      {"metadata",
       {{"name", "chat"},
        {"uid", "u-js"},
        {"generation", 1},
        {"labels", {{"gpuplacement.io/workload", "w"}}}}},
      {"spec",
       {{"suspend", true},
        {"replicatedJobs",
         {{{"name", "workers"}, {"replicas", 1}, {"template", {{"spec", jobSpec}}}}}}}}};
  return targetFromJson(TargetKind::JobSet, object);
}

inline TargetState chatDeployment() {
  TargetState state;
  state.uid = "u-chat";
  state.generation = 4;
  state.observedGeneration = 4;
  state.replicas = 1;
  state.updatedReplicas = 1;
  state.availableReplicas = 1;
  state.statusReplicas = 1;
  state.nodeSelector = {{"team", "ml"}};
  state.containers = {{"server", {}, {}}};
  return state;
}

// The cached world one reconcile reads.
struct World {
  Policy policy;
  json spec = specJson();
  bool gone = false;
  bool deleting = false;
  // Most rows are written for --finalizer; the rows that say "finalizer
  // off" are the default.
  bool useFinalizer = true;
  std::vector<std::string> finalizers = {kFinalizer};
  WorkloadStatus status;
  std::uint64_t statusHash = 0;  // of the status stored; 0: none, any status is written
  std::optional<TargetState> target = chatDeployment();
  std::string policyProblem;  // non-empty: no engine for the policy
  RolloutView rollouts;
  std::vector<std::string> orphans;
  PendingPods pending;
  std::vector<OwnPod> ownPods;  // the target's pods bound to nodes
  bool podsPlaceable = false;
  std::optional<testing::Cluster> cluster;  // none: no cluster view, as offline
  bool jobResourcesMutable = true;          // a 1.36 API server
  std::string targetUnreadable;             // its kind cannot be listed
  std::string serverVersion = "v1.36.3";
  std::optional<Autoscaler> autoscaler;  // the HorizontalPodAutoscaler scaling the target
  KueueAdmissionView kueue;              // a Job Kueue queues: its Workload and our check

  std::shared_ptr<const PlacementEngine> engine;
  WorkloadObject workload;
  ClusterView view;

  WorkloadInput input() {
    engine = testing::shippedEngine(policy);
    workload = WorkloadObject{};
    workload.uid = "u-w";
    workload.generation = 2;
    workload.deleting = deleting;
    workload.finalizers = finalizers;
    workload.targetName = "chat";
    auto parsed = parseGpuWorkloadSpec(spec, *testing::shippedCatalog());
    if (parsed) {
      workload.targetKind = parsed->targetRef.kind;
      workload.spec = *parsed;
    } else {
      workload.specError = parsed.error();
    }
    workload.status = status;
    workload.statusHash = statusHash;
    WorkloadInput input;
    input.ns = "ml";
    input.name = "w";
    input.workload = gone ? nullptr : &workload;
    input.orphans.clear();
    for (const auto& name : orphans) {
      input.orphans.push_back({TargetKind::Deployment, name});
    }
    input.target = target ? &*target : nullptr;
    input.targetResourceVersion = "41";
    if (policyProblem.empty()) {
      input.policy = PolicyView{engine.get(), 3, "", ""};
    } else {
      input.policy = PolicyView{nullptr, 0, "PolicyNotFound", policyProblem};
    }
    input.rollouts = rollouts;
    input.pending = pending;
    input.ownPods = ownPods;
    input.now = kNow;
    input.useFinalizer = useFinalizer;
    input.podsPlaceable = podsPlaceable;
    input.jobResourcesMutable = jobResourcesMutable;
    input.targetUnreadable = targetUnreadable;
    input.serverVersion = serverVersion;
    input.autoscaler = autoscaler;
    if (cluster) {
      view = clusterViewOf(cluster->state(), engine->catalog(), policy);
      input.cluster = &view;
    }
    input.kueue = kueue;
    return input;
  }

  // What the engine decides for this workload now.
  Placement best() {
    input();
    auto decision = decide(*engine, workload.spec->intent);
    REQUIRE(decision.placement.has_value());
    return *decision.placement;
  }

  // A feasible NVIDIA type at least 1.5 times the best one's price: in force
  // from an earlier price list, so a move to the best saves plenty.
  void placedEarlierOnADearerType(std::chrono::seconds ago) {
    const auto wanted = best();
    const auto& intent = workload.spec->intent;
    for (const auto& instance : engine->catalog().instances) {
      const auto* accelerator = engine->catalog().acceleratorOf(instance);
      if (!accelerator || instance.tier != Tier::NVIDIA || instance.acceleratorCount != 1) {
        continue;
      }
      const auto current = assess(*engine, intent, instance.type, 1, {}, CapacityType::OnDemand);
      if (current.feasible && current.hourlyCost > wanted.hourlyCost * 1.5) {
        // As an earlier decision placed it: its devices and host memory.
        const Placement& inForce = *current.placement;
        const auto scheduling = renderScheduling(inForce, engine->catalog(), policy);
        target = testing::applyPatch(
            *target, *testing::planPatch(*target, &scheduling, {}, "w", "40").patch);
        target->observedGeneration = target->generation;
        status.applied = AppliedRecord{TargetKind::Deployment,
                                       "chat",
                                       target->uid,
                                       instance.type,
                                       accelerator->name,
                                       Tier::NVIDIA,
                                       1,
                                       CapacityType::OnDemand,
                                       target->generation,
                                       2,
                                       base::formatRfc3339(kNow - ago),
                                       false};
        return;
      }
    }
    FAIL("no dearer feasible type in the catalog");
  }

  // The target already carries the best placement, as our patch left it.
  void placedAndRolledOut() {
    const auto wanted = best();
    const auto scheduling = renderScheduling(wanted, engine->catalog(), policy);
    auto plan = testing::planPatch(*target, &scheduling, {}, "w", "40");
    REQUIRE(plan.patch.has_value());
    target = testing::applyPatch(*target, *plan.patch);
    target->observedGeneration = target->generation;
    status.applied = AppliedRecord{TargetKind::Deployment,
                                   "chat",
                                   target->uid,
                                   wanted.instanceType,
                                   wanted.accelerator,
                                   wanted.tier,
                                   wanted.acceleratorCount,
                                   wanted.capacityType,
                                   target->generation,
                                   2,
                                   "2026-11-22T10:00:00Z",
                                   false};
  }
};

// What one reconcile wrote and recorded.
struct Reconciled {
  WorkloadPlan plan;
  std::optional<TargetOutcome> outcome;
  WorkloadRecord record;
};

// The targets a plan releases: a Deployment by its name, others by kind and name.
inline std::vector<std::string> releasedNames(const WorkloadPlan& plan) {
  std::vector<std::string> names;
  for (const auto& target : plan.release) {
    names.push_back(target.kind == TargetKind::Deployment ? target.name : describeTarget(target));
  }
  return names;
}

inline Reconciled reconcile(World& world, std::optional<TargetOutcome::Kind> serverSays = {}) {
  const auto input = world.input();
  Reconciled result;
  result.plan = planWorkload(input);
  if (result.plan.write) {
    const auto& write = *result.plan.write;
    if (auto settled = outcomeWithoutWrite(write, *world.target)) {
      result.outcome = *settled;
    } else if (serverSays == TargetOutcome::Kind::NotFound) {
      result.outcome = TargetOutcome{TargetOutcome::Kind::NotFound, {}, {}, ""};
    } else if (serverSays == TargetOutcome::Kind::JobResourcesImmutable) {
      result.outcome = TargetOutcome{TargetOutcome::Kind::JobResourcesImmutable,
                                     *world.target,
                                     {},
                                     "Job.batch \"chat\" is invalid: spec.template: Invalid "
                                     "value: field is immutable"};
    } else {
      result.outcome = TargetOutcome{TargetOutcome::Kind::Written,
                                     testing::applyPatch(*world.target, *write.patch.patch),
                                     {},
                                     ""};
    }
  }
  result.record = recordWorkload(input, result.plan, result.outcome ? &*result.outcome : nullptr);
  // The digest handed to the status writer is the status's own.
  CHECK(result.record.statusDigest ==
        (result.record.status ? statusDigest(*result.record.status) : 0));
  return result;
}

inline std::map<std::string, std::string> conditionsOf(const WorkloadRecord& record) {
  std::map<std::string, std::string> conditions;
  if (record.status) {
    for (const auto& item : (*record.status)["conditions"]) {
      conditions[item["type"].get<std::string>()] =
          item["status"].get<std::string>() + "/" + item["reason"].get<std::string>();
    }
  }
  return conditions;
}

// The message of a condition the record writes; empty when it writes none.
inline std::string conditionMessage(const WorkloadRecord& record, const std::string& type) {
  if (record.status) {
    for (const auto& item : (*record.status)["conditions"]) {
      if (item["type"] == type) {
        return item["message"].get<std::string>();
      }
    }
  }
  return "";
}

inline std::vector<std::string> eventReasons(const WorkloadRecord& record) {
  std::vector<std::string> reasons;
  for (const auto& event : record.events) {
    reasons.push_back(event.reason);
  }
  return reasons;
}

}  // namespace gpuplacement::core::planning
