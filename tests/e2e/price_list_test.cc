// An imported price list end to end on the simulated cluster (real
// scheduler and controller-manager, kwok nodes of eu-central-1;
// config/sim/e2e-price-list.yaml): `gpu-placement prices import` writes
// the region's on-demand prices from the fixture offer file in AWS's exact
// format (tests/fixtures/price-list/), and the operator runs with
// --price-list on it.
//
// - The placement claims the price list's price for the type it chose,
//   and its pod runs there.
// - PricesForRegion says the prices are the cluster's region's and where
//   they come from (an imported price list of its date).
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
  options.pools = "config/sim/e2e-price-list.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "price-list";

TEST_CASE("a placement claims the imported price list's price, in the cluster's region") {
  auto& c = cluster();
  const std::string list = ControlPlane::shared().dir() + "/eu-central-1.yaml";
  const auto imported = testing::runCommand(
      testing::operatorBinary() + " prices import --offer-file " + testing::repoRoot() +
      "/tests/fixtures/price-list/ec2-offer-eu-central-1.json --region eu-central-1 --out " + list);
  REQUIRE_MESSAGE(imported.exitCode == 0, imported.err);
  // The file's prices, as the operator will read them: g5.xlarge 1.258,
  // g6.xlarge 1.019 (made-up SKUs in AWS's format).
  const auto prices = testing::readFile(list);
  REQUIRE(prices.find("onDemand: \"1.019\"") != std::string::npos);

  OperatorProcess op(c.operatorKubeconfig(), {"--price-list", list});
  REQUIRE_MESSAGE(op.waitReady(std::chrono::seconds(60)), op.log());
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kNamespace + "}\n");
  // Seed 001's speech model: an A10G or an L4 holds it; the cheaper in
  // this list is the L4.
  testing::applySpeechWorkload(kNamespace, "whisper");
  const auto path = workloadPath(kNamespace, "whisper");
  REQUIRE_MESSAGE(c.waitFor([] { return !testing::placedTypeOf(kNamespace, "whisper").empty(); },
                            std::chrono::seconds(60)),
                  op.log());
  const auto placement = testing::placementOf(kNamespace, "whisper");
  MESSAGE(placement.dump());
  CHECK(placement["instanceType"] == "g6.xlarge");
  CHECK(placement["nodeHourlyCost"] == "1.019");
  CHECK(conditionText(path, "PricesForRegion") == "True/ClusterRegion");
  const auto region = c.conditionMessageOf(path, "PricesForRegion");
  CHECK_MESSAGE(region.find("eu-central-1 on-demand prices of 2026-11-20 (an imported price "
                            "list)") != std::string::npos,
                region);
  CHECK(c.waitFor(
      [] {
        return conditionText(workloadPath(kNamespace, "whisper"), "Ready") ==
               "True/RolloutComplete";
      },
      std::chrono::seconds(60)));
  CHECK(op.stop() == 0);
}

}  // namespace
}  // namespace gpuplacement
