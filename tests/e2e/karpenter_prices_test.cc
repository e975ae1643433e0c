// Karpenter's prices end to end on the simulated cluster: Karpenter (its
// kwok provider) launches the nodes, and beside it the offering metrics its
// AWS provider publishes are served from its own instance-types file
// (scripts/controlplane: DIR/karpenter-prices.url), which the test rewrites
// to change a price or mark an offering unavailable, restarting Karpenter
// so that it launches by the file as it is. The operator reads those
// metrics every 10 s (--karpenter-metrics-url).
//
// - A placement claims what Karpenter pays: the status's node price is the
//   metric's price for the type, and the node Karpenter launched for the
//   pods is priced the same.
// - An offering marked unavailable in every zone is not chosen for a new
//   workload, which says why.
// - A price rise past the re-placement threshold moves the placed workload
//   to the next cheapest type, at Karpenter's price there.
// - The KarpenterPrices condition says the prices are current; when the
//   metrics cannot be read it turns False (Stale) and the prices stay.
// The cases run in order, each from where the one before left the cluster.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/speech_workload.h"
#include "support/suite.h"

namespace gpuplacement {
namespace {

using testing::claimedNodePrice;
using testing::cluster;
using testing::conditionText;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using testing::placedTypeOf;
using testing::readFile;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/karpenter-launch.yaml";
  options.karpenter = true;  // at the catalog's prices
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "prices";

std::string instanceTypesPath() {
  return ControlPlane::shared().dir() + "/karpenter-instance-types.json";
}

json instanceTypes() {
  return json::parse(readFile(instanceTypesPath()), nullptr, false);
}

std::string requirementOf(const json& offering, const std::string& key) {
  for (const auto& requirement : base::memberOf(offering, "Requirements")) {
    if (base::stringMember(requirement, "key") == key) {
      return requirement["values"][0].get<std::string>();
    }
  }
  return "";
}

// The cheapest available on-demand offering of `type` in the file: what
// Karpenter launches and what its metrics say it pays.
double onDemandPrice(const std::string& type) {
  double cheapest = 0;
  for (const auto& it : instanceTypes()) {
    if (base::stringMember(it, "name") != type) {
      continue;
    }
    for (const auto& offering : base::memberOf(it, "offerings")) {
      if (requirementOf(offering, "karpenter.sh/capacity-type") == "on-demand" &&
          offering.value("Available", false)) {
        const double price = offering.value("Price", 0.0);
        cheapest = cheapest == 0 ? price : std::min(cheapest, price);
      }
    }
  }
  return cheapest;
}

// Rewrites every on-demand offering of `type` (atomically: the metrics
// server never reads half a file), then starts Karpenter again on it.
void changeOnDemand(const std::string& type, const std::function<void(json&)>& change) {
  json types = instanceTypes();
  REQUIRE(types.is_array());
  bool found = false;
  for (auto& it : types) {
    if (base::stringMember(it, "name") != type) {
      continue;
    }
    for (auto& offering : it["offerings"]) {
      if (requirementOf(offering, "karpenter.sh/capacity-type") == "on-demand") {
        change(offering);
        found = true;
      }
    }
  }
  REQUIRE_MESSAGE(found, type << " has no on-demand offering in the instance-types file");
  const std::string staged = instanceTypesPath() + ".new";
  std::ofstream(staged) << types.dump();
  REQUIRE(std::rename(staged.c_str(), instanceTypesPath().c_str()) == 0);
  REQUIRE(ControlPlane::script("restart-karpenter " + ControlPlane::shared().dir()) == 0);
}

// Its pods run on a node of `type` that Karpenter launched at `price`.
bool runsOnLaunched(const std::string& name, const std::string& type, double price) {
  const auto nodes = testing::runningNodesOf(kNamespace, name);
  return !nodes.empty() && std::all_of(nodes.begin(), nodes.end(), [&](const json& node) {
    return testing::labelOf(node, "node.kubernetes.io/instance-type") == type &&
           std::abs(std::atof(testing::labelOf(node, "eks-node-viewer/instance-price").c_str()) -
                    price) < 1e-6;
  });
}

struct Fixture {
  std::unique_ptr<OperatorProcess> op;
  std::string cheapest;  // where the first workload was placed

  Fixture() {
    auto& plane = ControlPlane::shared();
    cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kNamespace + "}\n");
    // Moves at once: no cooldown between re-placements.
    cluster().apply(
        "apiVersion: gpuplacement.io/v1alpha1\nkind: PlacementPolicy\nmetadata: {name: "
        "default}\nspec:\n  replacement: {cooldown: 0s}\n");
    std::string url = readFile(plane.dir() + "/karpenter-prices.url");
    url.erase(url.find_last_not_of('\n') + 1);
    REQUIRE_MESSAGE(!url.empty(), "scripts/controlplane wrote no karpenter-prices.url");
    op = std::make_unique<OperatorProcess>(
        cluster().operatorKubeconfig(),
        std::vector<std::string>{"--karpenter-metrics-url", url, "--karpenter-prices-interval",
                                 "10s"});
    REQUIRE_MESSAGE(op->waitReady(std::chrono::seconds(60)), op->log());
  }
  ~Fixture() {
    if (op) {
      op->stop();
    }
  }

  // Waits for two more good reads of the metrics than there have been: one
  // begun after the caller's change.
  bool readAgain() {
    const double reads = op->metric("gpu_placement_karpenter_price_reads_total", "ok");
    return cluster().waitFor(
        [&] { return op->metric("gpu_placement_karpenter_price_reads_total", "ok") >= reads + 2; },
        std::chrono::seconds(40), std::chrono::seconds(1));
  }
};

Fixture& fixture() {
  static Fixture instance;
  return instance;
}

bool placed(const std::string& name) {
  return !placedTypeOf(kNamespace, name).empty();
}

const std::string kFirst = "whisper";

TEST_CASE("a placement claims what Karpenter pays") {
  auto& f = fixture();
  auto& c = cluster();
  testing::applySpeechWorkload(kNamespace, kFirst);
  const auto path = workloadPath(kNamespace, kFirst);
  REQUIRE_MESSAGE(c.waitFor([&] { return placed(kFirst); }, std::chrono::seconds(60)), f.op->log());
  f.cheapest = placedTypeOf(kNamespace, kFirst);
  MESSAGE("placed on " << f.cheapest << " at $" << claimedNodePrice(kNamespace, kFirst) << "/h");
  CHECK(conditionText(path, "KarpenterPrices") == "True/Current");
  CHECK(c.conditionMessageOf(path, "PricesForRegion").find("prices Karpenter pays") !=
        std::string::npos);
  // The claim is Karpenter's price for the type, and the node it launched
  // for the pods is priced the same.
  CHECK(claimedNodePrice(kNamespace, kFirst) == doctest::Approx(onDemandPrice(f.cheapest)));
  CHECK_MESSAGE(
      c.waitFor([&] { return runsOnLaunched(kFirst, f.cheapest, onDemandPrice(f.cheapest)); },
                std::chrono::seconds(90)),
      "no Running pod of " << kFirst << " on a launched " << f.cheapest);
}

TEST_CASE("an offering Karpenter marks unavailable is not chosen while it is") {
  auto& f = fixture();
  auto& c = cluster();
  REQUIRE(!f.cheapest.empty());
  changeOnDemand(f.cheapest, [](json& offering) { offering["Available"] = false; });
  REQUIRE(f.readAgain());
  // A new workload of the same intent goes elsewhere, and says why.
  const std::string second = "whisper-two";
  testing::applySpeechWorkload(kNamespace, second);
  REQUIRE(c.waitFor([&] { return placed(second); }, std::chrono::seconds(60)));
  const std::string other = placedTypeOf(kNamespace, second);
  MESSAGE("with " << f.cheapest << " unavailable, " << second << " is placed on " << other);
  CHECK(other != f.cheapest);
  CHECK(claimedNodePrice(kNamespace, second) == doctest::Approx(onDemandPrice(other)));
  const auto status = c.mustGet(workloadPath(kNamespace, second))["status"].dump();
  CHECK_MESSAGE(status.find("Karpenter marks its offerings unavailable") != std::string::npos,
                status);
  // The first stays: its node is there.
  CHECK(placedTypeOf(kNamespace, kFirst) == f.cheapest);
  // The second goes before the offering comes back: it would move back to
  // it, and a move holds the policy's one rollout slot until its pods run
  // on a node Karpenter launches, so the next case's move would queue
  // behind it (and behind its own move on the price rise).
  REQUIRE(c.remove(workloadPath(kNamespace, second)).ok());
  REQUIRE(c.remove("/apis/apps/v1/namespaces/" + kNamespace + "/deployments/" + second).ok());
  changeOnDemand(f.cheapest, [](json& offering) { offering["Available"] = true; });
  REQUIRE(f.readAgain());
}

TEST_CASE("a price rise in Karpenter moves the workload, at Karpenter's price there") {
  auto& f = fixture();
  auto& c = cluster();
  REQUIRE(!f.cheapest.empty());
  const double before = onDemandPrice(f.cheapest);
  changeOnDemand(f.cheapest,
                 [](json& offering) { offering["Price"] = offering.value("Price", 0.0) * 4; });
  REQUIRE(onDemandPrice(f.cheapest) == doctest::Approx(before * 4));
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        const auto type = placedTypeOf(kNamespace, kFirst);
                        return !type.empty() && type != f.cheapest;
                      },
                      std::chrono::seconds(60)),
                  c.mustGet(workloadPath(kNamespace, kFirst))["status"].dump()
                      << "\n"
                      << f.op->log());
  const std::string moved = placedTypeOf(kNamespace, kFirst);
  MESSAGE("moved to " << moved << " at $" << claimedNodePrice(kNamespace, kFirst) << "/h");
  CHECK(claimedNodePrice(kNamespace, kFirst) == doctest::Approx(onDemandPrice(moved)));
  CHECK(claimedNodePrice(kNamespace, kFirst) < before * 4);
  CHECK_MESSAGE(c.waitFor([&] { return runsOnLaunched(kFirst, moved, onDemandPrice(moved)); },
                          std::chrono::seconds(120)),
                "no Running pod of " << kFirst << " on a launched " << moved);
}

TEST_CASE("prices that cannot be read stay in force, and the status says how old they are") {
  auto& f = fixture();
  auto& c = cluster();
  const auto path = workloadPath(kNamespace, kFirst);
  REQUIRE(conditionText(path, "KarpenterPrices") == "True/Current");
  const double claimed = claimedNodePrice(kNamespace, kFirst);
  // The metrics stop answering, as when Karpenter's pod is gone.
  const auto killed =
      testing::runCommand("kill $(cat " + ControlPlane::shared().dir() + "/karpenter-prices.pid)");
  REQUIRE_MESSAGE(killed.exitCode == 0, killed.err);
  // Stale once reads have failed for longer than the interval (10 s).
  CHECK_MESSAGE(c.waitFor([&] { return conditionText(path, "KarpenterPrices") == "False/Stale"; },
                          std::chrono::seconds(60)),
                c.conditionMessageOf(path, "KarpenterPrices") << "\n"
                                                              << f.op->log());
  const auto stale = c.conditionMessageOf(path, "KarpenterPrices");
  CHECK(stale.find("could not be read") != std::string::npos);
  CHECK(claimedNodePrice(kNamespace, kFirst) == doctest::Approx(claimed));
  // The prices kept are named by when they were last read.
  CHECK_MESSAGE(stale.find("its prices as last read at 20") != std::string::npos, stale);
}

}  // namespace
}  // namespace gpuplacement
