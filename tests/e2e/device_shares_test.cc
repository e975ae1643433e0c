// Shares of GPUs end to end on the simulated cluster (real scheduler and
// controller-manager, kwok nodes; config/sim/e2e-device-shares.yaml): a
// p4d.24xlarge cut into 56 1g.5gb MIG instances, a g6.xlarge whose L4 is
// time-sliced four ways, and T4 nodes.
//
// - Another team's pod holds one slice, so the node stays up whatever this
//   workload does. Seed 001's speech model (3.5 GiB) takes one of the idle
//   slices: 1/56 of the node's price, nothing more for the cluster, where a
//   T4 would be a new $0.526/h. The Deployment requests
//   nvidia.com/mig-1g.5gb, and its pod runs on the p4d.
// - With the GpuWorkload deleted, the operator takes back the slice it
//   wrote, and only that.
// - Another team holds three of the L4's four replicas. A 3B model that
//   allows sharing without isolation needs two replicas' share of the
//   memory (6.7 GiB of 22.5): it would not fit beside them, and goes to a
//   whole T4. A 1.55B model needs one: it takes the last, requests
//   nvidia.com/gpu.shared, and runs there.
#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/operator_fixture.h"
#include "support/speech_workload.h"
#include "support/suite.h"

namespace gpuplacement {
namespace {

using testing::cluster;
using testing::ControlPlane;
using testing::json;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/e2e-device-shares.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "shares";

json placementOf(const std::string& name) {
  return testing::placementOf(kNamespace, name);
}

json deploymentOf(const std::string& name) {
  return cluster().mustGet("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/" + name);
}

// Another team's service, placed by hand on `type` with `resources`.
void applyResident(const std::string& name, const std::string& type, const std::string& resources) {
  cluster().apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
                  ", namespace: " + kNamespace +
                  "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: " + name +
                  "}}\n  template:\n    metadata: {labels: {app: " + name +
                  "}}\n    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: " + type +
                  "}\n      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: "
                  "NoSchedule}]\n      containers:\n      - name: server\n        image: "
                  "server:1\n        resources: {limits: {" +
                  resources + "}}\n");
}

// A Deployment and its GpuWorkload: online serving, cost first, NVIDIA on
// demand, allowing sharing without isolation (spec.constraints.sharing Any).
void applyUnisolated(const std::string& name, const std::string& parameters) {
  cluster().apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
                  ", namespace: " + kNamespace +
                  "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: " + name +
                  "}}\n  template:\n    metadata: {labels: {app: " + name +
                  "}}\n    spec:\n      containers: [{name: server, image: server:1}]\n");
  cluster().apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " + name +
      ", namespace: " + kNamespace + "}\nspec:\n  targetRef: {kind: Deployment, name: " + name +
      "}\n  workload: {kind: Inference}\n  model: {parameters: " + parameters +
      ", precision: fp16, architecture: Transformer}\n  objective: CostOptimized\n  "
      "constraints: {tiers: [NVIDIA], capacityType: OnDemand, sharing: Any}\n");
}

bool runs(const std::string& name) {
  return !testing::runningNodesOf(kNamespace, name).empty();
}

testing::OperatorInNamespace& fixture() {
  static testing::OperatorInNamespace instance(kNamespace, [] {
    applyResident("resident", "p4d.24xlarge", "nvidia.com/mig-1g.5gb: 1");
    applyResident("tenants", "g6.xlarge", "nvidia.com/gpu.shared: 3");
    REQUIRE_MESSAGE(cluster().waitFor([] { return runs("resident") && runs("tenants"); },
                                      std::chrono::seconds(60)),
                    "the residents never ran on their shares");
  });
  return instance;
}

TEST_CASE("a small model takes an idle MIG slice of a node others keep up, and runs there") {
  auto& f = fixture();
  auto& c = cluster();
  testing::applySpeechWorkload(kNamespace, "speech");
  const bool sliced =
      c.waitFor([] { return !base::stringMember(placementOf("speech"), "migProfile").empty(); },
                std::chrono::seconds(60));
  const std::string why = f.op->log() + "\nplacement: " + placementOf("speech").dump();
  REQUIRE_MESSAGE(sliced, why);
  const auto placement = placementOf("speech");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "p4d.24xlarge");
  CHECK(placement["migProfile"] == "1g.5gb");
  CHECK(placement["acceleratorCount"] == 1);
  CHECK(placement["hourlyCost"] == "0.3921");            // 21.957642 / 56
  CHECK(placement["wholeDeviceHourlyCost"] == "0.526");  // a T4, g4dn.xlarge
  CHECK(placement["availableMemoryGiB"] == "5");
  CHECK(placement["costNote"] ==
        "1 idle MIG 1g.5gb slice on an existing p4d.24xlarge at $21.96/h: 1 of 56 MIG 1g.5gb "
        "slices of 8 A100-40GB, charged its share (1/56), nothing more for the cluster");
  const auto placed = c.conditionMessageOf(workloadPath(kNamespace, "speech"), "Placed");
  CHECK_MESSAGE(
      placed.find("isolated from the other slices' memory and faults") != std::string::npos,
      placed);

  // The Deployment asks for one 1g.5gb instance and no whole GPU.
  const auto container = deploymentOf("speech")["spec"]["template"]["spec"]["containers"][0];
  CHECK(container["resources"]["limits"]["nvidia.com/mig-1g.5gb"] == "1");
  CHECK(container["resources"]["requests"]["nvidia.com/mig-1g.5gb"] == "1");
  CHECK_FALSE(container["resources"]["limits"].contains("nvidia.com/gpu"));

  // Its pod runs on the p4d, beside the resident.
  REQUIRE_MESSAGE(c.waitFor([] { return !testing::runningNodesOf(kNamespace, "speech").empty(); },
                            std::chrono::seconds(60)),
                  "no Running pod of speech");
  const auto node = testing::runningNodesOf(kNamespace, "speech").front();
  CHECK(testing::labelOf(node, "node.kubernetes.io/instance-type") == "p4d.24xlarge");
  CHECK(testing::labelOf(node, "nvidia.com/mig.strategy") == "mixed");
  CHECK(node["status"]["allocatable"]["nvidia.com/mig-1g.5gb"] == "56");
}

TEST_CASE("deleting the workload takes back the slice it wrote, and only that") {
  auto& f = fixture();
  auto& c = cluster();
  REQUIRE(c.remove(workloadPath(kNamespace, "speech")).ok());
  REQUIRE_MESSAGE(
      c.waitFor(
          [] {
            const auto limits = base::memberOf(
                base::memberOf(deploymentOf("speech")["spec"]["template"]["spec"]["containers"][0],
                               "resources"),
                "limits");
            return !limits.contains("nvidia.com/mig-1g.5gb");
          },
          std::chrono::seconds(60)),
      f.op->log());
  // The resident's own slice is not the operator's to touch.
  CHECK(deploymentOf("resident")["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
                                ["nvidia.com/mig-1g.5gb"] == "1");
}

TEST_CASE("time-sliced: refused where the co-tenants would not fit, taken where they do") {
  auto& f = fixture();
  auto& c = cluster();
  // 3B at fp16, 6.7 GiB: two of the four replicas' share, one is free.
  applyUnisolated("wide", "3B");
  REQUIRE_MESSAGE(c.waitFor([] { return !testing::placedTypeOf(kNamespace, "wide").empty(); },
                            std::chrono::seconds(60)),
                  f.op->log());
  const auto wide = placementOf("wide");
  MESSAGE(wide.dump());
  CHECK(wide["instanceType"] == "g4dn.xlarge");
  CHECK_FALSE(wide.contains("timeSlices"));

  // 1.55B at fp16, 3.5 GiB: one replica's share, the one free.
  applyUnisolated("narrow", "1.55B");
  REQUIRE_MESSAGE(c.waitFor([] { return !testing::placedTypeOf(kNamespace, "narrow").empty(); },
                            std::chrono::seconds(60)),
                  f.op->log());
  const auto narrow = placementOf("narrow");
  MESSAGE(narrow.dump());
  CHECK(narrow["instanceType"] == "g6.xlarge");
  CHECK(narrow["timeSlices"] == 4);
  CHECK(narrow["acceleratorCount"] == 1);
  const auto placed = c.conditionMessageOf(workloadPath(kNamespace, "narrow"), "Placed");
  CHECK_MESSAGE(placed.find("time-slicing isolates neither memory nor faults") != std::string::npos,
                placed);
  const auto container = deploymentOf("narrow")["spec"]["template"]["spec"]["containers"][0];
  CHECK(container["resources"]["limits"]["nvidia.com/gpu.shared"] == "1");
  REQUIRE_MESSAGE(c.waitFor([] { return runs("narrow"); }, std::chrono::seconds(60)),
                  "no Running pod of narrow");
  const auto node = testing::runningNodesOf(kNamespace, "narrow").front();
  CHECK(testing::labelOf(node, "nvidia.com/gpu.sharing-strategy") == "time-slicing");
  CHECK(node["status"]["allocatable"]["nvidia.com/gpu.shared"] == "4");
}

}  // namespace
}  // namespace gpuplacement
