// Reserved capacity first, end to end on the simulated cluster (real
// scheduler and controller-manager, kwok nodes; config/sim/
// e2e-reserved.yaml): a g6.xlarge Karpenter launched into a Capacity Block
// beside on-demand T4 nodes.
//
// - A workload whose deadline is after the block ends (the EC2NodeClass's
//   status says when) passes it over, and says why.
// - The first workload goes onto the reserved node, though a T4 is the
//   cheaper list price: the reservation is paid for already. It claims
//   nothing more for the cluster, names the reservation, and its pod runs
//   there, selected by karpenter.sh/capacity-type=reserved.
// - The next finds the reservation full and goes on-demand, to a T4.
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
  options.pools = "config/sim/e2e-reserved.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "reserved";

// Seed 001's speech model: a T4 holds it, the cheapest at list prices.
void applyWorkload(const std::string& name, const std::string& deadline = "") {
  testing::applySpeechWorkload(kNamespace, name,
                               deadline.empty() ? "" : ", deadline: \"" + deadline + "\"");
}

json placementOf(const std::string& name) {
  return testing::placementOf(kNamespace, name);
}

// The labels of the node the workload's Running pod is on; null until
// there is one.
json runningNodeLabels(const std::string& name) {
  const auto nodes = testing::runningNodesOf(kNamespace, name);
  return nodes.empty() ? json() : base::memberOf(nodes.front()["metadata"], "labels");
}

struct Fixture {
  std::unique_ptr<OperatorProcess> op;

  Fixture() {
    cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kNamespace + "}\n");
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

TEST_CASE("a deadline after the Capacity Block ends passes it over, and says so") {
  auto& f = fixture();
  auto& c = cluster();
  applyWorkload("late", "2030-02-01T00:00:00Z");
  REQUIRE_MESSAGE(
      c.waitFor([] { return !base::stringMember(placementOf("late"), "capacityType").empty(); },
                std::chrono::seconds(60)),
      f.op->log());
  const auto placement = placementOf("late");
  CHECK(placement["capacityType"] == "OnDemand");
  CHECK(placement["instanceType"] == "g4dn.xlarge");
  const auto placed = c.conditionMessageOf(workloadPath(kNamespace, "late"), "Placed");
  CHECK_MESSAGE(
      placed.find("cr-0e2e0b10c4 (Capacity Block) ends 2030-01-15T11:30:00Z, and "
                  "spec.constraints.deadline is 2030-02-01T00:00:00Z") != std::string::npos,
      placed);
}

TEST_CASE("a reserved node first: paid for already, its room taken before any list price") {
  auto& f = fixture();
  auto& c = cluster();
  applyWorkload("first");
  REQUIRE_MESSAGE(
      c.waitFor([] { return !base::stringMember(placementOf("first"), "capacityType").empty(); },
                std::chrono::seconds(60)),
      f.op->log());
  const auto placement = placementOf("first");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "g6.xlarge");
  CHECK(placement["capacityType"] == "Reserved");
  CHECK(placement["hourlyCost"] == "0");
  CHECK(placement["reservation"] == "cr-0e2e0b10c4 (Capacity Block, ends 2030-01-15T11:30:00Z)");
  CHECK(base::stringMember(placement, "costNote").find("paid for whether used or not") !=
        std::string::npos);
  // Its pod runs on the reserved node, which the selector names.
  const auto deployment =
      c.mustGet("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/first");
  CHECK(deployment["spec"]["template"]["spec"]["nodeSelector"]["karpenter.sh/capacity-type"] ==
        "reserved");
  REQUIRE_MESSAGE(
      c.waitFor([] { return !runningNodeLabels("first").is_null(); }, std::chrono::seconds(60)),
      "no Running pod of first");
  const auto labels = runningNodeLabels("first");
  CHECK(labels["karpenter.sh/capacity-type"] == "reserved");
  CHECK(labels["karpenter.k8s.aws/capacity-reservation-id"] == "cr-0e2e0b10c4");
}

TEST_CASE("the reservation full, the next goes on-demand at its list price") {
  auto& f = fixture();
  auto& c = cluster();
  applyWorkload("second");
  REQUIRE_MESSAGE(
      c.waitFor([] { return !base::stringMember(placementOf("second"), "capacityType").empty(); },
                std::chrono::seconds(60)),
      f.op->log());
  const auto placement = placementOf("second");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "g4dn.xlarge");
  CHECK(placement["capacityType"] == "OnDemand");
  CHECK(placement["hourlyCost"] == "0.526");
  CHECK_FALSE(placement.contains("reservation"));
  REQUIRE_MESSAGE(
      c.waitFor([] { return !runningNodeLabels("second").is_null(); }, std::chrono::seconds(60)),
      "no Running pod of second");
  CHECK(runningNodeLabels("second")["karpenter.sh/capacity-type"] == "on-demand");
  // The first stays where it is.
  CHECK(placementOf("first")["capacityType"] == "Reserved");
}

}  // namespace
}  // namespace gpuplacement
