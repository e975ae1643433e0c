// MIG slices end to end on the simulated cluster (real scheduler and
// controller-manager, kwok nodes; config/sim/e2e-mig.yaml): a p4d.24xlarge
// cut into 56 1g.5gb instances beside T4 nodes.
//
// - Another team's pod holds one slice, so the node stays up whatever this
//   workload does. Seed 001's speech model (3.5 GiB) takes one of the idle
//   slices: 1/56 of the node's price, nothing more for the cluster, where a
//   T4 would be a new $0.526/h. The Deployment requests
//   nvidia.com/mig-1g.5gb, and its pod runs on the p4d.
// - With the GpuWorkload deleted, the operator takes back the slice it
//   wrote, and only that.
#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/speech_workload.h"
#include "support/suite.h"

namespace gpuplacement {
namespace {

using testing::cluster;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/e2e-mig.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "mig";

json placementOf(const std::string& name) {
  return testing::placementOf(kNamespace, name);
}

json deploymentOf(const std::string& name) {
  return cluster().mustGet("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/" + name);
}

// Another team's service on one slice of the p4d, placed by hand.
void applyResident() {
  cluster().apply(
      "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: resident, namespace: " + kNamespace +
      "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: resident}}\n  template:\n"
      "    metadata: {labels: {app: resident}}\n    spec:\n"
      "      nodeSelector: {node.kubernetes.io/instance-type: p4d.24xlarge}\n"
      "      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n"
      "      containers:\n      - name: embedder\n        image: embedder:1\n"
      "        resources: {limits: {nvidia.com/mig-1g.5gb: 1}}\n");
}

struct Fixture {
  std::unique_ptr<OperatorProcess> op;

  Fixture() {
    cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kNamespace + "}\n");
    applyResident();
    REQUIRE_MESSAGE(
        cluster().waitFor([] { return !testing::runningNodesOf(kNamespace, "resident").empty(); },
                          std::chrono::seconds(60)),
        "the resident pod never ran on its slice");
    op = std::make_unique<OperatorProcess>(cluster().operatorKubeconfig());
    REQUIRE_MESSAGE(op->waitReady(std::chrono::seconds(60)), op->log());
  }
  ~Fixture() {
    if (op) {
      op->stop();
    }
  }
};

Fixture& fixture() {
  static Fixture instance;
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

}  // namespace
}  // namespace gpuplacement
