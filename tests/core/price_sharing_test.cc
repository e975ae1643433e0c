// One price for the operator and Karpenter: the NodeOverlays that share a
// policy's prices (written, edited, removed, never someone else's), and the
// PricesShared condition that says where Karpenter's prices differ.
#include "core/plan/price_sharing.h"

#include <doctest/doctest.h>

#include "base/decimal.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::price_sharing_tests {
namespace {

Policy pricing(
    std::vector<std::tuple<const char*, std::optional<double>, std::optional<double>>> prices,
    PriceSharing sharing) {
  Policy policy;
  for (const auto& [type, onDemand, spot] : prices) {
    policy.prices[type] = PriceOverride{onDemand, spot};
  }
  policy.priceSharing = sharing;
  return policy;
}

}  // namespace

TEST_CASE("the NodeOverlay that shares one price") {
  const SharedPrice price{"g6e.xlarge", CapacityType::OnDemand, 0.45};
  const auto object = sharedOverlayObject("default", "uid-1", price);
  CHECK(object["metadata"]["name"] == "gpu-placement.default.g6e.xlarge.on-demand");
  CHECK(object["metadata"]["labels"]["gpuplacement.io/prices-of"] == "default");
  CHECK(object["metadata"]["ownerReferences"][0]["uid"] == "uid-1");
  CHECK(object["metadata"]["ownerReferences"][0]["kind"] == "PlacementPolicy");
  CHECK(object["spec"]["price"] == "0.45");
  CHECK(object["spec"]["weight"] == kSharedPriceWeight);
  CHECK(object["spec"]["requirements"][1]["values"][0] == "on-demand");
  // Read back as the API serves it, it is the overlay the operator wants.
  CHECK(nodeOverlayFromJson(object) == sharedOverlay("default", price));
}

TEST_CASE("what the operator writes so that the cluster shares what the policy prices") {
  const auto policy = pricing({{"g6e.xlarge", 0.45, std::nullopt}, {"inf2.xlarge", 0.9, 0.3}},
                              PriceSharing::NodeOverlay);
  const auto g6e = sharedOverlay("default", {"g6e.xlarge", CapacityType::OnDemand, 0.45});
  const auto infOnDemand = sharedOverlay("default", {"inf2.xlarge", CapacityType::OnDemand, 0.9});
  const auto infSpot = sharedOverlay("default", {"inf2.xlarge", CapacityType::Spot, 0.3});
  auto stalePrice = infSpot;
  stalePrice.price = "0.25";
  auto stale = sharedOverlay("default", {"g5.xlarge", CapacityType::OnDemand, 0.8});
  auto someoneElses = g6e;
  someoneElses.pricesOf = "";
  const auto otherPolicys = sharedOverlay("team", {"g5.xlarge", CapacityType::OnDemand, 0.8});
  const Policy notSharing = pricing({{"g6e.xlarge", 0.45, std::nullopt}}, PriceSharing::None);

  struct Row {
    const char* what;
    const Policy* policy;
    std::vector<NodeOverlay> cluster;
    std::vector<std::string> create;
    std::vector<std::string> update;
    std::vector<std::string> remove;
    std::vector<std::string> taken;
  };
  const Row rows[] = {
      {"none yet",
       &policy,
       {},
       {"gpu-placement.default.g6e.xlarge.on-demand", "gpu-placement.default.inf2.xlarge.on-demand",
        "gpu-placement.default.inf2.xlarge.spot"},
       {},
       {},
       {}},
      {"all there: nothing", &policy, {g6e, infOnDemand, infSpot, otherPolicys}, {}, {}, {}, {}},
      {"a price moved, a type no longer priced",
       &policy,
       {g6e, infOnDemand, stalePrice, stale},
       {},
       {"gpu-placement.default.inf2.xlarge.spot"},
       {"gpu-placement.default.g5.xlarge.on-demand"},
       {}},
      {"the name is someone else's overlay: left alone, and said",
       &policy,
       {someoneElses, infOnDemand, infSpot},
       {},
       {},
       {},
       {"gpu-placement.default.g6e.xlarge.on-demand"}},
      {"sharing turned off: the operator's go, another policy's stay",
       &notSharing,
       {g6e, otherPolicys},
       {},
       {},
       {"gpu-placement.default.g6e.xlarge.on-demand"},
       {}},
      {"the policy deleted",
       nullptr,
       {g6e, infSpot, someoneElses},
       {},
       {},
       {g6e.name, infSpot.name},
       {}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto writes = overlayWrites("default", "uid-1", row.policy, row.cluster);
    std::vector<std::string> created;
    for (const auto& object : writes.create) {
      created.push_back(object["metadata"]["name"]);
    }
    std::vector<std::string> updated;
    for (const auto& [name, spec] : writes.update) {
      updated.push_back(name);
      CHECK(spec["priceAdjustment"].is_null());
    }
    CHECK(created == row.create);
    CHECK(updated == row.update);
    CHECK(writes.remove == row.remove);
    CHECK(writes.taken == row.taken);
  }
}

TEST_CASE("PricesShared: whether Karpenter weighs the policy's prices") {
  const auto& shipped = *testing::shippedCatalog();
  const double g6e = *shipped.find("g6e.xlarge")->onDemand;
  const auto policy = pricing({{"g6e.xlarge", 0.45, std::nullopt}}, PriceSharing::None);
  const auto sharing = pricing({{"g6e.xlarge", 0.45, std::nullopt}}, PriceSharing::NodeOverlay);
  const auto shared = sharedOverlay("default", {"g6e.xlarge", CapacityType::OnDemand, 0.45});
  auto accepted = shared;  // as Karpenter validated it
  accepted.validated = true;
  const auto agreed = withNodeOverlays(shipped, {accepted});
  auto refused = shared;
  refused.refused = "Conflict: conflict with another overlay";
  const Policy none;
  const std::string basis = " (" + pricesText(shipped) + ")";
  const std::string gap = "g6e.xlarge on demand: $0.45/h here, " + base::formatMoney(g6e) +
                          "/h Karpenter's (" + base::formatMoney(g6e - 0.45) + "/h less here)";

  struct Row {
    const char* what;
    const Policy* policy;
    const Catalog* karpenter;
    bool served;
    std::vector<NodeOverlay> shared;
    std::vector<std::string> taken;
    const char* status;
    const char* reason;
    std::string message;
    bool installed = true;  // Karpenter's NodePools are served
  };
  const Row rows[] = {
      {"no prices of its own",
       &none,
       &shipped,
       true,
       {},
       {},
       "True",
       "NoOwnPrices",
       "this policy sets no prices of its own: it weighs offerings as Karpenter does"},
      {"no Karpenter in the cluster",
       &policy,
       &shipped,
       false,
       {},
       {},
       "True",
       "NoKarpenter",
       "Karpenter's NodePools are not served: no Karpenter weighs other prices than this "
       "policy's",
       false},
      {"its own, not shared",
       &policy,
       &shipped,
       true,
       {},
       {},
       "False",
       "Disagree",
       "Karpenter launches and consolidates by its own prices: " + gap + basis +
           ". Set spec.priceSharing: NodeOverlay to share this policy's prices"},
      {"shared, and weighed",
       &sharing,
       &agreed,
       true,
       {shared},
       {},
       "True",
       "Agree",
       "Karpenter weighs the 1 offerings this policy prices at its prices, shared through "
       "NodeOverlays (" +
           pricesText(agreed) + ")"},
      {"shared, written, not yet weighed",
       &sharing,
       &shipped,
       true,
       {shared},
       {},
       "False",
       "Disagree",
       "Karpenter launches and consolidates by its own prices: " + gap + basis +
           ". The NodeOverlays sharing them are written and not yet weighed, or a heavier "
           "overlay than 1000 prices them"},
      {"no NodeOverlays served",
       &sharing,
       &shipped,
       false,
       {},
       {},
       "False",
       "NotShared",
       "spec.priceSharing is NodeOverlay, and Karpenter's NodeOverlays are not served "
       "(Karpenter v1.7 or later, with its NodeOverlay feature gate). Karpenter weighs 1 of this "
       "policy's prices otherwise: " +
           gap + basis},
      {"refused by Karpenter, and a name taken",
       &sharing,
       &shipped,
       true,
       {refused},
       {"gpu-placement.default.g6e.xlarge.on-demand"},
       "False",
       "NotShared",
       "spec.priceSharing is NodeOverlay, and NodeOverlay "
       "gpu-placement.default.g6e.xlarge.on-demand is someone else's: the operator leaves it; "
       "Karpenter refused NodeOverlay gpu-placement.default.g6e.xlarge.on-demand (Conflict: "
       "conflict with another overlay). Karpenter weighs 1 of this policy's prices otherwise: " +
           gap + basis},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    PriceSharingInput input;
    input.policy = row.policy;
    input.karpenter = row.karpenter;
    input.nodeOverlaysServed = row.served;
    input.karpenterInstalled = row.installed;
    input.shared = row.shared;
    input.taken = row.taken;
    input.generation = 3;
    const auto condition = pricesSharedCondition(input);
    CHECK(condition.type == "PricesShared");
    CHECK(condition.status == row.status);
    CHECK(condition.reason == row.reason);
    CHECK(condition.message == row.message);
    CHECK(condition.observedGeneration == 3);
  }
}

}  // namespace gpuplacement::core::price_sharing_tests
