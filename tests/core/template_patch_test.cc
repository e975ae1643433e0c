#include "core/plan/template_patch.h"

#include <doctest/doctest.h>

#include "base/hash.h"
#include "support/template_patch.h"

namespace gpuplacement::core {
namespace {

using testing::applyPatch;

using json = nlohmann::json;
// Values assigned as std::string ("1"s): g++ 12 at -O3 reports assigning a
// one-character literal to a std::string as overlapping (-Wrestrict, GCC
// bug 105329), which fails the Release build.
using namespace std::string_literals;

const Toleration kGpuToleration{"nvidia.com/gpu", "Exists", "", "NoSchedule"};
const Toleration kNeuron{"aws.amazon.com/neuron", "Exists", "", "NoSchedule"};
const Toleration kUsers{"dedicated", "Equal", "ml", "NoSchedule"};

TargetState userDeployment() {
  TargetState state;
  state.generation = 3;
  state.nodeSelector = {{"disk", "ssd"}};
  state.tolerations = {kUsers};
  state.podLabels = {{"app", "chat"}};
  state.containers = {{"vllm", {{"example.com/fpga", "1"}}, {}}, {"sidecar", {}, {}}};
  return state;
}

Scheduling gpuScheduling(const std::string& type = "g5.xlarge") {
  Scheduling scheduling;
  scheduling.nodeSelector = {{"node.kubernetes.io/instance-type", type},
                             {"karpenter.sh/capacity-type", "on-demand"}};
  scheduling.tolerations = {kGpuToleration};
  scheduling.resources = {{"nvidia.com/gpu", "1"}};
  return scheduling;
}

}  // namespace

TEST_CASE("first placement adds only what it needs, next to the user's fields") {
  const auto live = userDeployment();
  const auto desired = gpuScheduling();
  const auto plan = testing::planPatch(live, &desired, {}, "llama", "41");
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
  CHECK(plan.owned.tolerations == std::vector<Toleration>{kGpuToleration});
  CHECK(plan.owned.resources.at("vllm").at("nvidia.com/gpu") == "1");

  // Applied, the same placement plans nothing: zero writes.
  const auto placed = applyPatch(live, patch);
  CHECK(placed.nodeSelector.at("disk") == "ssd");
  CHECK(placed.containers[0].limits.at("example.com/fpga") == "1");
  const auto again = testing::planPatch(placed, &desired, {}, "llama", "42");
  CHECK_FALSE(again.blocked());
  CHECK_FALSE(again.patch.has_value());
}

TEST_CASE("re-placement swaps our fields and the removal leaves only the user's") {
  const auto live = userDeployment();
  const auto gpu = gpuScheduling();
  const auto placed = applyPatch(live, *testing::planPatch(live, &gpu, {}, "llama", "1").patch);

  Scheduling neuron;
  neuron.nodeSelector = {{"node.kubernetes.io/instance-type", "inf2.xlarge"},
                         {"karpenter.sh/capacity-type", "on-demand"}};
  neuron.tolerations = {kNeuron};
  neuron.resources = {{"aws.amazon.com/neuron", "1"}};
  const auto move = testing::planPatch(placed, &neuron, {}, "llama", "2");
  REQUIRE(move.patch.has_value());
  const auto& podSpec = (*move.patch)["spec"]["template"]["spec"];
  CHECK(podSpec["nodeSelector"] == json{{"node.kubernetes.io/instance-type", "inf2.xlarge"}});
  CHECK(podSpec["containers"][0]["resources"]["limits"] ==
        json{{"aws.amazon.com/neuron", "1"}, {"nvidia.com/gpu", nullptr}});
  const auto moved = applyPatch(placed, *move.patch);
  CHECK(moved.tolerations == std::vector<Toleration>{kUsers, kNeuron});

  const auto removal = testing::planPatch(moved, nullptr, {}, "llama", "3");
  REQUIRE(removal.patch.has_value());
  CHECK((*removal.patch)["metadata"]["annotations"][kOwnedFieldsAnnotation].is_null());
  const auto cleaned = applyPatch(moved, *removal.patch);
  CHECK(cleaned.nodeSelector == live.nodeSelector);
  CHECK(cleaned.tolerations == live.tolerations);
  CHECK(cleaned.containers[0].limits == live.containers[0].limits);
  CHECK(cleaned.containers[0].requests == live.containers[0].requests);
  CHECK(cleaned.ownership.form == OwnershipRecord::Form::Absent);
  CHECK_FALSE(testing::planPatch(cleaned, nullptr, {}, "llama", "4").patch.has_value());
}

TEST_CASE("a MIG slice swaps with whole GPUs; a team's own GPUs beside a slice conflict") {
  const auto live = userDeployment();
  auto slice = gpuScheduling("p4d.24xlarge");
  slice.resources = {{"nvidia.com/mig-1g.5gb", "1"}};
  const auto first = testing::planPatch(live, &slice, {}, "llama", "1");
  REQUIRE_FALSE(first.blocked());
  const auto onSlice = applyPatch(live, *first.patch);
  CHECK(onSlice.containers[0].limits.at("nvidia.com/mig-1g.5gb") == "1");
  CHECK(onSlice.containers[0].requests.at("nvidia.com/mig-1g.5gb") == "1");
  CHECK(onSlice.containers[0].limits.count("nvidia.com/gpu") == 0);

  // To a whole GPU: the slice the operator wrote goes.
  const auto whole = gpuScheduling("g6.xlarge");
  const auto move = testing::planPatch(onSlice, &whole, {}, "llama", "2");
  REQUIRE(move.patch.has_value());
  CHECK((*move.patch)["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] ==
        json{{"nvidia.com/gpu", "1"}, {"nvidia.com/mig-1g.5gb", nullptr}});

  // The team asks for a whole GPU itself: a slice beside it would make the
  // pod ask for both.
  auto teams = live;
  teams.containers[0].limits["nvidia.com/gpu"] = "1"s;
  const auto blocked = testing::planPatch(teams, &slice, {}, "llama", "3");
  REQUIRE(blocked.blocked());
  REQUIRE(blocked.conflicts.size() == 1);
  CHECK(blocked.conflicts[0] ==
        "containers[vllm].resources nvidia.com/gpu=1 is set on the Deployment; the placement "
        "needs nvidia.com/mig-1g.5gb=1 instead");
}

TEST_CASE("drift is repaired: fields we own that someone removed come back") {
  const auto live = userDeployment();
  const auto desired = gpuScheduling();
  auto placed = applyPatch(live, *testing::planPatch(live, &desired, {}, "llama", "1").patch);
  // A `helm upgrade` of the app resets the pod template, keeping annotations.
  placed.nodeSelector = live.nodeSelector;
  placed.tolerations = live.tolerations;
  placed.containers = live.containers;
  const auto repair = testing::planPatch(placed, &desired, {}, "llama", "5");
  REQUIRE(repair.patch.has_value());
  const auto repaired = applyPatch(placed, *repair.patch);
  CHECK(repaired.nodeSelector.at("node.kubernetes.io/instance-type") == "g5.xlarge");
  CHECK(repaired.tolerations == std::vector<Toleration>{kUsers, kGpuToleration});
  CHECK(repaired.containers[0].limits.at("nvidia.com/gpu") == "1");
}

TEST_CASE("a team's toleration keeps its tolerationSeconds through placing and removing") {
  auto live = userDeployment();
  const Toleration timed{"node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 60};
  live.tolerations.push_back(timed);
  const auto desired = gpuScheduling();
  const auto plan = testing::planPatch(live, &desired, {}, "llama", "1");
  REQUIRE(plan.patch);
  const auto& list = (*plan.patch)["spec"]["template"]["spec"]["tolerations"];
  REQUIRE(list.size() == 3);
  CHECK(list[1]["tolerationSeconds"] == 60);
  const auto placed = applyPatch(live, *plan.patch);
  CHECK(placed.tolerations == std::vector<Toleration>{kUsers, timed, kGpuToleration});
  const auto removed =
      applyPatch(placed, *testing::planPatch(placed, nullptr, {}, "llama", "2").patch);
  CHECK(removed.tolerations == std::vector<Toleration>{kUsers, timed});
}

TEST_CASE("the user's own values are never overwritten: a conflict blocks the whole patch") {
  const auto desired = gpuScheduling();
  SUBCASE("node selector") {
    auto live = userDeployment();
    live.nodeSelector["node.kubernetes.io/instance-type"] = "m5.large";
    const auto plan = testing::planPatch(live, &desired, {}, "llama", "1");
    CHECK(plan.blocked());
    CHECK_FALSE(plan.patch.has_value());
    REQUIRE(plan.conflicts.size() == 1);
    CHECK(plan.conflicts[0].find("node.kubernetes.io/instance-type=m5.large") != std::string::npos);
  }
  SUBCASE("device limit") {
    auto live = userDeployment();
    live.containers[0].limits["nvidia.com/gpu"] = "2"s;
    const auto plan = testing::planPatch(live, &desired, {}, "llama", "1");
    CHECK(plan.blocked());
    CHECK(plan.conflicts.at(0).find("containers[vllm].resources nvidia.com/gpu=2") !=
          std::string::npos);
  }
  SUBCASE("the same values the user set are left theirs, not taken over") {
    auto live = userDeployment();
    live.nodeSelector["karpenter.sh/capacity-type"] = "on-demand";
    live.tolerations.push_back(kGpuToleration);
    live.containers[0].limits["nvidia.com/gpu"] = "1"s;
    live.containers[0].requests["nvidia.com/gpu"] = "1"s;
    const auto plan = testing::planPatch(live, &desired, {}, "llama", "1");
    REQUIRE_FALSE(plan.blocked());
    CHECK_FALSE(plan.owned.nodeSelector.count("karpenter.sh/capacity-type"));
    CHECK(plan.owned.tolerations.empty());
    CHECK(plan.owned.resources.empty());
    // Removing the placement later leaves all three in place.
    const auto placed = applyPatch(live, *plan.patch);
    const auto cleaned =
        applyPatch(placed, *testing::planPatch(placed, nullptr, {}, "llama", "2").patch);
    CHECK(cleaned.nodeSelector.at("karpenter.sh/capacity-type") == "on-demand");
    CHECK(cleaned.tolerations == std::vector<Toleration>{kUsers, kGpuToleration});
    CHECK(cleaned.containers[0].limits.at("nvidia.com/gpu") == "1");
  }
}

TEST_CASE("a CPU placement sizes containers that set nothing; a team's own sizing stands") {
  Scheduling cpu;
  cpu.nodeSelector = {{"node.kubernetes.io/instance-type", "c5.xlarge"}};
  cpu.resources = {{"cpu", "2"}, {"memory", "1792Mi"}};
  SUBCASE("unsized: requests = limits as the placement was priced, and quiet afterwards") {
    const auto live = userDeployment();
    const auto plan = testing::planPatch(live, &cpu, {}, "embedder", "1");
    REQUIRE_FALSE(plan.blocked());
    const auto& resources = (*plan.patch)["spec"]["template"]["spec"]["containers"][0]["resources"];
    CHECK(resources["requests"] == json{{"cpu", "2"}, {"memory", "1792Mi"}});
    CHECK(resources["limits"] == json{{"cpu", "2"}, {"memory", "1792Mi"}});
    CHECK(plan.owned.resources.at("vllm").at("memory") == "1792Mi");
    const auto placed = applyPatch(live, *plan.patch);
    CHECK_FALSE(testing::planPatch(placed, &cpu, {}, "embedder", "2").patch.has_value());
  }
  SUBCASE("sized by the team: kept, not a conflict, not ours") {
    auto live = userDeployment();
    live.containers[0].requests = {{"cpu", "4"}, {"memory", "8Gi"}};
    const auto plan = testing::planPatch(live, &cpu, {}, "embedder", "1");
    REQUIRE_FALSE(plan.blocked());
    CHECK(plan.owned.resources.empty());
    const auto placed = applyPatch(live, *plan.patch);
    CHECK(placed.containers[0].requests.at("cpu") == "4");
    CHECK(placed.containers[0].requests.at("memory") == "8Gi");
  }
}

TEST_CASE("a GPU placement requests host memory without a limit; a CPU limit we wrote goes") {
  auto gpu = gpuScheduling();
  gpu.requestsOnly = {{"memory", "5888Mi"}};
  SUBCASE("unsized: the request alone, and quiet afterwards") {
    const auto live = userDeployment();
    const auto plan = testing::planPatch(live, &gpu, {}, "chat", "1");
    REQUIRE_FALSE(plan.blocked());
    const auto& resources = (*plan.patch)["spec"]["template"]["spec"]["containers"][0]["resources"];
    CHECK(resources["requests"] == json{{"memory", "5888Mi"}, {"nvidia.com/gpu", "1"}});
    CHECK(resources["limits"] == json{{"nvidia.com/gpu", "1"}});
    CHECK(plan.owned.resources.at("vllm").at("memory") == "5888Mi");
    const auto placed = applyPatch(live, *plan.patch);
    CHECK(placed.containers[0].requests.at("memory") == "5888Mi");
    CHECK(placed.containers[0].limits.count("memory") == 0);
    CHECK_FALSE(testing::planPatch(placed, &gpu, {}, "chat", "2").patch.has_value());
  }
  SUBCASE("from CPU to GPU: the memory limit the CPU placement wrote is removed") {
    Scheduling cpu;
    cpu.nodeSelector = {{"node.kubernetes.io/instance-type", "c5.xlarge"}};
    cpu.resources = {{"cpu", "2"}, {"memory", "1792Mi"}};
    const auto live = userDeployment();
    const auto onCpu = applyPatch(live, *testing::planPatch(live, &cpu, {}, "chat", "1").patch);
    const auto plan = testing::planPatch(onCpu, &gpu, {}, "chat", "2");
    REQUIRE_FALSE(plan.blocked());
    const auto moved = applyPatch(onCpu, *plan.patch);
    CHECK(moved.containers[0].requests.at("memory") == "5888Mi");
    CHECK(moved.containers[0].limits.count("memory") == 0);
    CHECK(moved.containers[0].requests.count("cpu") == 0);
    CHECK(moved.containers[0].limits.at("nvidia.com/gpu") == "1");
  }
  SUBCASE("sized by the team: its memory stands, not ours") {
    auto live = userDeployment();
    live.containers[0].limits["memory"] = "32Gi";
    const auto plan = testing::planPatch(live, &gpu, {}, "chat", "1");
    REQUIRE_FALSE(plan.blocked());
    CHECK(plan.owned.resources.at("vllm").count("memory") == 0);
    const auto placed = applyPatch(live, *plan.patch);
    CHECK(placed.containers[0].limits.at("memory") == "32Gi");
    CHECK(placed.containers[0].requests.count("memory") == 0);
  }
  SUBCASE("removed: the request we wrote goes, the devices too") {
    const auto live = userDeployment();
    const auto placed = applyPatch(live, *testing::planPatch(live, &gpu, {}, "chat", "1").patch);
    const auto plan = testing::planPatch(placed, nullptr, {}, "chat", "2");
    const auto cleared = applyPatch(placed, *plan.patch);
    CHECK(cleared.containers[0].requests.count("memory") == 0);
    CHECK(cleared.containers[0].limits.count("nvidia.com/gpu") == 0);
    CHECK(cleared.containers[0].limits.at("example.com/fpga") == "1");
  }
}

TEST_CASE("named containers, other owners and broken records") {
  const auto desired = gpuScheduling();
  auto live = userDeployment();
  const auto both = testing::planPatch(live, &desired, {"vllm", "sidecar"}, "llama", "1");
  REQUIRE(both.patch.has_value());
  CHECK((*both.patch)["spec"]["template"]["spec"]["containers"].size() == 2);

  const auto missing = testing::planPatch(live, &desired, {"server"}, "llama", "1");
  CHECK(missing.error == "the Deployment has no container named server");

  auto owned = applyPatch(live, *testing::planPatch(live, &desired, {}, "llama", "1").patch);
  const auto other = testing::planPatch(owned, &desired, {}, "mistral", "2");
  CHECK(other.error == "the Deployment is already placed by GpuWorkload llama");

  owned.ownership = readOwnership(std::string("{broken"));
  CHECK(owned.ownership.form == OwnershipRecord::Form::Unreadable);
  const auto broken = testing::planPatch(owned, &desired, {}, "llama", "3");
  CHECK(broken.error.find("gpuplacement.io/owned-fields") != std::string::npos);
}

TEST_CASE("a suspended Job is placed and resumed in one patch; a started one only released") {
  TargetState job;
  job.kind = TargetKind::Job;
  job.generation = 1;
  job.job.suspended = true;
  job.containers = {{"train", {}, {}}};
  Scheduling neuron;
  neuron.nodeSelector = {{"node.kubernetes.io/instance-type", "trn1.32xlarge"}};
  neuron.tolerations = {kNeuron};
  neuron.resources = {{"aws.amazon.com/neuron", "16"}};

  const auto plan = testing::planPatch(job, &neuron, {}, "llama", "9", PlaceAt::PodTemplate, true);
  REQUIRE(plan.patch.has_value());
  const auto& patch = *plan.patch;
  CHECK(patch["spec"]["suspend"] == false);  // in the same write as the directives
  CHECK(patch["spec"]["template"]["spec"]["nodeSelector"]["node.kubernetes.io/instance-type"] ==
        "trn1.32xlarge");
  CHECK(patch["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
             ["aws.amazon.com/neuron"] == "16");
  CHECK(plan.resourcesChanged);
  const auto placed = applyPatch(job, patch);
  CHECK_FALSE(placed.job.suspended);

  // Queued by another controller (Kueue): placed, its resume left to it.
  const auto queued = testing::planPatch(job, &neuron, {}, "llama", "9");
  REQUIRE(queued.patch.has_value());
  CHECK_FALSE((*queued.patch)["spec"].contains("suspend"));

  // Already carrying the placement, still suspended: the resume alone.
  auto carrying = applyPatch(job, *queued.patch);
  carrying.job.suspended = true;
  const auto resume =
      testing::planPatch(carrying, &neuron, {}, "llama", "10", PlaceAt::PodTemplate, true);
  REQUIRE(resume.patch.has_value());
  CHECK((*resume.patch)["spec"] == json{{"suspend", false}});
  CHECK_FALSE(resume.resourcesChanged);

  // A Job whose own device limit matches (its request defaults to it): the
  // team's, not a conflict, and not ours to change.
  auto limitOnly = job;
  limitOnly.containers = {{"train", {{"aws.amazon.com/neuron", "16"}}, {}}};
  const auto asked =
      testing::planPatch(limitOnly, &neuron, {}, "llama", "9", PlaceAt::PodTemplate, true);
  CHECK(asked.conflicts.empty());
  CHECK_FALSE(asked.resourcesChanged);
  CHECK(asked.owned.resources.empty());
  // A Job whose own requests match: nothing but the directives changes.
  auto ownDevices = job;
  ownDevices.containers = {
      {"train", {{"aws.amazon.com/neuron", "16"}}, {{"aws.amazon.com/neuron", "16"}}}};
  CHECK_FALSE(testing::planPatch(ownDevices, &neuron, {}, "llama", "9", PlaceAt::PodTemplate, true)
                  .resourcesChanged);

  // Started: its template can no longer change. Placing it is refused;
  // releasing it drops only the ownership record.
  auto started = applyPatch(job, patch);
  started.job.suspended = true;  // paused after it started: started all the same
  started.job.startTime = "2026-11-25T10:00:00Z";
  const auto gpu = gpuScheduling();
  const auto moved = testing::planPatch(started, &gpu, {}, "llama", "11");
  CHECK(moved.error.find("the Job has started, or is no longer suspended") != std::string::npos);
  CHECK_FALSE(moved.patch.has_value());
  const auto released = testing::planPatch(started, nullptr, {}, "llama", "11");
  REQUIRE(released.patch.has_value());
  CHECK_FALSE(released.patch->contains("spec"));
  CHECK(released.patch->at("metadata").at("annotations").at(kOwnedFieldsAnnotation).is_null());
  // A Job the operator's placement never reached: nothing to write.
  started.ownership = {};
  CHECK_FALSE(testing::planPatch(started, nullptr, {}, "llama", "11").patch.has_value());
}

TEST_CASE("a Job's node selector and tolerations go into its template, never to its pods") {
  TargetState job;
  job.kind = TargetKind::Job;
  // Read, as from the cache: g++ 12 at -O1 takes an optional set in place
  // on a local TargetState for one left uninitialized (-Wmaybe-uninitialized).
  job.ownership = readOwnership(R"({"workload": "w", "pods": {}})");
  REQUIRE(job.ownership.fields.pods.has_value());
  CHECK(resolvePlaceAt(PlaceAt::Pods, job) == PlaceAt::PodTemplate);
  CHECK(resolvePlaceAt(PlaceAt::Auto, job) == PlaceAt::PodTemplate);
}

TEST_CASE("a Mixed placement spreads the replicas over capacity types, beside the team's spreads") {
  auto live = userDeployment();
  live.spreadKeys = {"topology.kubernetes.io/zone"};  // the team's own
  auto mixed = gpuScheduling();
  mixed.nodeSelector.erase("karpenter.sh/capacity-type");
  mixed.spreadKey = "karpenter.sh/capacity-type";
  const auto onDemand = gpuScheduling();

  struct Step {
    const char* label;
    const Scheduling* desired;
    json spread;  // the patch's list; null: untouched
    const char* owned;
    std::vector<std::string> keysAfter;
  };
  const json entry = {{"maxSkew", 1},
                      {"topologyKey", "karpenter.sh/capacity-type"},
                      {"whenUnsatisfiable", "DoNotSchedule"},
                      {"minDomains", 2},
                      {"labelSelector", {{"matchLabels", {{"app", "chat"}}}}},
                      {"matchLabelKeys", {"pod-template-hash"}}};
  const json removal = {{"$patch", "delete"}, {"topologyKey", "karpenter.sh/capacity-type"}};
  const Step steps[] = {
      {"placed Mixed: our entry is added",
       &mixed,
       json::array({entry}),
       "karpenter.sh/capacity-type",
       {"topology.kubernetes.io/zone", "karpenter.sh/capacity-type"}},
      {"again: nothing to write",
       &mixed,
       nullptr,
       "karpenter.sh/capacity-type",
       {"topology.kubernetes.io/zone", "karpenter.sh/capacity-type"}},
      {"moved to on-demand: ours goes, the team's stays",
       &onDemand,
       json::array({removal}),
       "",
       {"topology.kubernetes.io/zone"}},
      {"Mixed again",
       &mixed,
       json::array({entry}),
       "karpenter.sh/capacity-type",
       {"topology.kubernetes.io/zone", "karpenter.sh/capacity-type"}},
      {"unplaced: ours goes", nullptr, json::array({removal}), "", {"topology.kubernetes.io/zone"}},
  };
  for (const auto& step : steps) {
    CAPTURE(std::string(step.label));
    const auto plan = testing::planPatch(live, step.desired, {}, "chat", "7");
    REQUIRE_FALSE(plan.blocked());
    const json none;
    const json& spread = plan.patch ? (*plan.patch)["spec"]["template"]["spec"].value(
                                          "topologySpreadConstraints", none)
                                    : none;
    CHECK(spread == step.spread);
    CHECK(plan.owned.spreadKey == step.owned);
    if (plan.patch) {
      live = testing::applyPatch(live, *plan.patch);
    }
    CHECK(live.spreadKeys == step.keysAfter);
    CHECK(live.ownership.fields.spreadKey == step.owned);
  }
  // The mixed placement selects no capacity type: the spread picks both.
  const auto placed = testing::planPatch(userDeployment(), &mixed, {}, "chat", "8");
  REQUIRE(placed.patch);
  CHECK_FALSE((*placed.patch)["spec"]["template"]["spec"]["nodeSelector"].contains(
      "karpenter.sh/capacity-type"));
}

TEST_CASE("a team's own spread over capacity types stands; a Job's spread has no rollout key") {
  auto live = userDeployment();
  live.spreadKeys = {"karpenter.sh/capacity-type"};
  auto mixed = gpuScheduling();
  mixed.nodeSelector.erase("karpenter.sh/capacity-type");
  mixed.spreadKey = "karpenter.sh/capacity-type";
  auto plan = testing::planPatch(live, &mixed, {}, "chat", "7");
  REQUIRE_FALSE(plan.blocked());
  REQUIRE(plan.patch);
  CHECK_FALSE((*plan.patch)["spec"]["template"]["spec"].contains("topologySpreadConstraints"));
  CHECK(plan.owned.spreadKey.empty());  // theirs: never removed by us

  TargetState job;
  job.kind = TargetKind::Job;
  job.job.suspended = true;
  job.podLabels = {{"batch.kubernetes.io/controller-uid", "u-1"}};
  job.containers = {{"train", {}, {}}};
  plan = testing::planPatch(job, &mixed, {}, "train", "3");
  REQUIRE(plan.patch);
  const auto& spread = (*plan.patch)["spec"]["template"]["spec"]["topologySpreadConstraints"];
  REQUIRE(spread.size() == 1);
  CHECK(spread[0]["labelSelector"]["matchLabels"] ==
        json{{"batch.kubernetes.io/controller-uid", "u-1"}});
  CHECK_FALSE(spread[0].contains("matchLabelKeys"));

  // Pods without labels cannot be counted apart from the namespace's others.
  auto unlabelled = userDeployment();
  unlabelled.podLabels.clear();
  plan = testing::planPatch(unlabelled, &mixed, {}, "chat", "9");
  CHECK_FALSE(plan.patch);
  CHECK(plan.error.find("carry no labels") != std::string::npos);
}

}  // namespace gpuplacement::core
