// Karpenter's metrics page (--karpenter-service, --karpenter-metrics-url):
// whatever it serves, the offerings read are sorted, one per key, priced at
// a finite non-negative price, and the catalog priced by them keeps its
// types, each at a price one of its offerings states.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/catalog/offering_prices.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const std::string text = fuzz::text(data, size);
  const auto read = core::offeringPricesFromMetrics(text);
  if (!read) {
    return 0;
  }
  const auto& offerings = read->offerings;
  for (std::size_t i = 0; i < offerings.size(); ++i) {
    const auto& offering = offerings[i];
    if (offering.price && !(std::isfinite(*offering.price) && *offering.price >= 0)) {
      std::abort();
    }
    if (i > 0 && !(std::tie(offerings[i - 1].instanceType, offerings[i - 1].capacity,
                            offerings[i - 1].zone) <
                   std::tie(offering.instanceType, offering.capacity, offering.zone))) {
      std::abort();  // sorted, one per instance type, capacity type and zone
    }
  }
  const auto& catalog = fuzz::catalog();
  const auto priced = core::withOfferingPrices(catalog, *read, "2026-12-01T20:00:00Z");
  if (priced.instances.size() != catalog.instances.size()) {
    std::abort();
  }
  for (const auto& instance : priced.instances) {
    for (const auto capacity : {core::CapacityType::OnDemand, core::CapacityType::Spot}) {
      const auto zones = read->of(instance.type, capacity);
      const auto& price = capacity == core::CapacityType::Spot ? instance.spot : instance.onDemand;
      const bool stated = std::any_of(zones.begin(), zones.end(), [&](const core::Offering& zone) {
        return zone.price && price && *zone.price == *price;
      });
      const bool priced = std::any_of(zones.begin(), zones.end(), [](const core::Offering& zone) {
        return zone.price.has_value();
      });
      if (priced && !stated) {
        std::abort();  // Karpenter's price, one of its zones'
      }
    }
  }
  return 0;
}
