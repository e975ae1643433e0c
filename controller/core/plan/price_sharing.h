#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/cluster/node_overlays.h"
#include "core/intent/policy.h"
#include "core/plan/status.h"

// One price for the operator and Karpenter. A PlacementPolicy's own prices
// (a negotiated rate, a Savings Plan's) are the operator's alone unless the
// policy shares them: then the operator writes one NodeOverlay per price
// and capacity type, which Karpenter weighs its offerings by when it
// launches and consolidates. Either way the policy's status says whether
// Karpenter's prices and the policy's agree (the PricesShared condition).
namespace gpuplacement::core {

// Above the overlays teams write by hand (Karpenter's examples use 1 to
// 100): a team's own overlay wins only at a higher weight, and the
// condition then says Karpenter's price differs.
inline constexpr int kSharedPriceWeight = 1000;
// The label that marks an overlay as the operator's, valued with the
// policy's name: the operator writes and removes only overlays it carries.
inline constexpr std::string_view kPricesOfLabel = "gpuplacement.io/prices-of";

struct SharedPrice {
  std::string instanceType;
  CapacityType capacity = CapacityType::OnDemand;  // OnDemand or Spot
  double price = 0;
};

// Every price the policy sets, one per type and capacity type.
std::vector<SharedPrice> sharedPrices(const Policy& policy);

// "gpu-placement.default.g6e.xlarge.on-demand".
std::string sharedOverlayName(std::string_view policy, const SharedPrice& price);

// The NodeOverlay sharing one price, as the API reads it back.
NodeOverlay sharedOverlay(std::string_view policy, const SharedPrice& price);
// The same as an object to create: labelled with the policy and owned by
// it (uid), so that deleting the policy deletes it.
nlohmann::json sharedOverlayObject(std::string_view policy, std::string_view policyUid,
                                   const SharedPrice& price);

// What the operator writes so that the overlays in the cluster share what
// `policy` (null: deleted, or sharing nothing) prices, and no more.
struct OverlayWrites {
  std::vector<nlohmann::json> create;  // whole objects
  // Overlays of the operator's whose spec is not what it should be: name and
  // the spec to merge in.
  std::vector<std::pair<std::string, nlohmann::json>> update;
  std::vector<std::string> remove;  // the operator's, no longer shared
  // Names the operator would write that someone else's overlay holds.
  std::vector<std::string> taken;

  bool empty() const { return create.empty() && update.empty() && remove.empty(); }
};
OverlayWrites overlayWrites(std::string_view policyName, std::string_view policyUid,
                            const Policy* policy, const std::vector<NodeOverlay>& cluster);

// What the PricesShared condition reads.
struct PriceSharingInput {
  const Policy* policy = nullptr;
  // The catalog priced as Karpenter weighs it (its offering prices or the
  // catalog's, with every NodeOverlay, the operator's included).
  const Catalog* karpenter = nullptr;
  bool nodeOverlaysServed = false;
  bool karpenterInstalled = true;  // Karpenter's NodePools are served
  // The overlays sharing this policy's prices, as the cluster has them.
  std::vector<NodeOverlay> shared;
  std::vector<std::string> taken;  // OverlayWrites::taken
  std::int64_t generation = 0;
};

// True (Agree) while Karpenter weighs every offering the policy prices at
// the policy's price, or the policy prices none (NoOwnPrices), or no
// Karpenter runs to weigh any (NoKarpenter); False
// (Disagree) naming each that differs (the policy's price, Karpenter's, the
// difference) and what would share them; False (NotShared) when sharing is
// asked for and cannot be done (no NodeOverlay CRD, a name taken, an
// overlay Karpenter refused).
Condition pricesSharedCondition(const PriceSharingInput& input);

}  // namespace gpuplacement::core
