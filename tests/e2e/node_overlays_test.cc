// One price for the operator and Karpenter, end to end on the simulated
// cluster: Karpenter (its kwok provider, with its NodeOverlay feature gate)
// launches the nodes; the operator reads no offering metrics here, so the
// catalog's prices with Karpenter's NodeOverlays are what it weighs.
// `scripts/controlplane node-prices` says what each launched node costs as
// Karpenter weighs it: its launch price with the overlays Karpenter
// accepted, applied by Karpenter's own code.
//
// - A team's NodeOverlay (a surcharge on T4 nodes) moves the placed
//   workload off them, and the claim is Karpenter's price for the node it
//   launches.
// - A PlacementPolicy's own price that Karpenter does not share is flagged
//   (PricesShared False, naming the offering and both prices) and the
//   launched node costs Karpenter more than the claim; shared
//   (priceSharing: NodeOverlay) the operator writes the overlay, Karpenter
//   accepts it, the condition turns True and the node's price as Karpenter
//   weighs it is the claim. Unshared again, the overlay goes.
// The cases run in order, each from where the one before left the cluster.
#include <algorithm>
#include <cmath>

#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/speech_workload.h"
#include "support/suite.h"

namespace gpuplacement {
namespace {

using testing::cluster;
using testing::conditionText;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/karpenter-launch.yaml";
  options.karpenter = true;  // at the catalog's prices
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "overlays";
const std::string kWorkload = "whisper";
const std::string kPolicyPath = "/apis/gpuplacement.io/v1alpha1/placementpolicies/default";
const std::string kOverlays = "/apis/karpenter.sh/v1alpha1/nodeoverlays";
const std::string kShared = "gpu-placement.default.g6e.xlarge.on-demand";

std::string placedType() {
  return testing::placedTypeOf(kNamespace, kWorkload);
}

double claimedNodePrice() {
  return testing::claimedNodePrice(kNamespace, kWorkload);
}

// Node name -> its price as Karpenter weighs it.
json nodePrices() {
  const auto result = testing::runCommand(
      testing::repoRoot() + "/scripts/controlplane node-prices " + ControlPlane::shared().dir());
  REQUIRE_MESSAGE(result.exitCode == 0, result.err);
  return json::parse(result.out, nullptr, false);
}

// Karpenter's price for the node its pods run on, once they run on `type`.
std::optional<double> weighedNodePrice(const std::string& type) {
  const auto nodes = testing::runningNodesOf(kNamespace, kWorkload);
  if (nodes.empty() || std::any_of(nodes.begin(), nodes.end(), [&](const json& node) {
        return testing::labelOf(node, "node.kubernetes.io/instance-type") != type;
      })) {
    return std::nullopt;
  }
  const auto name = base::stringMember(nodes.front()["metadata"], "name");
  const auto prices = nodePrices();
  if (!prices.contains(name)) {
    return std::nullopt;
  }
  return prices[name].get<double>();
}

bool validatedByKarpenter(const std::string& overlay) {
  const auto object = cluster().get(kOverlays + "/" + overlay);
  if (!object) {
    return false;
  }
  for (const auto& condition : base::memberOf(base::memberOf(*object, "status"), "conditions")) {
    if (base::stringMember(condition, "type") == "ValidationSucceeded") {
      return base::stringMember(condition, "status") == "True";
    }
  }
  return false;
}

std::string policyCondition(const std::string& type) {
  return conditionText(kPolicyPath, type);
}

struct Fixture {
  std::unique_ptr<OperatorProcess> op;

  Fixture() {
    cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kNamespace + "}\n");
    // Moves at once: no cooldown between re-placements.
    cluster().apply(
        "apiVersion: gpuplacement.io/v1alpha1\nkind: PlacementPolicy\nmetadata: {name: "
        "default}\nspec:\n  replacement: {cooldown: 0s}\n");
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

bool movedOff(const std::string& type) {
  const auto now = placedType();
  return !now.empty() && now != type;
}

TEST_CASE("a team's NodeOverlay prices the placement, as Karpenter weighs the node") {
  auto& f = fixture();
  auto& c = cluster();
  // Seed 001's speech model: a T4 holds it at the catalog's prices.
  testing::applySpeechWorkload(kNamespace, kWorkload);
  REQUIRE_MESSAGE(c.waitFor([] { return !placedType().empty(); }, std::chrono::seconds(60)),
                  f.op->log());
  const std::string first = placedType();
  const double firstClaim = claimedNodePrice();
  MESSAGE("placed on " << first << " at $" << firstClaim << "/h");
  REQUIRE_MESSAGE(
      c.waitFor([&] { return weighedNodePrice(first).has_value(); }, std::chrono::seconds(90)),
      "no Running pod on a launched " << first);
  CHECK(*weighedNodePrice(first) == doctest::Approx(firstClaim));

  // The team's surcharge on every T4 node, as Karpenter weighs them.
  c.apply(
      "apiVersion: karpenter.sh/v1alpha1\nkind: NodeOverlay\nmetadata: {name: t4-surcharge}\n"
      "spec:\n  weight: 10\n  priceAdjustment: \"+300%\"\n  requirements:\n  - {key: "
      "karpenter.k8s.aws/instance-gpu-name, operator: In, values: [t4]}\n");
  CHECK_MESSAGE(
      c.waitFor([] { return validatedByKarpenter("t4-surcharge"); }, std::chrono::seconds(60)),
      "Karpenter did not validate the NodeOverlay (its NodeOverlay feature gate?)");
  REQUIRE_MESSAGE(c.waitFor([&] { return movedOff(first); }, std::chrono::seconds(60)),
                  f.op->log());
  const std::string moved = placedType();
  MESSAGE("moved to " << moved << " at $" << claimedNodePrice() << "/h");
  CHECK(claimedNodePrice() < firstClaim * 4);
  CHECK(c.conditionMessageOf(workloadPath(kNamespace, kWorkload), "PricesForRegion")
            .find("with Karpenter's NodeOverlays") != std::string::npos);
  CHECK_MESSAGE(
      c.waitFor([&] { return weighedNodePrice(moved).has_value(); }, std::chrono::seconds(120)),
      "no Running pod on a launched " << moved);
  CHECK(*weighedNodePrice(moved) == doctest::Approx(claimedNodePrice()));
}

TEST_CASE("a policy's price: flagged while Karpenter weighs another, Karpenter's once shared") {
  auto& f = fixture();
  auto& c = cluster();
  // L40S at a negotiated rate, below every T4 and L4 price.
  REQUIRE(c.patch(kPolicyPath, json::parse(R"({"spec": {"prices": [{"instanceType": "g6e.xlarge",
                                                        "onDemand": "0.30"}]}})")));
  REQUIRE_MESSAGE(c.waitFor([] { return placedType() == "g6e.xlarge"; }, std::chrono::seconds(60)),
                  f.op->log());
  CHECK(claimedNodePrice() == doctest::Approx(0.30));
  CHECK(c.waitFor([] { return policyCondition("PricesShared") == "False/Disagree"; }));
  const auto disagree = c.conditionMessageOf(kPolicyPath, "PricesShared");
  MESSAGE(disagree);
  CHECK(disagree.find("g6e.xlarge on demand: $0.30/h here") != std::string::npos);
  CHECK(disagree.find("Set spec.priceSharing: NodeOverlay") != std::string::npos);
  // Karpenter launched the node and weighs it at its own price.
  REQUIRE_MESSAGE(c.waitFor([] { return weighedNodePrice("g6e.xlarge").has_value(); },
                            std::chrono::seconds(120)),
                  "no Running pod on a launched g6e.xlarge");
  CHECK(*weighedNodePrice("g6e.xlarge") > 1.0);

  // Shared: the operator writes the overlay, Karpenter accepts it.
  REQUIRE(c.patch(kPolicyPath, json::parse(R"({"spec": {"priceSharing": "NodeOverlay"}})")));
  REQUIRE_MESSAGE(c.waitFor([] { return validatedByKarpenter(kShared); }, std::chrono::seconds(60)),
                  f.op->log());
  const auto overlay = c.mustGet(kOverlays + "/" + kShared);
  CHECK(overlay["spec"]["price"] == "0.3");
  CHECK(overlay["metadata"]["labels"]["gpuplacement.io/prices-of"] == "default");
  CHECK(overlay["metadata"]["ownerReferences"][0]["kind"] == "PlacementPolicy");
  CHECK_MESSAGE(c.waitFor([] { return policyCondition("PricesShared") == "True/Agree"; }),
                c.conditionMessageOf(kPolicyPath, "PricesShared"));
  // The node the workload runs on now costs, as Karpenter weighs it, what
  // the operator claims.
  CHECK(*weighedNodePrice("g6e.xlarge") == doctest::Approx(claimedNodePrice()));
  CHECK(placedType() == "g6e.xlarge");

  // Unshared again: the overlay goes, and only the operator's.
  REQUIRE(c.patch(kPolicyPath, json::parse(R"({"spec": {"priceSharing": "None"}})")));
  CHECK(c.waitFor([] { return !cluster().get(kOverlays + "/" + kShared).ok(); }));
  CHECK(c.get(kOverlays + "/t4-surcharge").ok());
  CHECK(c.waitFor([] { return policyCondition("PricesShared") == "False/Disagree"; }));
}

}  // namespace
}  // namespace gpuplacement
