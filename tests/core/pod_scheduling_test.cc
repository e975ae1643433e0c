#include "core/kinds/pod_scheduling.h"

#include <doctest/doctest.h>

#include "core/plan/template_patch.h"
#include "support/template_patch.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using testing::applyPatch;

const Toleration kGpu{"nvidia.com/gpu", "Exists", "", "NoSchedule"};
const Toleration kTeams{"dedicated", "Equal", "ml", "NoSchedule"};
const std::string kType = "node.kubernetes.io/instance-type";

TargetState bareDeployment() {
  TargetState state;
  state.generation = 1;
  state.containers = {{"server", {}, {}}};
  return state;
}

// A team whose manifest sets a node selector and a toleration of its own.
TargetState teamDeployment() {
  auto state = bareDeployment();
  state.nodeSelector = {{"team", "ml"}};
  state.tolerations = {kTeams};
  return state;
}

Scheduling gpu(const std::string& type = "g5.xlarge") {
  Scheduling scheduling;
  scheduling.nodeSelector = {{kType, type}};
  scheduling.tolerations = {kGpu};
  scheduling.resources = {{"nvidia.com/gpu", "1"}};
  return scheduling;
}

}  // namespace

TEST_CASE("Auto places in the template until an apply takes its selector or tolerations back") {
  struct Row {
    const char* name;
    TargetState live;
    PlaceAt setting;
    PlaceAt expected;
  };
  const auto desired = gpu();
  // The team's own fields and the operator's, in the template.
  const auto placed = applyPatch(
      teamDeployment(), *testing::planPatch(teamDeployment(), &desired, {}, "w", "1").patch);
  // Server-side apply of the team's manifest: both fields back as git has them.
  auto applied = placed;
  applied.nodeSelector = teamDeployment().nodeSelector;
  applied.tolerations = teamDeployment().tolerations;
  // Client-side apply: the selector merges key by key, the list is replaced.
  auto clientSide = placed;
  clientSide.tolerations = teamDeployment().tolerations;
  // Placed at the pods once: it stays there.
  const auto atPods = applyPatch(
      applied, *testing::planPatch(applied, &desired, {}, "w", "2", PlaceAt::Pods).patch);
  // A device request taken back is not an atomic field: merged back where it was.
  auto devices = placed;
  devices.containers = teamDeployment().containers;
  const Row rows[] = {
      {"never placed, the team's own fields or not", teamDeployment(), PlaceAt::Auto,
       PlaceAt::PodTemplate},
      {"placed, nothing taken back", placed, PlaceAt::Auto, PlaceAt::PodTemplate},
      {"a server-side apply took both fields", applied, PlaceAt::Auto, PlaceAt::Pods},
      {"a client-side apply replaced the tolerations", clientSide, PlaceAt::Auto, PlaceAt::Pods},
      {"at the pods already", atPods, PlaceAt::Auto, PlaceAt::Pods},
      {"only a device request taken back", devices, PlaceAt::Auto, PlaceAt::PodTemplate},
      {"forced to the template", applied, PlaceAt::PodTemplate, PlaceAt::PodTemplate},
      {"forced to the pods", bareDeployment(), PlaceAt::Pods, PlaceAt::Pods},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    CHECK(resolvePlaceAt(row.setting, row.live) == row.expected);
  }
}

TEST_CASE("at the pods, the template gets the gate, the annotation and the devices only") {
  const auto live = teamDeployment();
  const auto desired = gpu();
  const auto plan = testing::planPatch(live, &desired, {}, "w", "7", PlaceAt::Pods);
  REQUIRE_FALSE(plan.blocked());
  REQUIRE(plan.patch);
  const auto& templ = (*plan.patch)["spec"]["template"];
  const auto& podSpec = templ["spec"];
  // The atomic fields a GitOps apply owns are not touched.
  CHECK_FALSE(podSpec.contains("nodeSelector"));
  CHECK_FALSE(podSpec.contains("tolerations"));
  CHECK(podSpec["schedulingGates"] == json::array({{{"name", kSchedulingGate}}}));
  CHECK(podSpec["containers"][0]["resources"]["limits"] == json{{"nvidia.com/gpu", "1"}});
  const auto text = templ["metadata"]["annotations"][kPodSchedulingAnnotation].get<std::string>();
  const auto pods = parsePodScheduling(json::parse(text));
  REQUIRE(pods);
  CHECK(pods->nodeSelector == std::map<std::string, std::string>{{kType, "g5.xlarge"}});
  CHECK(pods->tolerations == std::vector<Toleration>{kGpu});
  CHECK(plan.owned.pods == pods);
  CHECK(plan.fields ==
        std::vector<std::string>{
            "spec.template.spec.containers", "spec.template.spec.schedulingGates",
            std::string("spec.template.metadata.annotations[") + kPodSchedulingAnnotation + "]"});

  // Applied, the same placement writes nothing more.
  const auto placed = applyPatch(live, *plan.patch);
  CHECK(placed.gated);
  CHECK(placed.nodeSelector == live.nodeSelector);
  CHECK(placed.tolerations == live.tolerations);
  CHECK_FALSE(testing::planPatch(placed, &desired, {}, "w", "8", PlaceAt::Pods).patch);
  CHECK(resolvePlaceAt(PlaceAt::Auto, placed) == PlaceAt::Pods);  // it stays there

  SUBCASE("a move changes the annotation, which rolls the Deployment onto the new type") {
    const auto next = gpu("g6.xlarge");
    const auto move = testing::planPatch(placed, &next, {}, "w", "9", PlaceAt::Pods);
    REQUIRE(move.patch);
    CHECK_FALSE((*move.patch)["spec"]["template"]
                    .value("spec", json::object())
                    .contains("schedulingGates"));
    const auto moved = applyPatch(placed, *move.patch);
    CHECK(parsePodScheduling(json::parse(*moved.podScheduling))->nodeSelector.at(kType) ==
          "g6.xlarge");
  }
  SUBCASE("releasing takes the gate, the annotation and the devices back") {
    const auto release = testing::planPatch(placed, nullptr, {}, "w", "9");
    REQUIRE(release.patch);
    CHECK((*release.patch)["spec"]["template"]["spec"]["schedulingGates"] ==
          json::array({{{"$patch", "delete"}, {"name", kSchedulingGate}}}));
    const auto released = applyPatch(placed, *release.patch);
    CHECK_FALSE(released.gated);
    CHECK_FALSE(released.podScheduling);
    CHECK(released.containers == live.containers);
    CHECK(released.nodeSelector == live.nodeSelector);
    CHECK(released.ownership.form == OwnershipRecord::Form::Absent);
  }
  SUBCASE("a GitOps apply that drops the gate is repaired and the field named") {
    auto reverted = placed;
    reverted.gated = false;
    const auto repair = testing::planPatch(reverted, &desired, {}, "w", "9", PlaceAt::Pods);
    REQUIRE(repair.patch);
    CHECK(repair.fields == std::vector<std::string>{"spec.template.spec.schedulingGates"});
  }
}

TEST_CASE("moving between the template and the pods moves every entry, keeping the team's") {
  const auto desired = gpu();
  auto live = bareDeployment();
  const auto inTemplate = applyPatch(live, *testing::planPatch(live, &desired, {}, "w", "1").patch);
  REQUIRE(inTemplate.nodeSelector.count(kType));
  // The team's next manifest sets a selector of its own, applied server-side:
  // it owns the field whole, and the operator's key is gone.
  auto withTeams = inTemplate;
  withTeams.nodeSelector = {{"team", "ml"}};
  REQUIRE(resolvePlaceAt(PlaceAt::Auto, withTeams) == PlaceAt::Pods);
  const auto toPods = testing::planPatch(withTeams, &desired, {}, "w", "2", PlaceAt::Pods);
  REQUIRE(toPods.patch);
  const auto atPods = applyPatch(withTeams, *toPods.patch);
  CHECK(atPods.nodeSelector == std::map<std::string, std::string>{{"team", "ml"}});
  CHECK(atPods.tolerations.empty());
  CHECK(atPods.gated);
  CHECK(atPods.ownership.fields.nodeSelector.empty());
  CHECK(atPods.ownership.fields.tolerations.empty());
  // And back to the template when a policy says so.
  const auto back = applyPatch(
      atPods, *testing::planPatch(atPods, &desired, {}, "w", "3", PlaceAt::PodTemplate).patch);
  CHECK_FALSE(back.gated);
  CHECK_FALSE(back.podScheduling);
  CHECK(back.nodeSelector.at(kType) == "g5.xlarge");
  CHECK(back.nodeSelector.at("team") == "ml");
  CHECK(back.tolerations == std::vector<Toleration>{kGpu});
}

TEST_CASE("moving to the pods, a key of the operator's that an apply rewrote is the team's") {
  const auto desired = gpu();
  const auto live = bareDeployment();
  auto placed = applyPatch(live, *testing::planPatch(live, &desired, {}, "w", "1").patch);
  // The apply that took the field set the operator's own key to its value.
  placed.nodeSelector = {{kType, "m5.large"}};
  REQUIRE(resolvePlaceAt(PlaceAt::Auto, placed) == PlaceAt::Pods);
  const auto plan = testing::planPatch(placed, &desired, {}, "w", "2", PlaceAt::Pods);
  CHECK(plan.blocked());
  CHECK_FALSE(plan.patch);
  REQUIRE(plan.conflicts.size() == 1);
  CHECK(plan.conflicts[0].find(kType + "=m5.large") != std::string::npos);
}

TEST_CASE("at the pods, a team's selector key of another value is still a conflict") {
  auto live = teamDeployment();
  live.nodeSelector[kType] = "m5.large";
  const auto desired = gpu();
  const auto plan = testing::planPatch(live, &desired, {}, "w", "1", PlaceAt::Pods);
  CHECK(plan.blocked());
  CHECK_FALSE(plan.patch);
  SUBCASE("the same value is the team's: nothing of it goes to the pods") {
    live.nodeSelector[kType] = "g5.xlarge";
    live.tolerations.push_back(kGpu);
    const auto same = testing::planPatch(live, &desired, {}, "w", "1", PlaceAt::Pods);
    REQUIRE_FALSE(same.blocked());
    // Nothing left to give the pods: no gate, only the devices.
    CHECK_FALSE(same.owned.pods);
    CHECK_FALSE((*same.patch)["spec"]["template"]["spec"].contains("schedulingGates"));
  }
}

TEST_CASE("a gated pod is given its placement and let go in one patch") {
  struct Row {
    const char* name;
    GatedPod pod;
    json expectedSpec;
    std::size_t skipped;
  };
  PodScheduling scheduling{{{kType, "g5.xlarge"}}, {kGpu}};
  const auto text = serializePodScheduling(scheduling);
  const json ungate = json::array({{{"$patch", "delete"}, {"name", kSchedulingGate}}});
  const json teamToleration = {
      {"key", "dedicated"}, {"operator", "Equal"}, {"value", "ml"}, {"effect", "NoSchedule"}};
  const json notReadyToleration = {{"key", "node.kubernetes.io/not-ready"},
                                   {"operator", "Exists"},
                                   {"effect", "NoExecute"},
                                   {"tolerationSeconds", 300}};
  const json unreachableToleration = {{"key", "node.kubernetes.io/unreachable"},
                                      {"operator", "Exists"},
                                      {"effect", "NoExecute"},
                                      {"tolerationSeconds", 300}};
  const json gpuToleration = {
      {"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}};
  // As the API server stores a team's toleration written without an
  // operator: the field absent, which is not the same as "Equal" to it.
  const json noOperator = {{"key", "dedicated"}, {"value", "ml"}, {"effect", "NoSchedule"}};
  const json none = json::array();
  const Row rows[] = {
      {"a bare pod",
       {"11", {}, none, text},
       {{"schedulingGates", ungate},
        {"nodeSelector", {{kType, "g5.xlarge"}}},
        {"tolerations", json::array({gpuToleration})}},
       0},
      {"the team's fields stay, ours are added after them",
       {"12", {{"team", "ml"}}, json::array({teamToleration}), text},
       {{"schedulingGates", ungate},
        {"nodeSelector", {{kType, "g5.xlarge"}}},
        {"tolerations", json::array({teamToleration, gpuToleration})}},
       0},
      {"already there: only the gate goes",
       {"13", {{kType, "g5.xlarge"}}, json::array({gpuToleration}), text},
       {{"schedulingGates", ungate}},
       0},
      {"a key of another value cannot change on a pod: skipped, the gate still goes",
       {"14", {{kType, "m5.large"}}, none, text},
       {{"schedulingGates", ungate}, {"tolerations", json::array({gpuToleration})}},
       1},
      {"no annotation: the gate goes, nothing added",
       {"15", {}, none, std::nullopt},
       {{"schedulingGates", ungate}},
       0},
      {"an unreadable annotation: the same, and said",
       {"16", {}, none, "{not json"},
       {{"schedulingGates", ungate}},
       1},
      {"the default not-ready and unreachable tolerations keep their 300 s",
       {"17", {}, json::array({notReadyToleration, unreachableToleration}), text},
       {{"schedulingGates", ungate},
        {"nodeSelector", {{kType, "g5.xlarge"}}},
        {"tolerations", json::array({notReadyToleration, unreachableToleration, gpuToleration})}},
       0},
      {"a team's toleration without an operator goes back as the pod has it",
       {"18", {}, json::array({noOperator}), text},
       {{"schedulingGates", ungate},
        {"nodeSelector", {{kType, "g5.xlarge"}}},
        {"tolerations", json::array({noOperator, gpuToleration})}},
       0},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const auto release = planPodRelease(row.pod);
    CHECK(release.patch["metadata"]["resourceVersion"] == row.pod.resourceVersion);
    CHECK(release.patch["spec"] == row.expectedSpec);
    CHECK(release.skipped.size() == row.skipped);
  }
}

TEST_CASE("a pod is read as gated only when it carries the operator's gate") {
  const json gated = {
      {"metadata",
       {{"resourceVersion", "5"},
        {"annotations", {{kPodSchedulingAnnotation, R"({"nodeSelector":{"a":"b"}})"}}}}},
      {"spec",
       {{"schedulingGates", json::array({{{"name", "other"}}, {{"name", kSchedulingGate}}})},
        {"nodeSelector", {{"team", "ml"}}}}}};
  const auto pod = gatedPodFromJson(gated);
  REQUIRE(pod);
  CHECK(pod->resourceVersion == "5");
  CHECK(pod->tolerations == json::array());
  CHECK(gateOnlyRelease(*pod) ==
        json{{"metadata", {{"resourceVersion", "5"}}},
             {"spec",
              {{"schedulingGates",
                json::array({{{"$patch", "delete"}, {"name", kSchedulingGate}}})}}}});
  CHECK(pod->nodeSelector.at("team") == "ml");
  CHECK(pod->scheduling == std::optional<std::string>(R"({"nodeSelector":{"a":"b"}})"));
  json other = gated;
  other["spec"]["schedulingGates"] = json::array({{{"name", "other"}}});
  CHECK_FALSE(gatedPodFromJson(other));
  CHECK_FALSE(gatedPodFromJson(json::object()));
}

TEST_CASE("the last writer of the pod template other than the operator, from managedFields") {
  const json object = {
      {"metadata",
       {{"managedFields", json::array({
                              {{"manager", "kubectl-client-side-apply"},
                               {"operation", "Update"},
                               {"time", "2026-11-25T10:00:00Z"},
                               {"fieldsV1", {{"f:spec", {{"f:template", json::object()}}}}}},
                              {{"manager", "kustomize-controller"},
                               {"operation", "Apply"},
                               {"time", "2026-11-25T10:05:00Z"},
                               {"fieldsV1", {{"f:spec", {{"f:template", json::object()}}}}}},
                              {{"manager", kFieldManager},
                               {"operation", "Update"},
                               {"time", "2026-11-25T10:06:00Z"},
                               {"fieldsV1", {{"f:spec", {{"f:template", json::object()}}}}}},
                              // Newer, but not the template: the replica count.
                              {{"manager", "hpa"},
                               {"operation", "Update"},
                               {"time", "2026-11-25T10:07:00Z"},
                               {"fieldsV1", {{"f:spec", {{"f:replicas", json::object()}}}}}},
                              {{"manager", "kube-controller-manager"},
                               {"operation", "Update"},
                               {"subresource", "status"},
                               {"time", "2026-11-25T10:08:00Z"},
                               {"fieldsV1", {{"f:spec", {{"f:template", json::object()}}}}}},
                          })}}}};
  CHECK(lastTemplateWriter(object, kFieldManager) == "kustomize-controller (Apply)");
  CHECK(lastTemplateWriter(json::object(), kFieldManager).empty());
}

}  // namespace gpuplacement::core
