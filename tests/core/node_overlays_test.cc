// Karpenter's NodeOverlays as the operator applies them: read from the
// API, a price or an adjustment, the heaviest overlay first, conflicts
// refused whole, and the labels the operator cannot see left alone.
#include "core/cluster/node_overlays.h"

#include <doctest/doctest.h>

#include "support/engine_fixture.h"

namespace gpuplacement::core::node_overlays_tests {
namespace {

NodeOverlay overlay(const char* name, std::vector<NodeSelectorRequirement> requirements,
                    const char* price, const char* adjustment, int weight = 0) {
  return NodeOverlay{name, std::move(requirements), price, adjustment, weight, "", true, ""};
}

NodeSelectorRequirement in(const char* key, std::vector<std::string> values) {
  return {key, "In", std::move(values)};
}

constexpr const char* kType = "node.kubernetes.io/instance-type";
constexpr const char* kCapacity = "karpenter.sh/capacity-type";

}  // namespace

TEST_CASE("a NodeOverlay read from the API") {
  const auto object = nlohmann::json::parse(R"({
    "apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay",
    "metadata": {"name": "l40s-discount"},
    "spec": {"weight": 50, "priceAdjustment": "-20%",
             "requirements": [{"key": "karpenter.k8s.aws/instance-gpu-name", "operator": "In",
                               "values": ["l40s"]}]},
    "status": {"conditions": [{"type": "ValidationSucceeded", "status": "True"}]}})");
  const auto read = nodeOverlayFromJson(object);
  CHECK(read.name == "l40s-discount");
  CHECK(read.weight == 50);
  CHECK(read.priceAdjustment == "-20%");
  CHECK(read.price.empty());
  CHECK(read.refused.empty());
  CHECK(read.validated);
  CHECK(read.pricesOf.empty());
  REQUIRE(read.requirements.size() == 1);
  CHECK(read.requirements[0].values == std::vector<std::string>{"l40s"});

  struct Row {
    const char* spec;
    const char* status;
    const char* refused;
  };
  const Row rows[] = {
      {R"({"price": "1.5"})", "True", ""},
      {R"({"price": "1.5"})", "False", "Conflict: conflict with another overlay"},
      {R"({"price": "cheap"})", "True", "price cheap is not a decimal"},
      {R"({"priceAdjustment": "10%"})", "True",
       "priceAdjustment 10% is neither a signed amount nor a signed percentage"},
      {R"({"price": "1", "priceAdjustment": "+1"})", "True",
       "it sets both price and priceAdjustment"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.spec);
    auto json = nlohmann::json::parse(R"({"metadata": {"name": "x"}})");
    json["spec"] = nlohmann::json::parse(row.spec);
    json["status"]["conditions"] = {{{"type", "ValidationSucceeded"},
                                     {"status", row.status},
                                     {"reason", "Conflict"},
                                     {"message", "conflict with another overlay"}}};
    CHECK(nodeOverlayFromJson(json).refused == row.refused);
  }
}

TEST_CASE("a price or an adjustment, as Karpenter's AdjustedPrice") {
  struct Row {
    const char* price;
    const char* adjustment;
    double adjusted;
  };
  const Row rows[] = {
      {"0.45", "", 0.45}, {"", "+10%", 1.1},   {"", "-15%", 0.85}, {"", "-100%", 0},
      {"", "+0.5", 1.5},  {"", "-0.25", 0.75}, {"", "-2", 0},  // never below zero
  };
  for (const auto& row : rows) {
    CAPTURE(row.price);
    CAPTURE(row.adjustment);
    CHECK(adjustedPrice(1.0, overlay("x", {}, row.price, row.adjustment)) ==
          doctest::Approx(row.adjusted));
  }
}

TEST_CASE("the catalog's prices with the overlays: weight, conflicts, labels unseen") {
  const auto& shipped = *testing::shippedCatalog();
  const double g6e = *shipped.find("g6e.xlarge")->onDemand;
  const double g6eSpot = *shipped.find("g6e.xlarge")->spot;
  const double g5 = *shipped.find("g5.xlarge")->onDemand;
  struct Row {
    const char* what;
    std::vector<NodeOverlay> overlays;
    double g6eOnDemand;
    double g6eSpot;
    double g5OnDemand;
    int priced;
    std::vector<std::string> notApplied;
  };
  const Row rows[] = {
      {"a price for one type on demand",
       {overlay("shared", {in(kType, {"g6e.xlarge"}), in(kCapacity, {"on-demand"})}, "0.45", "")},
       0.45,
       g6eSpot,
       g5,
       1,
       {}},
      {"a discount on every L40S, both capacity types",
       {overlay("l40s", {in("karpenter.k8s.aws/instance-gpu-name", {"l40s"})}, "", "-20%")},
       g6e * 0.8,
       g6eSpot * 0.8,
       g5,
       -1,  // every L40S type: not counted here
       {}},
      {"the heavier overlay wins where both select",
       {overlay("light", {in(kType, {"g6e.xlarge", "g5.xlarge"})}, "1", "", 10),
        overlay("heavy", {in(kType, {"g6e.xlarge"}), in(kCapacity, {"on-demand"})}, "0.45", "",
                20)},
       0.45,
       1,
       1,
       4,  // heavy: g6e on demand; light: g6e spot, g5 both
       {}},
      {"equal weights selecting one offering: Karpenter takes the later name, refuses the other",
       {overlay("a-first", {in(kType, {"g6e.xlarge"})}, "0.5", "", 10),
        overlay("b-second", {in(kType, {"g6e.xlarge", "g5.xlarge"})}, "0.6", "", 10)},
       0.6,
       0.6,
       0.6,
       4,
       {"a-first: it prices g6e.xlarge as b-second does, at the same weight 10 (Karpenter "
        "refuses it too)"}},
      {"a NodePool's name or its own labels: not applied, and said",
       {overlay("pool", {in("karpenter.sh/nodepool", {"gpu"})}, "", "-10%"),
        overlay("team", {in("team", {"ml"})}, "", "-10%")},
       g6e,
       g6eSpot,
       g5,
       0,
       {"team: it selects on team, which the operator cannot see per offering (a NodePool's name "
        "or its own labels)",
        "pool: it selects on karpenter.sh/nodepool, which the operator cannot see per offering (a "
        "NodePool's name or its own labels)"}},
      {"a zone where the prices name none; a label no offering has, NotIn",
       {overlay("zone", {in("topology.kubernetes.io/zone", {"us-east-1a"})}, "0.1", ""),
        overlay("not-team", {{"team", "NotIn", {"ml"}}, in(kType, {"g5.xlarge"})}, "0.9", "")},
       g6e,
       g6eSpot,
       0.9,
       2,  // g5.xlarge on demand and spot
       {"zone: it selects zones, and these prices name none"}},
      {"not yet accepted by Karpenter (or its feature gate is off)",
       {NodeOverlay{"new", {in(kType, {"g6e.xlarge"})}, "0.1", "", 0, "", false, ""}},
       g6e,
       g6eSpot,
       g5,
       0,
       {"new: Karpenter has not accepted it (yet; is its NodeOverlay feature gate on?)"}},
      {"refused by Karpenter",
       {NodeOverlay{
           "bad", {in(kType, {"g6e.xlarge"})}, "0.1", "", 0, "Conflict: with another", false, ""}},
       g6e,
       g6eSpot,
       g5,
       0,
       {"bad: Karpenter refused it (Conflict: with another)"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    NodeOverlaysApplied applied;
    const auto priced = withNodeOverlays(shipped, row.overlays, &applied);
    CHECK(*priced.find("g6e.xlarge")->onDemand == doctest::Approx(row.g6eOnDemand));
    CHECK(*priced.find("g6e.xlarge")->spot == doctest::Approx(row.g6eSpot));
    CHECK(*priced.find("g5.xlarge")->onDemand == doctest::Approx(row.g5OnDemand));
    if (row.priced >= 0) {
      CHECK(applied.offeringsPriced == row.priced);
    }
    CHECK(applied.notApplied == row.notApplied);
  }
}

TEST_CASE("Karpenter's offerings with the overlays, per zone, then the cheapest zone") {
  const auto& shipped = *testing::shippedCatalog();
  OfferingPrices offerings;
  offerings.offerings = {
      {"g6e.xlarge", CapacityType::OnDemand, "eu-central-1a", 2.3, true},
      {"g6e.xlarge", CapacityType::OnDemand, "eu-central-1b", 2.3, true},
  };
  const std::vector<NodeOverlay> overlays = {
      overlay("zone-b", {in("topology.kubernetes.io/zone", {"eu-central-1b"})}, "", "-50%")};
  const auto priced = pricedAsKarpenter(shipped, &offerings, "2026-12-01T19:00:00Z", overlays);
  CHECK(*priced.find("g6e.xlarge")->onDemand == doctest::Approx(1.15));
  CHECK(priced.pricesFrom == PricesFrom::Karpenter);
  CHECK(priced.nodeOverlays.offeringsPriced == 1);
  CHECK(pricesText(priced) ==
        "eu-central-1 prices Karpenter pays (its offering prices, read live), with Karpenter's "
        "NodeOverlays");

  // Without Karpenter's prices: the catalog's, overlaid.
  const auto catalogOnly = pricedAsKarpenter(shipped, nullptr, "", overlays);
  CHECK(catalogOnly.pricesFrom == PricesFrom::Catalog);
  CHECK(catalogOnly.nodeOverlays.notApplied ==
        std::vector<std::string>{"zone-b: it selects zones, and these prices name none"});
  CHECK(pricesText(catalogOnly) == pricesText(shipped));
}

}  // namespace gpuplacement::core::node_overlays_tests
