// Dynamic Resource Allocation: the devices ResourceSlices publish and
// ResourceClaims hold, counted as the device plugins' are; a placement on
// nodes that offer them so asks by a ResourceClaimTemplate, written into
// the pod template beside the team's own claims and taken back whole.
#include "core/cluster/dra.h"

#include <doctest/doctest.h>

#include "core/decide/cluster_cost.h"
#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "core/plan/template_patch.h"
#include "support/cluster_fixture.h"
#include "support/engine_fixture.h"
#include "support/template_patch.h"

namespace gpuplacement::core::dra_test {

using json = nlohmann::json;
using testing::applyPatch;
using testing::Cluster;
using testing::g6Pool;
using testing::IntentBuilder;
using testing::shippedCatalog;
using testing::shippedEngine;

// A g6e.xlarge (one L40S) whose GPU NVIDIA's DRA driver publishes, and no
// device plugin: no nvidia.com/gpu.
NodeView g6eByDra() {
  NodeView node = testing::g6x1();
  node.instanceType = "g6e.xlarge";
  node.allocatable.gpus = 0;
  node.milliCpu = 3920;
  node.memoryBytes = 27000LL << 20;
  return node;
}

Devices gpus(int count) {
  Devices devices;
  devices.gpus = count;
  return devices;
}

Devices slices(const std::string& profile, int count) {
  Devices devices;
  devices.mig = {{profile, count}};
  return devices;
}

Decision decideOn(const Cluster& cluster, const WorkloadIntent& intent) {
  const auto engine = shippedEngine();
  const auto state = cluster.state();
  const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
  return decide(*engine, intent, ClusterContext{&view, {}, {}});
}

IntentBuilder serving(const char* parameters) {
  return IntentBuilder(WorkloadKind::Inference, parameters)
      .tiers({Tier::NVIDIA})
      .capacity(CapacityType::OnDemand);
}

TEST_CASE("ResourceSlices and ResourceClaims: devices counted as the device plugins count theirs") {
  const auto slice = resourceSliceFromJson(json::parse(R"({
    "spec": {"driver": "gpu.nvidia.com", "nodeName": "ip-10-0-16-4.ec2.internal",
             "pool": {"name": "ip-10-0-16-4.ec2.internal", "generation": 1, "resourceSliceCount": 1},
             "devices": [
               {"name": "gpu-0", "attributes": {"type": {"string": "gpu"},
                                                "productName": {"string": "NVIDIA A100-SXM4-40GB"}}},
               {"name": "gpu-1-mig-1g5gb-0", "attributes": {"type": {"string": "mig"},
                                                            "profile": {"string": "1g.5gb"}}},
               {"name": "gpu-1-mig-1g5gb-1", "attributes": {"gpu.nvidia.com/type": {"string": "mig"},
                                                            "gpu.nvidia.com/profile": {"string": "1g.5gb"}}},
               {"name": "nic-0", "attributes": {"type": {"string": "nic"}}}]}})"));
  CHECK(slice.node == "ip-10-0-16-4.ec2.internal");
  CHECK(slice.devices.gpus == 1);
  CHECK(slice.devices.migOf("1g.5gb") == 2);
  CHECK(slice.each.size() == 3);  // the NIC is not counted
  CHECK(std::get<2>(slice.each[1].first) == "gpu-1-mig-1g5gb-0");

  const auto neuron = resourceSliceFromJson(json::parse(R"({
    "spec": {"driver": "neuron.aws.com", "nodeName": "n", "pool": {"name": "n"},
             "devices": [{"name": "neuron-0"}, {"name": "neuron-1"}]}})"));
  CHECK(neuron.devices.neuronDevices == 2);
  const auto network = resourceSliceFromJson(json::parse(R"({
    "spec": {"driver": "gpu.nvidia.com", "pool": {"name": "fabric"}, "allNodes": true,
             "devices": [{"name": "gpu-0"}]}})"));
  CHECK(network.node.empty());
  CHECK(network.devices == Devices{});

  const auto claim = claimAllocationFromJson(json::parse(R"({
    "status": {"allocation": {"devices": {"results": [
      {"request": "devices", "driver": "gpu.nvidia.com", "pool": "n", "device": "gpu-0"}]}}}})"));
  REQUIRE(claim.devices.size() == 1);
  CHECK(claim.devices[0] == DeviceRef{"gpu.nvidia.com", "n", "gpu-0"});
  CHECK(claimAllocationFromJson(json::parse(R"({"status": {}})")).devices.empty());
}

TEST_CASE("on nodes whose devices come through DRA, a placement asks by a claim") {
  struct Case {
    const char* label;
    Cluster cluster;
    WorkloadIntent intent;
    const char* instanceType;
    const char* deviceClass;
    const char* selector;
    const char* profile;
  };
  Cluster l40s{{g6eByDra()}, {0}, {}};
  l40s.dra = {gpus(1)};
  Cluster a100{{testing::p4dMig("1g.5gb", 56)}, {0}, {}};
  a100.nodes[0].allocatable.mig.clear();  // the slices come through DRA only
  a100.dra = {slices("1g.5gb", 56)};
  a100.draUsed = {slices("1g.5gb", 1)};  // another team's claim keeps the node up
  const Case cases[] = {
      {"a whole L40S: class gpu.nvidia.com, its product name", l40s, serving("7B"), "g6e.xlarge",
       "gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L40S'", ""},
      {"a MIG slice: class mig.nvidia.com, its profile", a100, serving("1.55B"), "p4d.24xlarge",
       "mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'", "1g.5gb"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decideOn(c.cluster, c.intent);
    REQUIRE(decision.placement);
    const auto& placement = *decision.placement;
    CHECK(placement.instanceType == c.instanceType);
    CHECK(placement.claim);
    CHECK(placement.migProfile == c.profile);
    const auto scheduling = renderScheduling(placement, *shippedCatalog(), Policy{});
    REQUIRE(scheduling.claim);
    CHECK(scheduling.claim->deviceClassName == c.deviceClass);
    CHECK(scheduling.claim->selector == c.selector);
    CHECK(scheduling.claim->count == 1);
    CHECK(scheduling.resources.count("nvidia.com/gpu") == 0);
    CHECK(scheduling.resources.size() == 0);
  }
  // A Job's template cannot gain a claim: its whole L40S is asked for by
  // the class's extended resource, for which the scheduler makes the claim.
  auto job = serving("7B").only({"g6e.xlarge"}).intent;
  job.claimsWritable = false;
  const auto byResource = decideOn(l40s, job);
  REQUIRE(byResource.placement);
  CHECK(byResource.placement->claim);
  CHECK(byResource.placement->claimByResource);
  const auto jobScheduling = renderScheduling(*byResource.placement, *shippedCatalog(), Policy{});
  CHECK_FALSE(jobScheduling.claim);
  CHECK(jobScheduling.resources == std::map<std::string, std::string>{
                                       {"deviceclass.resource.kubernetes.io/gpu.nvidia.com", "1"}});
  // A JobSet keeps its pods' devices as created: one that asks for
  // nvidia.com/gpu is not placed where they come through DRA only, one that
  // asks by the class's extended resource is.
  auto jobSet = job;
  jobSet.fixedDevices = {"nvidia.com/gpu", 1, "workers", "trainer"};
  CHECK_FALSE(decideOn(l40s, jobSet).placement);
  jobSet.fixedDevices = {"deviceclass.resource.kubernetes.io/gpu.nvidia.com", 1, "workers",
                         "trainer"};
  const auto byClass = decideOn(l40s, jobSet);
  REQUIRE(byClass.placement);
  CHECK(byClass.placement->claimByResource);
  // ... but a class cannot name a MIG profile: the slices are passed over,
  // and the reason says why.
  auto speech = serving("1.55B").only({"p4d.24xlarge"}).intent;
  speech.claimsWritable = false;
  const auto passed = decideOn(a100, speech);
  CHECK_FALSE(passed.placement);
  CHECK_MESSAGE(passed.cannotPlace.find("a DeviceClass's extended resource cannot name a "
                                        "profile") != std::string::npos,
                passed.cannotPlace);
  // The DRA devices taken by claims leave no room: the placement goes
  // elsewhere, here nowhere.
  Cluster full = l40s;
  full.draUsed = {gpus(1)};
  CHECK_FALSE(decideOn(full, serving("7B").only({"g6e.xlarge"})).placement);
}

TEST_CASE("a claim's template: named by the workload and the request, owned by the workload") {
  const DeviceClaim l40s{kGpuDeviceClass,
                         "device.attributes['gpu.nvidia.com'].productName == "
                         "'NVIDIA L40S'",
                         1};
  const DeviceClaim two = {l40s.deviceClassName, l40s.selector, 2};
  const auto name = claimTemplateName("llama-chat", l40s);
  CHECK(name.starts_with("llama-chat-"));
  CHECK(name.size() == std::string("llama-chat-").size() + 8);
  CHECK(claimTemplateName("llama-chat", l40s) == name);
  CHECK(claimTemplateName("llama-chat", two) != name);
  const auto object = claimTemplateObject("ml-serving", name, "llama-chat", "uid-1", two);
  CHECK(object["kind"] == "ResourceClaimTemplate");
  CHECK(object["apiVersion"] == "resource.k8s.io/v1");
  CHECK(object["metadata"]["labels"][kClaimTemplateLabel] == "llama-chat");
  CHECK(object["metadata"]["ownerReferences"][0]["uid"] == "uid-1");
  CHECK(object["metadata"]["ownerReferences"][0]["kind"] == "GpuWorkload");
  const auto& request = object["spec"]["spec"]["devices"]["requests"][0];
  CHECK(request["exactly"]["deviceClassName"] == "gpu.nvidia.com");
  CHECK(request["exactly"]["count"] == 2);
  CHECK(request["exactly"]["selectors"][0]["cel"]["expression"] == l40s.selector);
  // Neuron: the class alone; the node's type selects the model.
  const auto& trainium =
      shippedCatalog()
          ->accelerators[static_cast<std::size_t>(shippedCatalog()->acceleratorIndex("Trainium"))];
  const auto neuron = deviceClaimFor(trainium, Tier::Trainium, 16, "");
  CHECK(neuron.deviceClassName == "neuron.aws.com");
  CHECK(neuron.selector.empty());
  CHECK(neuron.count == 16);
}

TEST_CASE("the claim goes into the pod template beside the team's, and comes out whole") {
  TargetState live;
  live.generation = 3;
  live.containers = {{"server", {}, {}, {{"scratch", ""}}}, {"sidecar", {}, {}}};
  live.podClaims = {{"scratch", "team-scratch"}};
  Scheduling desired;
  desired.nodeSelector = {{"node.kubernetes.io/instance-type", "g6e.xlarge"}};
  desired.claim = DeviceClaim{kGpuDeviceClass, "true", 1};
  const auto name = claimTemplateName("llama", *desired.claim);
  const auto first = testing::planPatch(live, &desired, {}, "llama", "1");
  REQUIRE_FALSE(first.blocked());
  REQUIRE(first.patch);
  const auto& podSpec = (*first.patch)["spec"]["template"]["spec"];
  CHECK(podSpec["resourceClaims"] ==
        json::array({{{"name", "gpu-placement"}, {"resourceClaimTemplateName", name}}}));
  // The container's claims list is replaced whole: the team's entry stays.
  CHECK(podSpec["containers"][0]["name"] == "server");
  CHECK(podSpec["containers"][0]["resources"]["claims"] ==
        json::array({{{"name", "scratch"}}, {{"name", "gpu-placement"}}}));
  CHECK(first.owned.claimTemplate == name);
  CHECK(first.owned.claimContainer == "server");

  const auto placed = applyPatch(live, *first.patch);
  CHECK(placed.podClaims.at("gpu-placement") == name);
  CHECK_FALSE(testing::planPatch(placed, &desired, {}, "llama", "2").patch.has_value());

  // Another request, another template: the entry is renamed, the lists stay.
  Scheduling two = desired;
  two.claim->count = 2;
  const auto moved = testing::planPatch(placed, &two, {}, "llama", "3");
  REQUIRE(moved.patch);
  CHECK((*moved.patch)["spec"]["template"]["spec"]["resourceClaims"][0]
                      ["resourceClaimTemplateName"] == claimTemplateName("llama", *two.claim));
  CHECK_FALSE((*moved.patch)["spec"]["template"]["spec"].contains("containers"));

  // Released: ours goes from both lists, the team's stays.
  const auto release = testing::planPatch(placed, nullptr, {}, "llama", "4");
  REQUIRE(release.patch);
  const auto& removed = (*release.patch)["spec"]["template"]["spec"];
  CHECK(removed["resourceClaims"] ==
        json::array({{{"$patch", "delete"}, {"name", "gpu-placement"}}}));
  CHECK(removed["containers"][0]["resources"]["claims"] == json::array({{{"name", "scratch"}}}));
  const auto cleaned = applyPatch(placed, *release.patch);
  CHECK(cleaned.podClaims == live.podClaims);
  CHECK(cleaned.containers[0].claims == live.containers[0].claims);

  // A team's own entry of our name: a conflict, nothing written.
  TargetState taken = live;
  taken.podClaims["gpu-placement"] = "theirs";
  const auto blocked = testing::planPatch(taken, &desired, {}, "llama", "5");
  CHECK(blocked.blocked());
  CHECK_FALSE(blocked.patch);
}

}  // namespace gpuplacement::core::dra_test
