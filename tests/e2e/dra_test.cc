// Dynamic Resource Allocation end to end on the simulated cluster (real
// kube-scheduler and kube-controller-manager, kwok nodes; config/sim/
// e2e-dra.yaml): a g6e.xlarge and a p4d.24xlarge whose GPUs NVIDIA's DRA
// driver publishes in ResourceSlices (no nvidia.com/gpu), the p4d's cut into
// 1g.5gb MIG devices, beside a T4 node group.
//
// - A 7B model needs the L40S. The operator writes a ResourceClaimTemplate
//   (class gpu.nvidia.com, the L40S's product name), owned by the
//   GpuWorkload, and names it in the pod template; the controller-manager
//   makes the pod's claim, the scheduler allocates the L40S, and the pod
//   runs on the g6e.
// - A 1B encoder restricted to Inferentia gets the inf2.xlarge's device
//   through a template of class neuron.aws.com (the Neuron DRA driver's).
// - Another team's claim holds one MIG device of the p4d; seed 001's speech
//   model takes another through a template of class mig.nvidia.com that
//   selects the 1g.5gb profile.
// - Deleting a GpuWorkload takes its claim out of the pod template and
//   deletes its template.
// - A Job created suspended for its GpuWorkload (a LoRA fine-tune of 350M
//   parameters that asks for an isolated share) would be cheapest on a MIG
//   device, but the API server keeps a suspended Job's spec.resourceClaims
//   as created (Kubernetes 1.36): it goes to a T4 the device plugin serves,
//   says why, and is resumed in one write.
// - A suspended Job whose 7B model needs an L40S asks for it by the
//   DeviceClass's extended resource (deviceclass.resource.kubernetes.io/
//   gpu.nvidia.com, KEP-5004, beta in 1.36), which container resources may
//   carry while suspended: resumed in one write, its pod's claim made and
//   allocated by the scheduler.
#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/operator_fixture.h"
#include "support/speech_workload.h"
#include "support/suite.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::cluster;
using testing::ControlPlane;
using testing::json;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/e2e-dra.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "dra";
const std::string kResource = "/apis/resource.k8s.io/v1/namespaces/" + kNamespace;

json placementOf(const std::string& name) {
  return testing::placementOf(kNamespace, name);
}

json podSpecOf(const std::string& path) {
  return cluster().mustGet(path)["spec"]["template"]["spec"];
}

bool runs(const std::string& app) {
  return !testing::runningNodesOf(kNamespace, app).empty();
}

// The devices the claims of an app's pods were allocated ("gpu-0").
std::vector<std::string> allocatedTo(const std::string& app) {
  std::vector<std::string> devices;
  auto pods =
      cluster().get("/api/v1/namespaces/" + kNamespace + "/pods?labelSelector=app%3D" + app);
  if (!pods) {
    return devices;
  }
  for (const auto& pod : (*pods)["items"]) {
    for (const auto& status :
         base::memberOf(base::memberOf(pod, "status"), "resourceClaimStatuses")) {
      const auto claim = cluster().get(kResource + "/resourceclaims/" +
                                       base::stringMember(status, "resourceClaimName"));
      if (!claim) {
        continue;
      }
      for (const auto& result : base::memberOf(
               base::memberOf(base::memberOf(base::memberOf(*claim, "status"), "allocation"),
                              "devices"),
               "results")) {
        devices.push_back(base::stringMember(result, "device"));
      }
    }
  }
  return devices;
}

// A GpuWorkload for a one-replica Deployment of the same name.
void applyServing(const std::string& name, const std::string& model,
                  const std::string& tiers = "[NVIDIA]") {
  cluster().apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
                  ", namespace: " + kNamespace +
                  "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: " + name +
                  "}}\n  template:\n    metadata: {labels: {app: " + name +
                  "}}\n    spec:\n      containers: [{name: server, image: server:1}]\n");
  cluster().apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " + name +
      ", namespace: " + kNamespace + "}\nspec:\n  targetRef: {kind: Deployment, name: " + name +
      "}\n  " + model + "\n  objective: CostOptimized\n  constraints: {tiers: " + tiers +
      ", capacityType: OnDemand}\n");
}

// Another team's service holding one MIG device of the p4d by a claim of its own.
void applyResident() {
  cluster().apply(
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: "
      "resident, namespace: " +
      kNamespace +
      "}\nspec:\n  spec:\n    devices:\n      requests:\n      - name: mig\n        "
      "exactly: {deviceClassName: mig.nvidia.com}\n");
  cluster().apply(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: resident, namespace: " + kNamespace +
      "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: resident}}\n  template:\n"
      "    metadata: {labels: {app: resident}}\n    spec:\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "      resourceClaims: [{name: mig, resourceClaimTemplateName: resident}]\n"
      "      containers:\n      - name: server\n        image: server:1\n"
      "        resources: {claims: [{name: mig}]}\n");
}

// A Job created suspended for its GpuWorkload of the same name.
void applySuspendedJob(const std::string& name, const std::string& workload) {
  cluster().apply("apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name +
                  ", namespace: " + kNamespace + ", labels: {gpuplacement.io/workload: " + name +
                  "}}\nspec:\n  suspend: true\n  template:\n    metadata: {labels: {app: " + name +
                  "}}\n    spec:\n      restartPolicy: Never\n      containers: [{name: worker, "
                  "image: worker:1}]\n");
  cluster().apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " + name +
      ", namespace: " + kNamespace + "}\nspec:\n  targetRef: {kind: Job, name: " + name + "}\n  " +
      workload + "\n  objective: CostOptimized\n");
}

std::string jobPath(const std::string& name) {
  return "/apis/batch/v1/namespaces/" + kNamespace + "/jobs/" + name;
}

// The Job's pod, once it ran (kwok runs it to completion at once: Running
// or Succeeded) on a node of the type.
std::optional<json> ranOn(const std::string& app, const std::string& instanceType) {
  auto pods =
      cluster().get("/api/v1/namespaces/" + kNamespace + "/pods?labelSelector=app%3D" + app);
  if (!pods || (*pods)["items"].empty()) {
    return std::nullopt;
  }
  const auto& pod = (*pods)["items"][0];
  const auto phase = base::stringMember(pod["status"], "phase");
  const auto node = cluster().get("/api/v1/nodes/" + base::stringMember(pod["spec"], "nodeName"));
  if ((phase == "Running" || phase == "Succeeded") && node &&
      testing::labelOf(*node, "node.kubernetes.io/instance-type") == instanceType) {
    return pod;
  }
  return std::nullopt;
}

testing::OperatorInNamespace& fixture() {
  static testing::OperatorInNamespace instance(kNamespace, [] {
    applyResident();
    REQUIRE_MESSAGE(cluster().waitFor([] { return runs("resident"); }, std::chrono::seconds(60)),
                    "the resident never ran on its MIG device");
  });
  return instance;
}

TEST_CASE("a whole L40S through a claim the scheduler allocates") {
  auto& f = fixture();
  auto& c = cluster();
  applyServing("llama", "workload: {kind: Inference}\n  model: {parameters: 7B, precision: fp16}");
  const bool placed =
      c.waitFor([] { return base::memberOf(placementOf("llama"), "resourceClaim") == true; },
                std::chrono::seconds(60));
  const std::string why = f.op->log() + "\nplacement: " + placementOf("llama").dump();
  REQUIRE_MESSAGE(placed, why);
  const auto placement = placementOf("llama");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "g6e.xlarge");
  CHECK(placement["acceleratorCount"] == 1);

  // The pod template names the operator's template, and asks no device.
  const auto podSpec = podSpecOf("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/llama");
  REQUIRE(podSpec["resourceClaims"].size() == 1);
  const std::string name = podSpec["resourceClaims"][0]["resourceClaimTemplateName"];
  CHECK(podSpec["resourceClaims"][0]["name"] == "gpu-placement");
  CHECK(podSpec["containers"][0]["resources"]["claims"] ==
        json::array({{{"name", "gpu-placement"}}}));
  CHECK_FALSE(
      base::memberOf(podSpec["containers"][0]["resources"], "limits").contains("nvidia.com/gpu"));
  const auto templ = c.mustGet(kResource + "/resourceclaimtemplates/" + name);
  const auto& request = templ["spec"]["spec"]["devices"]["requests"][0]["exactly"];
  CHECK(request["deviceClassName"] == "gpu.nvidia.com");
  CHECK(request["selectors"][0]["cel"]["expression"] ==
        "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA L40S'");
  CHECK(templ["metadata"]["ownerReferences"][0]["kind"] == "GpuWorkload");
  CHECK(templ["metadata"]["ownerReferences"][0]["name"] == "llama");

  REQUIRE_MESSAGE(c.waitFor([] { return runs("llama"); }, std::chrono::seconds(60)),
                  "no Running pod of llama");
  CHECK(testing::labelOf(testing::runningNodesOf(kNamespace, "llama").front(),
                         "node.kubernetes.io/instance-type") == "g6e.xlarge");
  CHECK(allocatedTo("llama") == std::vector<std::string>{"gpu-0"});
}

TEST_CASE("an Inferentia2 through a claim of class neuron.aws.com") {
  auto& f = fixture();
  auto& c = cluster();
  applyServing("encoder",
               "workload: {kind: Inference}\n  model: {parameters: 1B, precision: bf16, "
               "framework: PyTorch}",
               "[Inferentia]");
  const bool placed =
      c.waitFor([] { return base::memberOf(placementOf("encoder"), "resourceClaim") == true; },
                std::chrono::seconds(60));
  const std::string why = f.op->log() + "\nplacement: " + placementOf("encoder").dump();
  REQUIRE_MESSAGE(placed, why);
  const auto placement = placementOf("encoder");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "inf2.xlarge");
  const auto podSpec = podSpecOf("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/encoder");
  REQUIRE(podSpec["resourceClaims"].size() == 1);
  CHECK_FALSE(base::memberOf(podSpec["containers"][0]["resources"], "limits")
                  .contains("aws.amazon.com/neuron"));
  const auto templ =
      c.mustGet(kResource + "/resourceclaimtemplates/" +
                std::string(podSpec["resourceClaims"][0]["resourceClaimTemplateName"]));
  const auto& request = templ["spec"]["spec"]["devices"]["requests"][0]["exactly"];
  CHECK(request["deviceClassName"] == "neuron.aws.com");
  CHECK(request["count"] == 1);
  CHECK_FALSE(request.contains("selectors"));  // the node's type selects the chip
  REQUIRE_MESSAGE(c.waitFor([] { return runs("encoder"); }, std::chrono::seconds(60)),
                  "no Running pod of encoder");
  CHECK(allocatedTo("encoder") == std::vector<std::string>{"neurondevice0"});
  REQUIRE(c.remove(workloadPath(kNamespace, "encoder")).ok());
}

TEST_CASE("a MIG profile through a claim, beside another team's") {
  auto& f = fixture();
  auto& c = cluster();
  testing::applySpeechWorkload(kNamespace, "speech");
  const bool placed =
      c.waitFor([] { return !base::stringMember(placementOf("speech"), "migProfile").empty(); },
                std::chrono::seconds(60));
  const std::string why = f.op->log() + "\nplacement: " + placementOf("speech").dump();
  REQUIRE_MESSAGE(placed, why);
  const auto placement = placementOf("speech");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "p4d.24xlarge");
  CHECK(placement["migProfile"] == "1g.5gb");
  CHECK(placement["resourceClaim"] == true);
  const auto podSpec = podSpecOf("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/speech");
  const std::string name = podSpec["resourceClaims"][0]["resourceClaimTemplateName"];
  const auto templ = c.mustGet(kResource + "/resourceclaimtemplates/" + name);
  const auto& request = templ["spec"]["spec"]["devices"]["requests"][0]["exactly"];
  CHECK(request["deviceClassName"] == "mig.nvidia.com");
  CHECK(request["selectors"][0]["cel"]["expression"] ==
        "device.attributes['gpu.nvidia.com'].profile == '1g.5gb'");
  REQUIRE_MESSAGE(c.waitFor([] { return runs("speech"); }, std::chrono::seconds(60)),
                  "no Running pod of speech");
  const auto devices = allocatedTo("speech");
  REQUIRE(devices.size() == 1);
  CHECK(devices[0].find("-mig-1g5gb-") != std::string::npos);
  CHECK(devices != allocatedTo("resident"));
}

TEST_CASE("deleting the workload takes its claim out of the template and deletes its template") {
  auto& f = fixture();
  auto& c = cluster();
  const auto before = podSpecOf("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/speech");
  const std::string name = before["resourceClaims"][0]["resourceClaimTemplateName"];
  REQUIRE(c.remove(workloadPath(kNamespace, "speech")).ok());
  REQUIRE_MESSAGE(
      c.waitFor(
          [&] {
            return !c.get(kResource + "/resourceclaimtemplates/" + name) &&
                   !podSpecOf("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/speech")
                        .contains("resourceClaims");
          },
          std::chrono::seconds(60)),
      f.op->log());
  const auto after = podSpecOf("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/speech");
  CHECK_FALSE(base::memberOf(after["containers"][0], "resources").contains("claims"));
  // The resident's own template and claim are not the operator's.
  CHECK(c.get(kResource + "/resourceclaimtemplates/resident"));
}

// The Job resumed by its GpuWorkload, and the placement it was resumed for.
json resumedPlacement(const std::string& name) {
  auto& c = cluster();
  const bool resumed =
      c.waitFor([&] { return c.mustGet(jobPath(name))["spec"]["suspend"] == false; },
                std::chrono::seconds(60));
  const std::string why = fixture().op->log() + "\nplacement: " + placementOf(name).dump();
  REQUIRE_MESSAGE(resumed, why);
  // The status follows the write that resumed the Job, on the writer's
  // budget (the Job's ownership record and the Placed Event are at once).
  REQUIRE_MESSAGE(
      c.waitFor([&] { return placementOf(name).is_object(); }, std::chrono::seconds(30)),
      fixture().op->log());
  auto placement = placementOf(name);
  MESSAGE(placement.dump());
  return placement;
}

TEST_CASE("a suspended Job goes where no claim is needed, and is resumed in one write") {
  fixture();
  auto& c = cluster();
  applySuspendedJob("tune",
                    "workload: {kind: FineTuning}\n  model: {parameters: 350M, precision: fp16}\n  "
                    "constraints: {tiers: [NVIDIA], capacityType: OnDemand, sharing: Isolated}");
  // The MIG devices of the p4d would be the cheapest; the API server keeps
  // a suspended Job's spec.resourceClaims as created, and no DeviceClass
  // names a profile, so the Job takes a T4 the device plugin serves.
  const auto placement = resumedPlacement("tune");
  CHECK(placement["instanceType"] == "g4dn.xlarge");
  CHECK_FALSE(placement.contains("resourceClaim"));
  const auto placed = c.conditionMessageOf(workloadPath(kNamespace, "tune"), "Placed");
  CHECK_MESSAGE(
      placed.find("a Job's pod template cannot gain spec.resourceClaims") != std::string::npos,
      placed);
  const auto job = c.mustGet(jobPath("tune"));
  CHECK(job["metadata"]["generation"] == 2);  // created, then the one write
  const auto& podSpec = job["spec"]["template"]["spec"];
  CHECK_FALSE(podSpec.contains("resourceClaims"));
  CHECK(podSpec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
  REQUIRE_MESSAGE(
      c.waitFor([] { return ranOn("tune", "g4dn.xlarge").has_value(); }, std::chrono::seconds(60)),
      "the Job's pod never ran on the T4");
}

TEST_CASE("a suspended Job's L40S through DRA: the class's extended resource, one write") {
  auto& f = fixture();
  auto& c = cluster();
  applySuspendedJob("summarize",
                    "workload: {kind: BatchInference}\n  model: {parameters: 7B, precision: "
                    "fp16}\n  constraints: {tiers: [NVIDIA], capacityType: OnDemand}");
  const auto placement = resumedPlacement("summarize");
  CHECK(placement["instanceType"] == "g6e.xlarge");
  CHECK(placement["resourceClaim"] == true);
  const auto job = c.mustGet(jobPath("summarize"));
  CHECK(job["metadata"]["generation"] == 2);  // created, then the one write
  const auto& podSpec = job["spec"]["template"]["spec"];
  CHECK_FALSE(podSpec.contains("resourceClaims"));
  const auto& resources = podSpec["containers"][0]["resources"];
  CHECK(resources["limits"]["deviceclass.resource.kubernetes.io/gpu.nvidia.com"] == "1");
  CHECK(resources["requests"]["deviceclass.resource.kubernetes.io/gpu.nvidia.com"] == "1");
  CHECK_FALSE(base::memberOf(resources, "limits").contains("nvidia.com/gpu"));
  // The scheduler made the pod's claim for the extended resource and
  // allocated it an L40S of the g6e.
  std::optional<json> pod;
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        pod = ranOn("summarize", "g6e.xlarge");
                        return pod.has_value();
                      },
                      std::chrono::seconds(60)),
                  f.op->log());
  const auto& claimed = base::memberOf((*pod)["status"], "extendedResourceClaimStatus");
  CHECK_MESSAGE(!base::stringMember(claimed, "resourceClaimName").empty(), pod->dump());
  CHECK(base::stringMember(base::memberOf(claimed, "requestMappings")[0], "resourceName") ==
        "deviceclass.resource.kubernetes.io/gpu.nvidia.com");
}

}  // namespace
}  // namespace gpuplacement
