#include "core/catalog/offering_prices.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "base/prometheus_text.h"
#include "core/catalog/region_name.h"

namespace gpuplacement::core {

namespace {

using Key = std::tuple<std::string, CapacityType, std::string>;

bool before(const Offering& offering, std::string_view type, CapacityType capacity) {
  return std::tie(offering.instanceType, offering.capacity) <
         std::tuple<std::string_view, CapacityType>(type, capacity);
}

}  // namespace

std::span<const Offering> OfferingPrices::of(std::string_view instanceType,
                                             CapacityType capacity) const {
  const auto first = std::lower_bound(
      offerings.begin(), offerings.end(), 0,
      [&](const Offering& offering, int) { return before(offering, instanceType, capacity); });
  auto last = first;
  while (last != offerings.end() && last->instanceType == instanceType &&
         last->capacity == capacity) {
    ++last;
  }
  return {first, last};
}

bool OfferingPrices::unavailable(std::string_view instanceType, CapacityType capacity) const {
  const auto zones = of(instanceType, capacity);
  return !zones.empty() && std::none_of(zones.begin(), zones.end(),
                                        [](const Offering& zone) { return zone.available; });
}

Result<OfferingPrices> offeringPricesFromMetrics(std::string_view metrics) {
  std::map<Key, Offering> read;
  OfferingPrices prices;
  std::string problem;
  int priced = 0;
  auto parsed = base::readPrometheusText(
      metrics, {kOfferingPriceMetric, kOfferingAvailableMetric},
      [&](const base::PrometheusSample& sample) {
        const auto type = sample.label("instance_type");
        const auto capacityLabel = sample.label("capacity_type");
        const auto zone = sample.label("zone");
        if (!problem.empty()) {
          return;
        }
        if (type.empty() || capacityLabel.empty() || zone.empty()) {
          problem = std::string(sample.name) +
                    " has a sample without instance_type, capacity_type or zone";
          return;
        }
        if (capacityLabel == "reserved") {
          prices.reserved += sample.name == kOfferingPriceMetric;
          return;
        }
        if (capacityLabel != "on-demand" && capacityLabel != "spot") {
          return;  // a capacity type this operator does not place on
        }
        const auto capacity = capacityLabel == "spot" ? CapacityType::Spot : CapacityType::OnDemand;
        auto& offering = read[Key{std::string(type), capacity, std::string(zone)}];
        offering.instanceType = type;
        offering.capacity = capacity;
        offering.zone = zone;
        if (sample.name == kOfferingAvailableMetric) {
          offering.available = sample.value != 0;
        } else if (std::isfinite(sample.value) && sample.value >= 0) {
          offering.price = sample.value;
          ++priced;
        }
      });
  if (!parsed) {
    return Error{"Karpenter's metrics", parsed.error().describe()};
  }
  if (!problem.empty()) {
    return Error{"Karpenter's metrics", problem};
  }
  if (priced == 0) {
    return Error{"Karpenter's metrics",
                 "publish no " + std::string(kOfferingPriceMetric) +
                     ": a Karpenter whose provider does not (the kwok one), or one older "
                     "than v0.36"};
  }
  prices.offerings.reserve(read.size());
  for (auto& [key, offering] : read) {
    prices.offerings.push_back(std::move(offering));
  }
  return prices;
}

std::string regionOfZone(std::string_view zone) {
  if (zone.size() < 2) {
    return "";
  }
  const char last = zone.back();
  const auto region = zone.substr(0, zone.size() - 1);
  return last >= 'a' && last <= 'z' && isRegionName(region) ? std::string(region) : "";
}

Catalog withOfferingPrices(Catalog catalog, const OfferingPrices& prices, const std::string& asOf) {
  std::map<std::string, int> regions;
  int typesPriced = 0;
  for (auto& instance : catalog.instances) {
    bool priced = false;
    for (const auto capacity : {CapacityType::OnDemand, CapacityType::Spot}) {
      std::optional<double> cheapest;
      std::optional<double> cheapestAvailable;
      for (const Offering& zone : prices.of(instance.type, capacity)) {
        ++regions[regionOfZone(zone.zone)];
        if (!zone.price) {
          continue;
        }
        cheapest = std::min(cheapest.value_or(*zone.price), *zone.price);
        if (zone.available) {
          cheapestAvailable = std::min(cheapestAvailable.value_or(*zone.price), *zone.price);
        }
      }
      if (cheapest) {
        (capacity == CapacityType::Spot ? instance.spot : instance.onDemand) =
            cheapestAvailable ? cheapestAvailable : cheapest;
        priced = true;
      }
    }
    typesPriced += priced;
  }
  std::string region;
  int most = 0;
  for (const auto& [name, count] : regions) {
    if (!name.empty() && count > most) {
      region = name;
      most = count;
    }
  }
  const int left = static_cast<int>(catalog.instances.size()) - typesPriced;
  const std::string others = left == 0 ? ""
                                       : "; " + std::to_string(left) +
                                             " types Karpenter does not price keep " +
                                             pricesText(catalog);
  catalog.region = region;
  catalog.pricesAsOf = asOf;
  catalog.pricesSource = "Karpenter's offering prices (" + std::string(kOfferingPriceMetric) +
                         "), the cheapest available zone of each type and capacity type" + others;
  catalog.spotPricesRegion.clear();
  catalog.pricesFrom = PricesFrom::Karpenter;
  return catalog;
}

KarpenterPricesCondition karpenterPricesCondition(const KarpenterPriceReads& reads) {
  const std::string from = " from " + reads.source;
  if (reads.lastRead.empty()) {
    return {"Unknown", "NotRead",
            reads.failingSince.empty()
                ? "Karpenter's prices are not read yet" + from +
                      ": the costs shown are the catalog's until they are"
                : "Karpenter's prices could not be read" + from + " since " + reads.failingSince +
                      " (" + reads.error + "): the costs shown are the catalog's until they are"};
  }
  if (reads.stale) {
    return {"False", "Stale",
            "Karpenter's prices could not be read" + from + " since " + reads.failingSince + " (" +
                reads.error + "): the costs shown are its prices as last read at " +
                reads.lastRead + ", which may have changed since"};
  }
  return {"True", "Current",
          "the costs shown are Karpenter's prices, read" + from + " every " + reads.interval};
}

}  // namespace gpuplacement::core
