// Placing a kind pod set by pod set, and writing a custom resource by JSON
// patch (core/plan/pod_sets_patch.h, core/kinds/strategic_merge.h).
#include <doctest/doctest.h>

#include "core/kinds/ownership.h"
#include "core/kinds/strategic_merge.h"
#include "core/plan/pod_sets_patch.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

TEST_CASE("a pod template with a strategic merge patch applied, as the API server applies it") {
  struct Row {
    const char* label;
    const char* before;
    const char* patch;
    const char* after;
  };
  const Row rows[] = {
      {"a map merges key by key; null removes a key",
       R"({"spec": {"nodeSelector": {"disk": "ssd", "old": "x"}}})",
       R"({"spec": {"nodeSelector": {"gpu": "l4", "old": null}}})",
       R"({"spec": {"nodeSelector": {"disk": "ssd", "gpu": "l4"}}})"},
      {"tolerations are replaced whole",
       R"({"spec": {"tolerations": [{"key": "a"}, {"key": "b"}]}})",
       R"({"spec": {"tolerations": [{"key": "b"}, {"key": "c"}]}})",
       R"({"spec": {"tolerations": [{"key": "b"}, {"key": "c"}]}})"},
      {"containers merge by name; the others stay, in order",
       R"({"spec": {"containers": [{"name": "a", "image": "x",
                                    "resources": {"limits": {"cpu": "1"}}},
                                   {"name": "b"}]}})",
       R"({"spec": {"containers": [{"name": "a",
                                    "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})",
       R"({"spec": {"containers": [{"name": "a", "image": "x",
                                    "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": "1"}}},
                                   {"name": "b"}]}})"},
      {"$patch: delete removes the entry of that key; an emptied list goes",
       R"({"spec": {"schedulingGates": [{"name": "gpuplacement.io/placement"}]}})",
       R"({"spec": {"schedulingGates": [{"$patch": "delete",
                                         "name": "gpuplacement.io/placement"}]}})",
       R"({"spec": {}})"},
      {"a spread merges by topologyKey",
       R"({"spec": {"topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2}]}})",
       R"({"spec": {"topologySpreadConstraints": [{"topologyKey": "karpenter.sh/capacity-type",
                                                   "maxSkew": 1}]}})",
       R"({"spec": {"topologySpreadConstraints": [{"topologyKey": "zone", "maxSkew": 2},
                                                  {"topologyKey": "karpenter.sh/capacity-type",
                                                   "maxSkew": 1}]}})"},
      {"fields the template lacks are made", R"({})",
       R"({"metadata": {"annotations": {"a": "b"}}, "spec": {"nodeSelector": {"k": "v"}}})",
       R"({"metadata": {"annotations": {"a": "b"}}, "spec": {"nodeSelector": {"k": "v"}}})"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    CHECK(mergePodTemplate(json::parse(row.before), json::parse(row.patch)) ==
          json::parse(row.after));
  }
}

const Toleration kGpu{"nvidia.com/gpu", "Exists", "", "NoSchedule"};

Scheduling l4() {
  Scheduling scheduling;
  scheduling.nodeSelector = {{"karpenter.k8s.aws/instance-gpu-name", "l4"}};
  scheduling.tolerations = {kGpu};
  scheduling.resources = {{"nvidia.com/gpu", "1"}};
  return scheduling;
}

// A RayCluster as the team wrote it: a CPU head and two GPU worker groups,
// one of which already sets its own toleration.
json rayCluster() {
  return json::parse(R"({
    "apiVersion": "ray.io/v1", "kind": "RayCluster",
    "metadata": {"name": "llm", "namespace": "ml", "resourceVersion": "41", "uid": "u1"},
    "spec": {
      "headGroupSpec": {"rayStartParams": {"num-cpus": "0"}, "template": {"spec": {
        "containers": [{"name": "ray-head", "image": "rayproject/ray:2.46.0"}]}}},
      "workerGroupSpecs": [
        {"groupName": "small", "replicas": 1, "template": {"spec": {
          "containers": [{"name": "ray-worker", "image": "vllm"}]}}},
        {"groupName": "large", "replicas": 2, "template": {"spec": {
          "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "ml",
                           "effect": "NoSchedule"}],
          "containers": [{"name": "ray-worker", "image": "vllm",
                          "resources": {"limits": {"cpu": "8"}}}]}}}]}})");
}

PatchRequest placing(const Scheduling* desired, std::vector<std::string> podSets = {}) {
  PatchRequest request;
  request.desired = desired;
  request.workload = "llm";
  request.resourceVersion = "41";
  request.podSets = std::move(podSets);
  return request;
}

// The object after the API server applies the JSON patch (its
// resourceVersion precondition aside).
json applied(json object, const json& patch) {
  object = object.patch(patch);
  object["metadata"]["resourceVersion"] = "42";
  return object;
}

TEST_CASE("a RayCluster's worker groups placed by one JSON patch; its head left as written") {
  const auto object = rayCluster();
  const auto live = targetFromJson(TargetKind::RayCluster, object);
  const auto scheduling = l4();
  const auto plan = planPodSetsPatch(live, placing(&scheduling));
  REQUIRE_FALSE(plan.blocked());
  REQUIRE(plan.patch);
  REQUIRE(plan.patch->is_array());
  // The precondition first: the object as read, or 409 Conflict.
  CHECK(plan.patch->front() ==
        json{{"op", "replace"}, {"path", "/metadata/resourceVersion"}, {"value", "41"}});
  CHECK(plan.owned.podSets == std::vector<std::string>{"small", "large"});
  CHECK(plan.owned.nodeSelector.at("karpenter.k8s.aws/instance-gpu-name") == "l4");
  CHECK(plan.resourcesChanged);

  const auto after = applied(object, *plan.patch);
  // The head: untouched.
  CHECK(after["spec"]["headGroupSpec"] == object["spec"]["headGroupSpec"]);
  for (const auto& group : after["spec"]["workerGroupSpecs"]) {
    CAPTURE(group["groupName"].get<std::string>());
    const auto& pod = group["template"]["spec"];
    CHECK(pod["nodeSelector"]["karpenter.k8s.aws/instance-gpu-name"] == "l4");
    CHECK(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
    CHECK(pod["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "1");
    CHECK(pod["containers"][0]["image"] == "vllm");  // the rest as it was
  }
  // The team's own toleration and cpu limit stand beside the placement's.
  const auto& large = after["spec"]["workerGroupSpecs"][1]["template"]["spec"];
  CHECK(large["tolerations"].size() == 2);
  CHECK(large["tolerations"][0]["key"] == "dedicated");
  CHECK(large["containers"][0]["resources"]["limits"]["cpu"] == "8");
  // The ownership record, made where the object had no annotations.
  const auto record =
      readOwnership(after["metadata"]["annotations"][kOwnedFieldsAnnotation].get<std::string>());
  CHECK(record.fields == plan.owned);

  // Read back, the same placement plans no write.
  const auto again = planPodSetsPatch(targetFromJson(TargetKind::RayCluster, after), [&] {
    auto request = placing(&scheduling);
    request.resourceVersion = "42";
    return request;
  }());
  CHECK_FALSE(again.blocked());
  CHECK_FALSE(again.patch);

  SUBCASE("released: every pod set it placed is as the team wrote it, the record gone") {
    auto request = placing(nullptr);
    request.resourceVersion = "42";
    const auto release = planPodSetsPatch(targetFromJson(TargetKind::RayCluster, after), request);
    REQUIRE(release.patch);
    auto restored = applied(after, *release.patch);
    CHECK(restored["spec"] == object["spec"]);
    CHECK(restored["metadata"]["annotations"].empty());
  }
  SUBCASE("one worker group named: the other is cleared, the head still untouched") {
    auto request = placing(&scheduling, {"large"});
    request.resourceVersion = "42";
    const auto narrowed = planPodSetsPatch(targetFromJson(TargetKind::RayCluster, after), request);
    REQUIRE(narrowed.patch);
    const auto moved = applied(after, *narrowed.patch);
    CHECK(moved["spec"]["workerGroupSpecs"][0] == object["spec"]["workerGroupSpecs"][0]);
    CHECK(moved["spec"]["workerGroupSpecs"][1] == after["spec"]["workerGroupSpecs"][1]);
    CHECK(moved["spec"]["headGroupSpec"] == object["spec"]["headGroupSpec"]);
    CHECK(narrowed.owned.podSets == std::vector<std::string>{"large"});
  }
}

TEST_CASE("a conflict in one pod set writes nothing to any; an unknown pod set is an error") {
  auto object = rayCluster();
  object["spec"]["workerGroupSpecs"][1]["template"]["spec"]["nodeSelector"] = {
      {"karpenter.k8s.aws/instance-gpu-name", "a10g"}};
  const auto live = targetFromJson(TargetKind::RayCluster, object);
  const auto scheduling = l4();
  const auto plan = planPodSetsPatch(live, placing(&scheduling));
  CHECK_FALSE(plan.patch);
  REQUIRE(plan.conflicts.size() == 1);
  CHECK(
      plan.conflicts.front().starts_with("pod set large: nodeSelector "
                                         "karpenter.k8s.aws/instance-gpu-name=a10g is set"));

  const auto unknown = planPodSetsPatch(live, placing(&scheduling, {"huge"}));
  CHECK_FALSE(unknown.patch);
  CHECK(unknown.error ==
        "spec.targetRef.podSets: the RayCluster has no pod set named huge (it has head, small, "
        "large)");
}

TEST_CASE("a kind of one pod set is planned as before, and knows only its pod set \"main\"") {
  const auto live = targetFromJson(
      TargetKind::Deployment,
      json::parse(R"({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}})"));
  const auto scheduling = l4();
  const auto plan = planPodSetsPatch(live, placing(&scheduling, {"main"}));
  const auto direct = planTemplatePatch(live, placing(&scheduling));
  REQUIRE(plan.patch);
  CHECK(*plan.patch == *direct.patch);
  CHECK(plan.patch->is_object());  // a strategic merge patch
  CHECK(plan.owned.podSets.empty());
  const auto wrong = planPodSetsPatch(live, placing(&scheduling, {"workers"}));
  CHECK_FALSE(wrong.patch);
  CHECK(wrong.error ==
        "spec.targetRef.podSets: the Deployment has no pod set named workers (it has main)");
}

TEST_CASE("a LeaderWorkerSet: leader and workers placed alike; annotations added to") {
  const auto object = json::parse(R"({
    "metadata": {"name": "llama", "resourceVersion": "7", "annotations": {"team": "ml"}},
    "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2,
      "leaderTemplate": {"spec": {"containers": [{"name": "leader"}]}},
      "workerTemplate": {"spec": {"containers": [{"name": "worker"}]}}}}})");
  const auto live = targetFromJson(TargetKind::LeaderWorkerSet, object);
  const auto scheduling = l4();
  auto request = placing(&scheduling);
  request.resourceVersion = "7";
  const auto plan = planPodSetsPatch(live, request);
  REQUIRE(plan.patch);
  const auto after = applied(object, *plan.patch);
  const auto& templates = after["spec"]["leaderWorkerTemplate"];
  CHECK(templates["leaderTemplate"]["spec"]["containers"][0]["resources"]["limits"]
                 ["nvidia.com/gpu"] == "1");
  CHECK(templates["workerTemplate"]["spec"]["containers"][0]["resources"]["limits"]
                 ["nvidia.com/gpu"] == "1");
  CHECK(after["metadata"]["annotations"]["team"] == "ml");
  CHECK(plan.owned.resources.at("leader").at("nvidia.com/gpu") == "1");
  CHECK(plan.owned.resources.at("worker").at("nvidia.com/gpu") == "1");
  // The fields it names are each pod set's own.
  CHECK(std::find(plan.fields.begin(), plan.fields.end(),
                  "spec.leaderWorkerTemplate.leaderTemplate.spec.nodeSelector") !=
        plan.fields.end());
}

}  // namespace
}  // namespace gpuplacement::core

namespace gpuplacement::core {
namespace {

TEST_CASE("a RayCluster waiting suspended for its GpuWorkload is placed and resumed in one write") {
  struct Row {
    const char* label;
    const char* labels;  // metadata.labels
    bool suspended;
    bool resumed;
  };
  const Row rows[] = {
      {"waits for this GpuWorkload", R"({"gpuplacement.io/workload": "llm"})", true, true},
      {"suspended by a person: placed, left suspended", "{}", true, false},
      {"queued by Kueue: Kueue resumes it",
       R"({"gpuplacement.io/workload": "llm", "kueue.x-k8s.io/queue-name": "gpu"})", true, false},
      {"running: nothing to resume", R"({"gpuplacement.io/workload": "llm"})", false, false},
  };
  for (const auto& row : rows) {
    CAPTURE(row.label);
    auto object = rayCluster();
    object["metadata"]["labels"] = json::parse(row.labels);
    object["spec"]["suspend"] = row.suspended;
    const auto live = targetFromJson(TargetKind::RayCluster, object);
    CHECK(live.job.suspended == row.suspended);
    const auto scheduling = l4();
    auto request = placing(&scheduling);
    // As the workload plan asks: only what waits for this GpuWorkload.
    request.start = !live.job.queuedElsewhere && live.job.waitsFor == "llm";
    const auto plan = planPodSetsPatch(live, request);
    REQUIRE(plan.patch);
    const auto after = applied(object, *plan.patch);
    CHECK(after["spec"]["suspend"] == (row.suspended && !row.resumed));
    CHECK(after["spec"]["workerGroupSpecs"][0]["template"]["spec"]["nodeSelector"].size() == 1);
  }
}

}  // namespace
}  // namespace gpuplacement::core
