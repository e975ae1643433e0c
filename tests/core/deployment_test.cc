#include <doctest/doctest.h>

#include "base/hash.h"
#include "core/deployment_patch.h"
#include "support/deployment_patch.h"

namespace gpuplacement::core {
namespace {

using testing::applyPatch;

using json = nlohmann::json;
// Values assigned as std::string ("1"s): g++ 12 at -O3 reports assigning a
// one-character literal to a std::string as overlapping (-Wrestrict, GCC
// bug 105329), which fails the Release build.
using namespace std::string_literals;

const Toleration kGpu{"nvidia.com/gpu", "Exists", "", "NoSchedule"};
const Toleration kNeuron{"aws.amazon.com/neuron", "Exists", "", "NoSchedule"};
const Toleration kUsers{"dedicated", "Equal", "ml", "NoSchedule"};

DeploymentState userDeployment() {
  DeploymentState state;
  state.generation = 3;
  state.nodeSelector = {{"disk", "ssd"}};
  state.tolerations = {kUsers};
  state.containers = {{"vllm", {{"example.com/fpga", "1"}}, {}}, {"sidecar", {}, {}}};
  return state;
}

Scheduling gpuScheduling(const std::string& type = "g5.xlarge") {
  Scheduling scheduling;
  scheduling.nodeSelector = {{"node.kubernetes.io/instance-type", type},
                             {"karpenter.sh/capacity-type", "on-demand"}};
  scheduling.tolerations = {kGpu};
  scheduling.resources = {{"nvidia.com/gpu", "1"}};
  return scheduling;
}

}  // namespace

TEST_CASE("first placement adds only what it needs, next to the user's fields") {
  const auto live = userDeployment();
  const auto desired = gpuScheduling();
  const auto plan = planDeploymentPatch(live, &desired, {}, "llama", "41");
  REQUIRE_FALSE(plan.blocked());
  REQUIRE(plan.patch.has_value());
  const auto& patch = *plan.patch;
  CHECK(patch["metadata"]["resourceVersion"] == "41");
  const auto& podSpec = patch["spec"]["template"]["spec"];
  CHECK(podSpec["nodeSelector"] == json{{"node.kubernetes.io/instance-type", "g5.xlarge"},
                                        {"karpenter.sh/capacity-type", "on-demand"}});
  // The whole list, the user's toleration first and unchanged.
  REQUIRE(podSpec["tolerations"].size() == 2);
  CHECK(
      podSpec["tolerations"][0] ==
      json{{"key", "dedicated"}, {"operator", "Equal"}, {"value", "ml"}, {"effect", "NoSchedule"}});
  CHECK(podSpec["tolerations"][1]["key"] == "nvidia.com/gpu");
  // Only the first container, requests equal to limits.
  REQUIRE(podSpec["containers"].size() == 1);
  CHECK(podSpec["containers"][0]["name"] == "vllm");
  CHECK(podSpec["containers"][0]["resources"]["limits"] == json{{"nvidia.com/gpu", "1"}});
  CHECK(podSpec["containers"][0]["resources"]["requests"] == json{{"nvidia.com/gpu", "1"}});

  CHECK(plan.owned.workload == "llama");
  CHECK(plan.owned.nodeSelector.size() == 2);
  CHECK(plan.owned.tolerations == std::vector<Toleration>{kGpu});
  CHECK(plan.owned.resources.at("vllm").at("nvidia.com/gpu") == "1");

  // Applied, the same placement plans nothing: zero writes.
  const auto placed = applyPatch(live, patch);
  CHECK(placed.nodeSelector.at("disk") == "ssd");
  CHECK(placed.containers[0].limits.at("example.com/fpga") == "1");
  const auto again = planDeploymentPatch(placed, &desired, {}, "llama", "42");
  CHECK_FALSE(again.blocked());
  CHECK_FALSE(again.patch.has_value());
}

TEST_CASE("re-placement swaps our fields and the removal leaves only the user's") {
  const auto live = userDeployment();
  const auto gpu = gpuScheduling();
  const auto placed = applyPatch(live, *planDeploymentPatch(live, &gpu, {}, "llama", "1").patch);

  Scheduling neuron;
  neuron.nodeSelector = {{"node.kubernetes.io/instance-type", "inf2.xlarge"},
                         {"karpenter.sh/capacity-type", "on-demand"}};
  neuron.tolerations = {kNeuron};
  neuron.resources = {{"aws.amazon.com/neuron", "1"}};
  const auto move = planDeploymentPatch(placed, &neuron, {}, "llama", "2");
  REQUIRE(move.patch.has_value());
  const auto& podSpec = (*move.patch)["spec"]["template"]["spec"];
  CHECK(podSpec["nodeSelector"] == json{{"node.kubernetes.io/instance-type", "inf2.xlarge"}});
  CHECK(podSpec["containers"][0]["resources"]["limits"] ==
        json{{"aws.amazon.com/neuron", "1"}, {"nvidia.com/gpu", nullptr}});
  const auto moved = applyPatch(placed, *move.patch);
  CHECK(moved.tolerations == std::vector<Toleration>{kUsers, kNeuron});

  const auto removal = planDeploymentPatch(moved, nullptr, {}, "llama", "3");
  REQUIRE(removal.patch.has_value());
  CHECK((*removal.patch)["metadata"]["annotations"][kOwnedFieldsAnnotation].is_null());
  const auto cleaned = applyPatch(moved, *removal.patch);
  CHECK(cleaned.nodeSelector == live.nodeSelector);
  CHECK(cleaned.tolerations == live.tolerations);
  CHECK(cleaned.containers[0].limits == live.containers[0].limits);
  CHECK(cleaned.containers[0].requests == live.containers[0].requests);
  CHECK(cleaned.ownership.form == OwnershipRecord::Form::Absent);
  CHECK_FALSE(planDeploymentPatch(cleaned, nullptr, {}, "llama", "4").patch.has_value());
}

TEST_CASE("drift is repaired: fields we own that someone removed come back") {
  const auto live = userDeployment();
  const auto desired = gpuScheduling();
  auto placed = applyPatch(live, *planDeploymentPatch(live, &desired, {}, "llama", "1").patch);
  // A `helm upgrade` of the app resets the pod template, keeping annotations.
  placed.nodeSelector = live.nodeSelector;
  placed.tolerations = live.tolerations;
  placed.containers = live.containers;
  const auto repair = planDeploymentPatch(placed, &desired, {}, "llama", "5");
  REQUIRE(repair.patch.has_value());
  const auto repaired = applyPatch(placed, *repair.patch);
  CHECK(repaired.nodeSelector.at("node.kubernetes.io/instance-type") == "g5.xlarge");
  CHECK(repaired.tolerations == std::vector<Toleration>{kUsers, kGpu});
  CHECK(repaired.containers[0].limits.at("nvidia.com/gpu") == "1");
}

TEST_CASE("a team's toleration keeps its tolerationSeconds through placing and removing") {
  auto live = userDeployment();
  const Toleration timed{"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 60};
  live.tolerations.push_back(timed);
  const auto desired = gpuScheduling();
  const auto plan = planDeploymentPatch(live, &desired, {}, "llama", "1");
  REQUIRE(plan.patch);
  const auto& list = (*plan.patch)["spec"]["template"]["spec"]["tolerations"];
  REQUIRE(list.size() == 3);
  CHECK(list[1]["tolerationSeconds"] == 60);
  const auto placed = applyPatch(live, *plan.patch);
  CHECK(placed.tolerations == std::vector<Toleration>{kUsers, timed, kGpu});
  const auto removed =
      applyPatch(placed, *planDeploymentPatch(placed, nullptr, {}, "llama", "2").patch);
  CHECK(removed.tolerations == std::vector<Toleration>{kUsers, timed});
}

TEST_CASE("the user's own values are never overwritten: a conflict blocks the whole patch") {
  const auto desired = gpuScheduling();
  SUBCASE("node selector") {
    auto live = userDeployment();
    live.nodeSelector["node.kubernetes.io/instance-type"] = "m5.large";
    const auto plan = planDeploymentPatch(live, &desired, {}, "llama", "1");
    CHECK(plan.blocked());
    CHECK_FALSE(plan.patch.has_value());
    REQUIRE(plan.conflicts.size() == 1);
    CHECK(plan.conflicts[0].find("node.kubernetes.io/instance-type=m5.large") != std::string::npos);
  }
  SUBCASE("device limit") {
    auto live = userDeployment();
    live.containers[0].limits["nvidia.com/gpu"] = "2"s;
    const auto plan = planDeploymentPatch(live, &desired, {}, "llama", "1");
    CHECK(plan.blocked());
    CHECK(plan.conflicts.at(0).find("containers[vllm].resources nvidia.com/gpu=2") !=
          std::string::npos);
  }
  SUBCASE("the same values the user set are left theirs, not taken over") {
    auto live = userDeployment();
    live.nodeSelector["karpenter.sh/capacity-type"] = "on-demand";
    live.tolerations.push_back(kGpu);
    live.containers[0].limits["nvidia.com/gpu"] = "1"s;
    live.containers[0].requests["nvidia.com/gpu"] = "1"s;
    const auto plan = planDeploymentPatch(live, &desired, {}, "llama", "1");
    REQUIRE_FALSE(plan.blocked());
    CHECK_FALSE(plan.owned.nodeSelector.count("karpenter.sh/capacity-type"));
    CHECK(plan.owned.tolerations.empty());
    CHECK(plan.owned.resources.empty());
    // Removing the placement later leaves all three in place.
    const auto placed = applyPatch(live, *plan.patch);
    const auto cleaned =
        applyPatch(placed, *planDeploymentPatch(placed, nullptr, {}, "llama", "2").patch);
    CHECK(cleaned.nodeSelector.at("karpenter.sh/capacity-type") == "on-demand");
    CHECK(cleaned.tolerations == std::vector<Toleration>{kUsers, kGpu});
    CHECK(cleaned.containers[0].limits.at("nvidia.com/gpu") == "1");
  }
}

TEST_CASE("a CPU placement sizes containers that set nothing; a team's own sizing stands") {
  Scheduling cpu;
  cpu.nodeSelector = {{"node.kubernetes.io/instance-type", "c5.xlarge"}};
  cpu.resources = {{"cpu", "2"}, {"memory", "1792Mi"}};
  SUBCASE("unsized: requests = limits as the placement was priced, and quiet afterwards") {
    const auto live = userDeployment();
    const auto plan = planDeploymentPatch(live, &cpu, {}, "embedder", "1");
    REQUIRE_FALSE(plan.blocked());
    const auto& resources = (*plan.patch)["spec"]["template"]["spec"]["containers"][0]["resources"];
    CHECK(resources["requests"] == json{{"cpu", "2"}, {"memory", "1792Mi"}});
    CHECK(resources["limits"] == json{{"cpu", "2"}, {"memory", "1792Mi"}});
    CHECK(plan.owned.resources.at("vllm").at("memory") == "1792Mi");
    const auto placed = applyPatch(live, *plan.patch);
    CHECK_FALSE(planDeploymentPatch(placed, &cpu, {}, "embedder", "2").patch.has_value());
  }
  SUBCASE("sized by the team: kept, not a conflict, not ours") {
    auto live = userDeployment();
    live.containers[0].requests = {{"cpu", "4"}, {"memory", "8Gi"}};
    const auto plan = planDeploymentPatch(live, &cpu, {}, "embedder", "1");
    REQUIRE_FALSE(plan.blocked());
    CHECK(plan.owned.resources.empty());
    const auto placed = applyPatch(live, *plan.patch);
    CHECK(placed.containers[0].requests.at("cpu") == "4");
    CHECK(placed.containers[0].requests.at("memory") == "8Gi");
  }
}

TEST_CASE("named containers, other owners and broken records") {
  const auto desired = gpuScheduling();
  auto live = userDeployment();
  const auto both = planDeploymentPatch(live, &desired, {"vllm", "sidecar"}, "llama", "1");
  REQUIRE(both.patch.has_value());
  CHECK((*both.patch)["spec"]["template"]["spec"]["containers"].size() == 2);

  const auto missing = planDeploymentPatch(live, &desired, {"server"}, "llama", "1");
  CHECK(missing.error == "the Deployment has no container named server");

  auto owned = applyPatch(live, *planDeploymentPatch(live, &desired, {}, "llama", "1").patch);
  const auto other = planDeploymentPatch(owned, &desired, {}, "mistral", "2");
  CHECK(other.error == "the Deployment is already placed by GpuWorkload llama");

  owned.ownership = readOwnership(std::string("{broken"));
  CHECK(owned.ownership.form == OwnershipRecord::Form::Unreadable);
  const auto broken = planDeploymentPatch(owned, &desired, {}, "llama", "3");
  CHECK(broken.error.find("gpuplacement.io/owned-fields") != std::string::npos);
}

TEST_CASE("reading a Deployment object") {
  const auto state = deploymentFromJson(json::parse(R"({
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
  const auto empty = deploymentFromJson(json::parse(R"({"spec": "nope", "status": []})"));
  CHECK(empty.replicas == 1);
  CHECK(empty.containers.empty());
}

TEST_CASE("the team's own pod requests: requests, else limits, summed, ours left out") {
  DeploymentState state;
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
  CHECK(teamPodRequests(DeploymentState{}).cpu == 0);
}

}  // namespace gpuplacement::core
