#include "app/price_basis.h"

namespace gpuplacement::app {
namespace {

// Names are listed up to this many; a policy may price hundreds.
constexpr std::size_t kNamesShown = 5;

std::string policyPricedText(const core::Policy& policy) {
  if (policy.prices.empty()) {
    return "";
  }
  std::string names;
  std::size_t shown = 0;
  for (const auto& [type, price] : policy.prices) {
    if (shown == kNamesShown) {
      names += " and " + std::to_string(policy.prices.size() - shown) + " more";
      break;
    }
    names += (shown++ == 0 ? "" : ", ") + type;
  }
  return "; the PlacementPolicy's own for " + names;
}

}  // namespace

std::string priceBasisText(const core::PlacementEngine& engine) {
  return core::pricesText(engine.catalog()) + policyPricedText(engine.policy());
}

nlohmann::json priceBasisJson(const core::PlacementEngine& engine) {
  const auto& catalog = engine.catalog();
  nlohmann::json types = nlohmann::json::array();
  for (const auto& [type, price] : engine.policy().prices) {
    types.push_back(type);
  }
  return {
      {"region", catalog.region},
      {"asOf", catalog.pricesAsOf},
      {"source", catalog.pricesSource},
      {"spotRegion", catalog.spotPricesRegion.empty() ? catalog.region : catalog.spotPricesRegion},
      {"policyPricedTypes", std::move(types)}};
}

}  // namespace gpuplacement::app
