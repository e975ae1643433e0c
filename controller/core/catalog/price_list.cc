#include "core/catalog/price_list.h"

#include <charconv>

#include "base/json_reader.h"
#include "core/catalog/region_name.h"

namespace gpuplacement::core {

using base::ObjectReader;
using json = nlohmann::json;

Result<PriceList> parsePriceList(const json& document) {
  ObjectReader root(document, "");
  if (auto ok = root.requireObject(); !ok) {
    return Error{"price list", "must be a YAML mapping"};
  }
  if (auto ok = root.onlyKeys({"region", "asOf", "source", "prices"}); !ok) {
    return ok.error();
  }
  PriceList list;
  for (auto [key, field] : {std::pair{"region", &list.region}, std::pair{"asOf", &list.asOf},
                            std::pair{"source", &list.source}}) {
    auto value = root.string(key);
    if (!value) {
      return value.error();
    }
    *field = *value;
  }
  if (!isRegionName(list.region)) {
    return Error{"region", "\"" + list.region + "\" is not an AWS region name"};
  }
  if (!root.has("prices") || !root.at("prices").is_array()) {
    return Error{"prices", "must be a list of {instanceType, onDemand}"};
  }
  const auto& prices = root.at("prices");
  for (std::size_t i = 0; i < prices.size(); ++i) {
    ObjectReader item(prices[i], "prices[" + std::to_string(i) + "]");
    if (auto ok = item.requireObject(); !ok) {
      return ok.error();
    }
    if (auto ok = item.onlyKeys({"instanceType", "onDemand"}); !ok) {
      return ok.error();
    }
    auto type = item.string("instanceType");
    if (!type) {
      return type.error();
    }
    auto price = item.number("onDemand", 0, 10'000);
    if (!price) {
      return price.error();
    }
    if (!list.onDemand.emplace(*type, *price).second) {
      return Error{item.fieldPath("instanceType"), "\"" + *type + "\" is priced twice"};
    }
  }
  return list;
}

namespace {

// The shortest decimal that reads back as the same double ("1.258" for
// AWS's "1.2580000000"), never in exponent form.
std::string decimalText(double price) {
  char buffer[64];
  const auto written =
      std::to_chars(buffer, buffer + sizeof buffer, price, std::chars_format::fixed);
  return std::string(buffer, written.ptr);
}

}  // namespace

json priceListJson(const PriceList& list) {
  json prices = json::array();
  for (const auto& [type, price] : list.onDemand) {
    prices.push_back({{"instanceType", type}, {"onDemand", decimalText(price)}});
  }
  return {{"region", list.region},
          {"asOf", list.asOf},
          {"source", list.source},
          {"prices", std::move(prices)}};
}

Catalog withPriceList(Catalog catalog, const PriceList& list) {
  catalog.spotPricesRegion =
      catalog.spotPricesRegion.empty() ? catalog.region : catalog.spotPricesRegion;
  const std::string spotNote =
      "; spot: the catalog's " + catalog.spotPricesRegion + " snapshot" +
      (catalog.pricesAsOf.empty() ? "" : " of about " + catalog.pricesAsOf);
  catalog.region = list.region;
  catalog.pricesAsOf = list.asOf;
  catalog.pricesSource = list.source + spotNote;
  catalog.pricesFrom = PricesFrom::PriceList;
  for (auto& instance : catalog.instances) {
    const auto price = list.onDemand.find(instance.type);
    instance.onDemand =
        price == list.onDemand.end() ? std::nullopt : std::optional<double>(price->second);
  }
  return catalog;
}

}  // namespace gpuplacement::core
