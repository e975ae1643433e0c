#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "core/catalog/catalog.h"

// A region's on-demand prices, as `gpu-placement prices import` writes them
// from AWS's Price List: the catalog's prices for a cluster that runs
// outside the catalog's region. Spot prices stay the catalog's snapshot,
// and say so.
namespace gpuplacement::core {

struct PriceList {
  std::string region;                      // "eu-central-1"
  std::string asOf;                        // the offer file's publication date, "2026-11-20"
  std::string source;                      // which file, and what was kept of it
  std::map<std::string, double> onDemand;  // USD per instance-hour, by instance type

  bool operator==(const PriceList&) const = default;
};

// The price list file (YAML, read as JSON). Errors name the field:
// "prices[3].onDemand: must be ...".
Result<PriceList> parsePriceList(const nlohmann::json& document);
// The same document, prices as quoted decimals; parsePriceList reads it back.
nlohmann::json priceListJson(const PriceList& list);

// The catalog priced by `list`: its region, date and source are the list's;
// a type the list does not price has no on-demand price there (it is not
// sold there, or not under these terms), never the catalog's region's; the
// spot prices stay the catalog's snapshot (`spotPricesRegion` names whose).
Catalog withPriceList(Catalog catalog, const PriceList& list);

}  // namespace gpuplacement::core
