#include "core/plan/price_sharing.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "base/decimal.h"
#include "base/enum_names.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

// Prices are read from quoted decimals on both sides: equal to a
// hundredth of a cent.
constexpr double kPricesAgreeWithin = 1e-4;
// Offerings named in a message, at most; a policy may price hundreds.
constexpr std::size_t kNamedInMessage = 4;

std::string capacityLabelValue(CapacityType capacity) {
  return capacity == CapacityType::Spot ? "spot" : "on-demand";
}

std::string capacityWords(CapacityType capacity) {
  return capacity == CapacityType::Spot ? "spot" : "on demand";
}

std::string priceText(double price) {
  return base::decimalString(price, 6);
}

json specOf(const NodeOverlay& overlay) {
  json requirements = json::array();
  for (const auto& requirement : overlay.requirements) {
    requirements.push_back(
        {{"key", requirement.key}, {"operator", requirement.op}, {"values", requirement.values}});
  }
  return {{"requirements", std::move(requirements)},
          {"price", overlay.price},
          {"weight", overlay.weight}};
}

bool sameSpec(const NodeOverlay& a, const NodeOverlay& b) {
  return a.requirements == b.requirements && a.price == b.price &&
         a.priceAdjustment == b.priceAdjustment && a.weight == b.weight;
}

// "$1.861/h" and the like, for messages.
std::string hourly(double price) {
  return base::formatMoney(price) + "/h";
}

std::optional<double> catalogPrice(const Catalog& catalog, const SharedPrice& price) {
  const auto* instance = catalog.find(price.instanceType);
  if (!instance) {
    return std::nullopt;
  }
  return price.capacity == CapacityType::Spot ? instance->spot : instance->onDemand;
}

std::string listed(const std::vector<std::string>& items) {
  std::string text;
  for (std::size_t i = 0; i < items.size() && i < kNamedInMessage; ++i) {
    text += (i == 0 ? "" : "; ") + items[i];
  }
  if (items.size() > kNamedInMessage) {
    text += "; and " + std::to_string(items.size() - kNamedInMessage) + " more";
  }
  return text;
}

}  // namespace

std::vector<SharedPrice> sharedPrices(const Policy& policy) {
  std::vector<SharedPrice> prices;
  for (const auto& [type, price] : policy.prices) {
    if (price.onDemand) {
      prices.push_back({type, CapacityType::OnDemand, *price.onDemand});
    }
    if (price.spot) {
      prices.push_back({type, CapacityType::Spot, *price.spot});
    }
  }
  return prices;
}

std::string sharedOverlayName(std::string_view policy, const SharedPrice& price) {
  return "gpu-placement." + std::string(policy) + "." + price.instanceType + "." +
         capacityLabelValue(price.capacity);
}

NodeOverlay sharedOverlay(std::string_view policy, const SharedPrice& price) {
  NodeOverlay overlay;
  overlay.name = sharedOverlayName(policy, price);
  overlay.requirements = {
      {"node.kubernetes.io/instance-type", "In", {price.instanceType}},
      {"karpenter.sh/capacity-type", "In", {capacityLabelValue(price.capacity)}}};
  overlay.price = priceText(price.price);
  overlay.weight = kSharedPriceWeight;
  overlay.pricesOf = std::string(policy);
  return overlay;
}

json sharedOverlayObject(std::string_view policy, std::string_view policyUid,
                         const SharedPrice& price) {
  const auto overlay = sharedOverlay(policy, price);
  return {{"apiVersion", "karpenter.sh/v1alpha1"},
          {"kind", "NodeOverlay"},
          {"metadata",
           {{"name", overlay.name},
            {"labels",
             {{std::string(kPricesOfLabel), std::string(policy)},
              {"app.kubernetes.io/managed-by", "gpu-placement-operator"}}},
            {"ownerReferences",
             {{{"apiVersion", "gpuplacement.io/v1alpha1"},
               {"kind", "PlacementPolicy"},
               {"name", std::string(policy)},
               {"uid", std::string(policyUid)}}}}}},
          {"spec", specOf(overlay)}};
}

OverlayWrites overlayWrites(std::string_view policyName, std::string_view policyUid,
                            const Policy* policy, const std::vector<NodeOverlay>& cluster) {
  std::map<std::string, const NodeOverlay*> existing;
  for (const auto& overlay : cluster) {
    existing[overlay.name] = &overlay;
  }
  OverlayWrites writes;
  std::map<std::string, bool> wanted;
  if (policy && policy->priceSharing == PriceSharing::NodeOverlay) {
    for (const auto& price : sharedPrices(*policy)) {
      const auto desired = sharedOverlay(policyName, price);
      wanted[desired.name] = true;
      const auto found = existing.find(desired.name);
      if (found == existing.end()) {
        writes.create.push_back(sharedOverlayObject(policyName, policyUid, price));
      } else if (found->second->pricesOf != policyName) {
        writes.taken.push_back(desired.name);
      } else if (!sameSpec(*found->second, desired)) {
        auto spec = specOf(desired);
        spec["priceAdjustment"] = nullptr;  // a merge patch removes what another writer added
        writes.update.emplace_back(desired.name, std::move(spec));
      }
    }
  }
  for (const auto& overlay : cluster) {
    if (overlay.pricesOf == policyName && !wanted.count(overlay.name)) {
      writes.remove.push_back(overlay.name);
    }
  }
  return writes;
}

Condition pricesSharedCondition(const PriceSharingInput& input) {
  Condition condition{"PricesShared",
                      "True",
                      "NoOwnPrices",
                      "this policy sets no prices of its own: it weighs offerings as Karpenter "
                      "does",
                      "",
                      input.generation};
  if (!input.policy || !input.karpenter) {
    return condition;
  }
  const auto prices = sharedPrices(*input.policy);
  if (prices.empty()) {
    return condition;
  }
  const bool sharing = input.policy->priceSharing == PriceSharing::NodeOverlay;
  if (!input.karpenterInstalled && !sharing) {
    condition.reason = "NoKarpenter";
    condition.message =
        "Karpenter's NodePools are not served: no Karpenter weighs other prices than this "
        "policy's";
    return condition;
  }
  std::vector<std::string> problems;
  if (sharing && !input.nodeOverlaysServed) {
    problems.push_back(
        "Karpenter's NodeOverlays are not served (Karpenter v1.7 or later, with its NodeOverlay "
        "feature gate)");
  }
  for (const auto& name : input.taken) {
    problems.push_back("NodeOverlay " + name + " is someone else's: the operator leaves it");
  }
  for (const auto& overlay : input.shared) {
    if (!overlay.refused.empty()) {
      problems.push_back("Karpenter refused NodeOverlay " + overlay.name + " (" + overlay.refused +
                         ")");
    }
  }
  std::vector<std::string> differences;
  for (const auto& price : prices) {
    const auto karpenters = catalogPrice(*input.karpenter, price);
    if (karpenters && std::abs(*karpenters - price.price) < kPricesAgreeWithin) {
      continue;
    }
    std::string text = price.instanceType + " " + capacityWords(price.capacity) + ": " +
                       hourly(price.price) + " here, ";
    if (!karpenters) {
      text += "no price of Karpenter's";
    } else {
      const double gap = price.price - *karpenters;
      text += hourly(*karpenters) + " Karpenter's (" + hourly(std::abs(gap)) +
              (gap < 0 ? " less" : " more") + " here)";
    }
    differences.push_back(std::move(text));
  }
  std::string basis = " (" + pricesText(*input.karpenter) + ")";
  if (const auto& left = input.karpenter->nodeOverlays.notApplied; !left.empty()) {
    basis += "; NodeOverlays not weighed: " + listed(left);
  }
  if (!problems.empty()) {
    condition.status = "False";
    condition.reason = "NotShared";
    condition.message = "spec.priceSharing is NodeOverlay, and " + listed(problems);
    if (!differences.empty()) {
      condition.message += ". Karpenter weighs " + std::to_string(differences.size()) +
                           " of this policy's prices otherwise: " + listed(differences) + basis;
    }
    return condition;
  }
  if (differences.empty()) {
    condition.reason = "Agree";
    condition.message = "Karpenter weighs the " + std::to_string(prices.size()) +
                        " offerings this policy prices at its prices" +
                        (sharing ? ", shared through NodeOverlays" : std::string()) + basis;
    return condition;
  }
  condition.status = "False";
  condition.reason = "Disagree";
  condition.message =
      "Karpenter launches and consolidates by its own prices: " + listed(differences) + basis +
      (sharing ? ". The NodeOverlays sharing them are written and not yet weighed, or a heavier "
                 "overlay than " +
                     std::to_string(kSharedPriceWeight) + " prices them"
               : ". Set spec.priceSharing: NodeOverlay to share this policy's prices");
  return condition;
}

}  // namespace gpuplacement::core
