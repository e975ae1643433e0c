#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/catalog/offering_prices.h"
#include "core/cluster/cluster.h"

// Karpenter's NodeOverlays (karpenter.sh/v1alpha1, feature gate
// NodeOverlay): the prices Karpenter weighs its offerings at instead of the
// ones its provider publishes, a negotiated rate or a Savings Plan's
// discount. Karpenter launches and consolidates by them, and publishes its
// provider's prices without them, so the operator applies them itself, the
// way Karpenter does: the overlays Karpenter accepted (ValidationSucceeded
// True), in order of weight (highest first; equal weights by name, last
// first), the first that selects an offering prices it, and one that
// selects an offering an overlay of the same weight already prices is
// refused whole (Karpenter's "Conflict").
namespace gpuplacement::core {

struct NodeOverlay {
  std::string name;
  std::vector<NodeSelectorRequirement> requirements;
  std::string price;            // "5.00": the offering's price; empty: none
  std::string priceAdjustment;  // "+10%", "-15%", "+0.5", "-0.5"; empty: none
  int weight = 0;
  // Karpenter refused it (its ValidationSucceeded condition is False): the
  // reason and message, empty while it has not.
  std::string refused;
  bool validated = false;  // Karpenter accepted it (ValidationSucceeded True)
  // The PlacementPolicy whose prices it shares (label
  // gpuplacement.io/prices-of); empty: not the operator's.
  std::string pricesOf;

  bool operator==(const NodeOverlay&) const = default;
  bool pricesOfferings() const { return !price.empty() || !priceAdjustment.empty(); }
};

// One NodeOverlay object as the API serves it. Its spec was checked by the
// CRD's validation; what still does not read (a price that is not a
// decimal) makes the overlay refused, not an error.
NodeOverlay nodeOverlayFromJson(const nlohmann::json& object);

// `base` as the overlay changes it, as Karpenter's AdjustedPrice does: a
// price replaces it, "+10%" and "-0.5" adjust it, never below zero.
double adjustedPrice(double base, const NodeOverlay& overlay);

// Karpenter's offerings with the overlays' prices.
OfferingPrices withNodeOverlays(OfferingPrices offerings, const std::vector<NodeOverlay>& overlays,
                                const Catalog& catalog, NodeOverlaysApplied* applied = nullptr);

// The catalog's on-demand and spot prices with the overlays' (no zone is
// known: an overlay that selects zones is not applied).
Catalog withNodeOverlays(Catalog catalog, const std::vector<NodeOverlay>& overlays,
                         NodeOverlaysApplied* applied = nullptr);

// The catalog priced as Karpenter weighs it: Karpenter's offering prices
// where they are read (`offerings`, first read at `offeringsAsOf`), else
// the catalog's own, with the NodeOverlays applied. The result's
// nodeOverlays says what they did.
Catalog pricedAsKarpenter(const Catalog& catalog, const OfferingPrices* offerings,
                          const std::string& offeringsAsOf,
                          const std::vector<NodeOverlay>& overlays);

}  // namespace gpuplacement::core
