// A region's price list: read, written back the same, and laid over the
// catalog so that no other region's on-demand price shows as this one's.
#include "core/catalog/price_list.h"

#include <doctest/doctest.h>

#include "core/cluster/region.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::price_list_tests {
namespace {

using json = nlohmann::json;

json document(json prices) {
  return {{"region", "eu-central-1"},
          {"asOf", "2026-11-20"},
          {"source", "AWS Price List, EC2 offer file version 20261120183043"},
          {"prices", std::move(prices)}};
}

}  // namespace

TEST_CASE("a price list reads back what it wrote") {
  PriceList list{
      "eu-central-1", "2026-11-20", "the test", {{"g5.xlarge", 1.258}, {"p5.48xlarge", 55.04}}};
  const auto read = parsePriceList(priceListJson(list));
  REQUIRE_MESSAGE(read.ok(), read.error().describe());
  CHECK(*read == list);
  CHECK(priceListJson(list)["prices"][0]["onDemand"] == "1.258");
}

TEST_CASE("a price list that is wrong names the field") {
  struct Row {
    const char* what;
    json document;
    std::string field;
  };
  auto noRegion = document(json::array());
  noRegion.erase("region");
  auto badRegion = document(json::array());
  badRegion["region"] = "Frankfurt";
  auto extra = document(json::array());
  extra["currency"] = "EUR";
  const std::vector<Row> rows = {
      {"not a mapping", json::array(), "price list"},
      {"no region", noRegion, "region"},
      {"a region that is not one", badRegion, "region"},
      {"an unknown field", extra, "currency"},
      {"prices not a list", document(json::object()), "prices"},
      {"a price not a number", document({{{"instanceType", "g5.xlarge"}, {"onDemand", "cheap"}}}),
       "prices[0].onDemand"},
      {"a negative price", document({{{"instanceType", "g5.xlarge"}, {"onDemand", "-1"}}}),
       "prices[0].onDemand"},
      {"no instance type", document({{{"onDemand", "1"}}}), "prices[0].instanceType"},
      {"a type twice",
       document({{{"instanceType", "g5.xlarge"}, {"onDemand", "1"}},
                 {{"instanceType", "g5.xlarge"}, {"onDemand", "2"}}}),
       "prices[1].instanceType"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const auto read = parsePriceList(row.document);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().field == row.field);
  }
}

TEST_CASE("laid over the catalog: the list's region and prices, no other region's on demand") {
  const Catalog& shipped = *testing::shippedCatalog();
  const PriceList list{"eu-central-1", "2026-11-20", "AWS Price List", {{"g5.xlarge", 1.258}}};
  const auto priced = withPriceList(shipped, list);
  CHECK(priced.region == "eu-central-1");
  CHECK(priced.pricesAsOf == "2026-11-20");
  CHECK(priced.spotPricesRegion == shipped.region);
  CHECK(priced.pricesSource.find("spot: the catalog's us-east-1 snapshot") != std::string::npos);
  CHECK(priced.find("g5.xlarge")->onDemand == 1.258);
  CHECK(priced.find("g5.xlarge")->spot == shipped.find("g5.xlarge")->spot);
  CHECK_FALSE(priced.find("g6.xlarge")->onDemand.has_value());
  CHECK(priced.find("g6.xlarge")->spot == shipped.find("g6.xlarge")->spot);

  // The region's condition is True for the list's region, and says whose
  // spot prices these are.
  ClusterState cluster;
  cluster.regionFlag = "eu-central-1";
  const auto verdict = pricesForRegion(priced, clusterRegionOf(cluster));
  CHECK(verdict.status == "True");
  CHECK(verdict.message.find("eu-central-1 on-demand prices of 2026-11-20 (an imported price "
                             "list), spot the catalog's us-east-1 snapshot") != std::string::npos);
}

}  // namespace gpuplacement::core::price_list_tests
