#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "core/catalog/catalog.h"
#include "core/catalog/types.h"

// The prices Karpenter pays: its offerings (instance type x capacity type x
// zone) as its metrics publish them,
// karpenter_cloudprovider_instance_type_offering_price_estimate and
// karpenter_cloudprovider_instance_type_offering_available. The AWS provider
// fills them from AWS's pricing API (on-demand, in the cluster's region)
// and the spot price history (per zone, refreshed), and marks an offering
// unavailable after an insufficient-capacity error. Placing at these
// prices, the operator claims what Karpenter will pay.
namespace gpuplacement::core {

inline constexpr std::string_view kOfferingPriceMetric =
    "karpenter_cloudprovider_instance_type_offering_price_estimate";
inline constexpr std::string_view kOfferingAvailableMetric =
    "karpenter_cloudprovider_instance_type_offering_available";

struct Offering {
  std::string instanceType;
  CapacityType capacity = CapacityType::OnDemand;  // OnDemand or Spot
  std::string zone;
  std::optional<double> price;  // USD per instance-hour; nullopt: not published
  bool available = true;        // false: Karpenter will not launch it now

  bool operator==(const Offering&) const = default;
};

struct OfferingPrices {
  std::vector<Offering> offerings;  // sorted by type, capacity, zone; one per key
  int reserved = 0;                 // reserved-capacity offerings read and left aside

  bool operator==(const OfferingPrices&) const = default;

  // Whether Karpenter publishes offerings of this type at this capacity
  // type and marks every one of them unavailable: it will launch none.
  bool unavailable(std::string_view instanceType, CapacityType capacity) const;
  // The zones' offerings of one type and capacity type.
  std::span<const Offering> of(std::string_view instanceType, CapacityType capacity) const;
};

// Karpenter's metrics page (Prometheus text). An error when it is not
// Prometheus text, or publishes no offering price (a provider that does not,
// such as the kwok one, or a Karpenter older than v0.36). Offerings of
// capacity type `reserved` are counted, not priced: their price is not the
// hourly price of a new node.
Result<OfferingPrices> offeringPricesFromMetrics(std::string_view metrics);

// "us-east-1" of "us-east-1a"; empty when `zone` is not an AWS zone name.
std::string regionOfZone(std::string_view zone);

// The catalog priced by Karpenter, as of `asOf` (when these prices were
// first read): each type's on-demand and spot price is its cheapest
// available zone's (the offering Karpenter launches when nothing narrows
// the zone), or its cheapest zone's while none is available (what a node
// already running costs). A type Karpenter publishes no price for keeps
// the catalog's, and the source says how many did. The region is the
// offerings' zones' region (empty when their zones name none: Karpenter's
// prices are its own region's, whichever that is).
Catalog withOfferingPrices(Catalog catalog, const OfferingPrices& prices, const std::string& asOf);

// How Karpenter's prices have been read, as the operator's refresh loop
// knows it. Times are RFC 3339. The condition made of them names no time
// while the prices are current, so that neither a refresh nor a price
// change rewrites a status whose costs stay the same.
struct KarpenterPriceReads {
  std::string source;        // "service karpenter/karpenter:8080", or the URL read
  std::string interval;      // "5m0s": how often they are read
  std::string lastRead;      // the last good read; empty: none yet
  std::string failingSince;  // the first failed read since the last good one; empty: none
  std::string error;         // the first failure's, for the message
  bool stale = false;        // reads have failed for longer than the interval

  bool operator==(const KarpenterPriceReads&) const = default;
};

// The KarpenterPrices condition: True (Current) while the prices in force
// are Karpenter's and recent; False (Stale) once reads have failed for
// longer than the interval, naming when the prices kept were last read;
// Unknown (NotRead) before any read succeeded, the catalog's prices in
// force.
struct KarpenterPricesCondition {
  std::string status;
  std::string reason;
  std::string message;

  bool operator==(const KarpenterPricesCondition&) const = default;
};

KarpenterPricesCondition karpenterPricesCondition(const KarpenterPriceReads& reads);

}  // namespace gpuplacement::core
