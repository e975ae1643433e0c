#include "core/cluster/node_overlays.h"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

#include "base/decimal.h"
#include "base/json_access.h"
#include "core/cluster/capacity.h"

namespace gpuplacement::core {
namespace {

using base::memberOf;
using base::stringMember;
using json = nlohmann::json;

constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";

// The labels karpenterLabels gives some types: set or not, the operator
// knows their value for every type (a CPU type has no GPU name).
constexpr std::array<std::string_view, 17> kTypeLabels = {
    "node.kubernetes.io/instance-type",
    "karpenter.sh/capacity-type",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "karpenter.k8s.aws/instance-family",
    "karpenter.k8s.aws/instance-size",
    "karpenter.k8s.aws/instance-category",
    "karpenter.k8s.aws/instance-generation",
    "karpenter.k8s.aws/instance-cpu",
    "karpenter.k8s.aws/instance-memory",
    "karpenter.k8s.aws/instance-gpu-name",
    "karpenter.k8s.aws/instance-gpu-count",
    "karpenter.k8s.aws/instance-gpu-manufacturer",
    "karpenter.k8s.aws/instance-gpu-memory",
    "karpenter.k8s.aws/instance-accelerator-name",
    "karpenter.k8s.aws/instance-accelerator-count",
    "karpenter.k8s.aws/instance-accelerator-manufacturer"};

// One price an overlay may set: an offering, or a type at a capacity type.
struct PricedItem {
  const InstanceType* instance = nullptr;
  CapacityType capacity = CapacityType::OnDemand;
  std::string zone;  // empty: not known
  double* price = nullptr;
  // The overlay that priced it, by weight; -1: none yet.
  int pricedAtWeight = -1;
  const std::string* pricedBy = nullptr;
};

std::optional<double> adjustmentOf(const std::string& text, bool& percent) {
  if (text.size() < 2 || (text.front() != '+' && text.front() != '-')) {
    return std::nullopt;
  }
  percent = text.back() == '%';
  const auto magnitude =
      base::parseDecimal(std::string_view(text).substr(1, text.size() - 1 - (percent ? 1 : 0)));
  if (!magnitude) {
    return std::nullopt;
  }
  return text.front() == '-' ? -*magnitude : *magnitude;
}

// Why the operator cannot tell which offerings the overlay selects; empty
// when it can.
std::string unseenLabel(const NodeOverlay& overlay, bool zonesKnown, bool regionKnown) {
  for (const auto& requirement : overlay.requirements) {
    const std::string_view key = requirement.key;
    const bool known =
        std::find(kTypeLabels.begin(), kTypeLabels.end(), key) != kTypeLabels.end() ||
        (key == kZone && zonesKnown) || (key == kRegion && regionKnown);
    if (known) {
      continue;
    }
    // Karpenter reads a label no offering defines as met by NotIn and
    // DoesNotExist, except a NodePool's name, which every offering has.
    const bool unset = requirement.op == "NotIn" || requirement.op == "DoesNotExist";
    if (unset && key != "karpenter.sh/nodepool") {
      continue;
    }
    if (key == kZone) {
      return "it selects zones, and these prices name none";
    }
    return "it selects on " + requirement.key +
           ", which the operator cannot see per offering (a NodePool's name or its own labels)";
  }
  return "";
}

void applyOverlays(std::vector<PricedItem>& items, const std::vector<NodeOverlay>& overlays,
                   const Catalog& catalog, bool zonesKnown, NodeOverlaysApplied& applied) {
  std::vector<const NodeOverlay*> ordered;
  for (const auto& overlay : overlays) {
    if (overlay.pricesOfferings()) {
      ordered.push_back(&overlay);
    }
  }
  if (ordered.empty()) {
    return;
  }
  // Karpenter's order: weight, highest first; equal weights by name, the
  // last in alphabetical order first.
  // Names are unique: the order is total.
  std::sort(ordered.begin(), ordered.end(), [](const auto* a, const auto* b) {
    return a->weight != b->weight ? a->weight > b->weight : a->name > b->name;
  });
  std::vector<std::map<std::string, std::string>> labels;
  labels.reserve(items.size());
  for (const auto& item : items) {
    auto own = karpenterLabels(*item.instance, catalog, item.capacity);
    if (!item.zone.empty()) {
      own[std::string(kZone)] = item.zone;
    }
    if (!catalog.region.empty()) {
      own[std::string(kRegion)] = catalog.region;
    }
    labels.push_back(std::move(own));
  }
  for (const auto* overlay : ordered) {
    const auto skip = [&](const std::string& why) {
      applied.notApplied.push_back(overlay->name + ": " + why);
    };
    if (!overlay->refused.empty()) {
      skip("Karpenter refused it (" + overlay->refused + ")");
      continue;
    }
    if (!overlay->validated) {
      // Karpenter weighs only what it validated; without its NodeOverlay
      // feature gate it validates nothing.
      skip("Karpenter has not accepted it (yet; is its NodeOverlay feature gate on?)");
      continue;
    }
    if (const auto why = unseenLabel(*overlay, zonesKnown, !catalog.region.empty()); !why.empty()) {
      skip(why);
      continue;
    }
    std::vector<std::size_t> selected;
    const NodeOverlay* conflict = nullptr;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const bool selects = std::all_of(
          overlay->requirements.begin(), overlay->requirements.end(), [&](const auto& requirement) {
            const auto found = labels[i].find(requirement.key);
            return satisfies(requirement, found == labels[i].end() ? nullptr : &found->second);
          });
      if (!selects) {
        continue;
      }
      if (items[i].pricedAtWeight == overlay->weight) {
        conflict = overlay;
        skip("it prices " + items[i].instance->type + " as " + *items[i].pricedBy +
             " does, at the same weight " + std::to_string(overlay->weight) +
             " (Karpenter refuses it too)");
        break;
      }
      selected.push_back(i);
    }
    if (conflict) {
      continue;
    }
    for (const auto i : selected) {
      auto& item = items[i];
      if (item.pricedAtWeight >= 0) {
        continue;  // a heavier overlay priced it
      }
      *item.price = adjustedPrice(*item.price, *overlay);
      item.pricedAtWeight = overlay->weight;
      item.pricedBy = &overlay->name;
      ++applied.offeringsPriced;
    }
  }
}

}  // namespace

NodeOverlay nodeOverlayFromJson(const json& object) {
  NodeOverlay overlay;
  const auto& metadata = memberOf(object, "metadata");
  overlay.name = stringMember(metadata, "name");
  overlay.pricesOf = stringMember(memberOf(metadata, "labels"), "gpuplacement.io/prices-of");
  const auto& spec = memberOf(object, "spec");
  overlay.price = stringMember(spec, "price");
  overlay.priceAdjustment = stringMember(spec, "priceAdjustment");
  overlay.weight = static_cast<int>(base::integerMember(spec, "weight"));
  overlay.requirements = requirementsFromJson(memberOf(spec, "requirements"));
  if (const auto& conditions = memberOf(memberOf(object, "status"), "conditions");
      conditions.is_array()) {
    for (const auto& condition : conditions) {
      if (stringMember(condition, "type") != "ValidationSucceeded") {
        continue;
      }
      overlay.validated = stringMember(condition, "status") == "True";
      if (stringMember(condition, "status") == "False") {
        overlay.refused =
            stringMember(condition, "reason") + ": " + stringMember(condition, "message");
      }
    }
  }
  bool percent = false;
  if (!overlay.price.empty() && !base::parseDecimal(overlay.price)) {
    overlay.refused = "price " + overlay.price + " is not a decimal";
  } else if (!overlay.priceAdjustment.empty() && !adjustmentOf(overlay.priceAdjustment, percent)) {
    overlay.refused = "priceAdjustment " + overlay.priceAdjustment +
                      " is neither a signed amount nor a signed percentage";
  } else if (!overlay.price.empty() && !overlay.priceAdjustment.empty()) {
    overlay.refused = "it sets both price and priceAdjustment";
  }
  return overlay;
}

double adjustedPrice(double base, const NodeOverlay& overlay) {
  if (!overlay.price.empty()) {
    const auto price = base::parseDecimal(overlay.price);
    return price ? *price : base;
  }
  bool percent = false;
  const auto adjustment = adjustmentOf(overlay.priceAdjustment, percent);
  if (!adjustment) {
    return base;
  }
  const double adjusted = percent ? base * (1 + *adjustment / 100) : base + *adjustment;
  return std::max(adjusted, 0.0);
}

OfferingPrices withNodeOverlays(OfferingPrices offerings, const std::vector<NodeOverlay>& overlays,
                                const Catalog& catalog, NodeOverlaysApplied* applied) {
  std::vector<PricedItem> items;
  for (auto& offering : offerings.offerings) {
    const auto* instance = catalog.find(offering.instanceType);
    if (instance && offering.price) {
      items.push_back({instance, offering.capacity, offering.zone, &*offering.price});
    }
  }
  NodeOverlaysApplied ignored;
  applyOverlays(items, overlays, catalog, true, applied ? *applied : ignored);
  return offerings;
}

Catalog withNodeOverlays(Catalog catalog, const std::vector<NodeOverlay>& overlays,
                         NodeOverlaysApplied* applied) {
  std::vector<PricedItem> items;
  for (auto& instance : catalog.instances) {
    if (instance.onDemand) {
      items.push_back({&instance, CapacityType::OnDemand, "", &*instance.onDemand});
    }
    if (instance.spot) {
      items.push_back({&instance, CapacityType::Spot, "", &*instance.spot});
    }
  }
  NodeOverlaysApplied ignored;
  applyOverlays(items, overlays, catalog, false, applied ? *applied : ignored);
  return catalog;
}

Catalog pricedAsKarpenter(const Catalog& catalog, const OfferingPrices* offerings,
                          const std::string& offeringsAsOf,
                          const std::vector<NodeOverlay>& overlays) {
  NodeOverlaysApplied applied;
  Catalog priced =
      offerings
          ? withOfferingPrices(catalog, withNodeOverlays(*offerings, overlays, catalog, &applied),
                               offeringsAsOf)
          : withNodeOverlays(catalog, overlays, &applied);
  priced.nodeOverlays = std::move(applied);
  return priced;
}

}  // namespace gpuplacement::core
