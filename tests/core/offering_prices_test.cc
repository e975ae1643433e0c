// Karpenter's offering prices: read from its metrics, laid over the
// catalog (the cheapest available zone), an offering it will not launch
// kept out of what NodePools offer, and the condition that says how the
// prices were read.
#include "core/catalog/offering_prices.h"

#include <doctest/doctest.h>

#include "core/cluster/capacity.h"
#include "core/cluster/region.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::offering_prices_tests {
namespace {

// Appended, not concatenated: g++ 12 at -O3 warns falsely on `string + "..."`.
std::string sample(std::string_view metric, const char* type, const char* capacity,
                   const char* zone, const std::string& value) {
  std::string line(metric);
  line.append("{capacity_type=\"").append(capacity).append("\",instance_type=\"").append(type);
  line.append("\",zone=\"").append(zone).append("\"} ").append(value).append("\n");
  return line;
}

std::string price(const char* type, const char* capacity, const char* zone, double value) {
  return sample(kOfferingPriceMetric, type, capacity, zone, std::to_string(value));
}

std::string available(const char* type, const char* capacity, const char* zone, bool yes) {
  return sample(kOfferingAvailableMetric, type, capacity, zone, yes ? "1" : "0");
}

// g4dn.xlarge on demand in two zones, spot in two at different prices (the
// cheaper one unavailable); g5.xlarge unavailable on demand in every zone;
// a reserved offering; and the rest of a metrics page.
const std::string kMetrics =
    "# HELP karpenter_nodes_created_total Number of nodes created\n"
    "karpenter_nodes_created_total{nodepool=\"gpu\"} 3\n" +
    price("g4dn.xlarge", "on-demand", "eu-central-1a", 0.658) +
    price("g4dn.xlarge", "on-demand", "eu-central-1b", 0.658) +
    price("g4dn.xlarge", "spot", "eu-central-1a", 0.21) +
    price("g4dn.xlarge", "spot", "eu-central-1b", 0.25) +
    available("g4dn.xlarge", "spot", "eu-central-1a", false) +
    available("g4dn.xlarge", "spot", "eu-central-1b", true) +
    price("g5.xlarge", "on-demand", "eu-central-1a", 1.258) +
    price("g5.xlarge", "on-demand", "eu-central-1b", 1.258) +
    available("g5.xlarge", "on-demand", "eu-central-1a", false) +
    available("g5.xlarge", "on-demand", "eu-central-1b", false) +
    price("p5.48xlarge", "reserved", "eu-central-1a", 0.00000001);

}  // namespace

TEST_CASE("Karpenter's offerings, read from its metrics page") {
  const auto read = offeringPricesFromMetrics(kMetrics);
  REQUIRE_MESSAGE(read.ok(), read.error().describe());
  CHECK(read->offerings.size() == 6);
  CHECK(read->reserved == 1);
  const auto spot = read->of("g4dn.xlarge", CapacityType::Spot);
  REQUIRE(spot.size() == 2);
  CHECK(spot[0].zone == "eu-central-1a");
  CHECK(spot[0].price == 0.21);
  CHECK_FALSE(spot[0].available);
  CHECK(spot[1].available);
  CHECK(read->of("g4dn.xlarge", CapacityType::OnDemand).size() == 2);
  CHECK(read->of("m5.large", CapacityType::OnDemand).empty());

  struct Row {
    const char* type;
    CapacityType capacity;
    bool unavailable;
  };
  const Row rows[] = {
      {"g5.xlarge", CapacityType::OnDemand, true},     // every zone unavailable
      {"g4dn.xlarge", CapacityType::Spot, false},      // one zone of two
      {"g4dn.xlarge", CapacityType::OnDemand, false},  // no availability published: available
      {"g5.xlarge", CapacityType::Spot, false},        // not published at all: not said
  };
  for (const auto& row : rows) {
    CAPTURE(row.type);
    CHECK(read->unavailable(row.type, row.capacity) == row.unavailable);
  }
}

TEST_CASE("a metrics page without offering prices, or with a broken one, is refused") {
  struct Row {
    std::string text;
    std::string message;
  };
  const Row rows[] = {
      {"karpenter_nodes_created_total 3\n",
       "publish no " + std::string(kOfferingPriceMetric) +
           ": a Karpenter whose provider does not (the kwok one), or one older than v0.36"},
      {std::string(kOfferingPriceMetric) + "{instance_type=\"g5.xlarge\",zone=\"a\"} 1\n",
       std::string(kOfferingPriceMetric) +
           " has a sample without instance_type, capacity_type or zone"},
      {std::string(kOfferingPriceMetric) + "{instance_type=\"g5.xlarge\" 1\n",
       "line 1: " + std::string(kOfferingPriceMetric) +
           ": labels are not separated by commas or closed by }"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto read = offeringPricesFromMetrics(row.text);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().field == "Karpenter's metrics");
    CHECK(read.error().message == row.message);
  }
}

TEST_CASE("the region of a zone") {
  struct Row {
    const char* zone;
    const char* region;
  };
  const Row rows[] = {{"us-east-1a", "us-east-1"},
                      {"eu-central-1c", "eu-central-1"},
                      {"us-gov-west-1b", "us-gov-west-1"},
                      {"us-east-1", ""},
                      {"test-zone-a", ""},
                      {"", ""}};
  for (const auto& row : rows) {
    CAPTURE(row.zone);
    CHECK(regionOfZone(row.zone) == row.region);
  }
}

TEST_CASE("the catalog priced by Karpenter: the cheapest available zone, its region") {
  const auto read = offeringPricesFromMetrics(kMetrics);
  REQUIRE(read.ok());
  const auto& shipped = *testing::shippedCatalog();
  const auto priced = withOfferingPrices(shipped, *read, "2026-12-01T18:20:00Z");
  struct Row {
    const char* type;
    std::optional<double> onDemand;
    std::optional<double> spot;
  };
  const auto* m5 = shipped.find("m5.large");
  REQUIRE(m5);
  const Row rows[] = {
      // Spot: 0.21 is unavailable, so 0.25, what Karpenter would launch.
      {"g4dn.xlarge", 0.658, 0.25},
      // Unavailable everywhere: priced at its cheapest zone, for a node that runs.
      {"g5.xlarge", 1.258, shipped.find("g5.xlarge")->spot},
      // Not published: the catalog's.
      {"m5.large", m5->onDemand, m5->spot},
  };
  for (const auto& row : rows) {
    CAPTURE(row.type);
    const auto* instance = priced.find(row.type);
    REQUIRE(instance);
    CHECK(instance->onDemand == row.onDemand);
    CHECK(instance->spot == row.spot);
  }
  CHECK(priced.region == "eu-central-1");
  CHECK(priced.pricesFrom == PricesFrom::Karpenter);
  CHECK(priced.spotPricesRegion.empty());
  CHECK(pricesText(priced) ==
        "eu-central-1 prices Karpenter pays (its offering prices, read live)");
  CHECK(priced.pricesSource.find(std::to_string(shipped.instances.size() - 2) +
                                 " types Karpenter does not price keep us-east-1 prices of " +
                                 shipped.pricesAsOf) != std::string::npos);
}

TEST_CASE("Karpenter's prices where its zones name no AWS region are still its region's") {
  // Karpenter's kwok provider, or a provider of other zone names.
  const auto read =
      offeringPricesFromMetrics(price("g4dn.xlarge", "on-demand", "test-zone-a", 0.6));
  REQUIRE(read.ok());
  const auto priced = withOfferingPrices(*testing::shippedCatalog(), *read, "2026-12-01T18:20:00Z");
  CHECK(priced.region.empty());  // never the catalog's us-east-1
  CHECK(pricesText(priced) == "prices Karpenter pays (its offering prices, read live)");
  ClusterState cluster;
  cluster.regionFlag = "eu-central-1";
  const auto verdict = pricesForRegion(priced, clusterRegionOf(cluster));
  CHECK(verdict.status == "True");
  CHECK(verdict.reason == "ClusterRegion");
  CHECK(verdict.message ==
        "the costs shown are prices Karpenter pays (its offering prices, read live), in the "
        "region Karpenter runs in (its zones name no AWS region)");
  // With AWS zones, the region is theirs and is checked against the cluster's.
  const auto aws = withOfferingPrices(*testing::shippedCatalog(),
                                      *offeringPricesFromMetrics(kMetrics), "2026-12-01T18:20:00Z");
  CHECK(pricesForRegion(aws, clusterRegionOf(cluster)).reason == "ClusterRegion");
  cluster.regionFlag = "us-west-2";
  CHECK(pricesForRegion(aws, clusterRegionOf(cluster)).reason == "OtherRegion");
}

TEST_CASE("a NodePool launches no offering Karpenter marks unavailable in every zone") {
  const auto& catalog = *testing::shippedCatalog();
  NodePoolView pool;
  pool.requirements = {{"node.kubernetes.io/instance-type", "In", {"g4dn.xlarge", "g5.xlarge"}},
                       {"karpenter.sh/capacity-type", "In", {"on-demand", "spot"}}};
  ClusterState cluster;
  cluster.nodesKnown = true;
  cluster.nodePoolsInstalled = true;
  cluster.nodePools = {{"gpu", &pool}};
  const auto read = offeringPricesFromMetrics(kMetrics);
  REQUIRE(read.ok());
  const Policy policy;
  const auto g5 = catalog.indexOf("g5.xlarge");
  const auto g4dn = catalog.indexOf("g4dn.xlarge");

  const auto without = capacityOf(cluster, catalog, policy, CapacitySource::NodePools);
  CHECK(without.offered(g5, CapacityType::OnDemand));

  cluster.offerings = std::make_shared<const OfferingPrices>(*read);
  const auto with = capacityOf(cluster, catalog, policy, CapacitySource::NodePools);
  CHECK_FALSE(with.offered(g5, CapacityType::OnDemand));
  CHECK(with.offer(g5, CapacityType::OnDemand)->unavailable);
  CHECK(with.offered(g5, CapacityType::Spot));    // not published: Karpenter may launch it
  CHECK(with.offered(g4dn, CapacityType::Spot));  // one zone is enough
  CHECK(with.offered(g4dn, CapacityType::OnDemand));
}

TEST_CASE("the KarpenterPrices condition: current, not read, stale") {
  KarpenterPriceReads reads;
  reads.source = "service karpenter/karpenter:8080";
  reads.interval = "5m0s";
  struct Row {
    const char* what;
    std::string lastRead;
    std::string failingSince;
    bool stale;
    KarpenterPricesCondition expected;
  };
  const std::string proxy = " from service karpenter/karpenter:8080";
  const Row rows[] = {
      {"before the first read",
       "",
       "",
       false,
       {"Unknown", "NotRead",
        "Karpenter's prices are not read yet" + proxy +
            ": the costs shown are the catalog's until they are"}},
      {"never read",
       "",
       "2026-12-01T18:20:00Z",
       false,
       {"Unknown", "NotRead",
        "Karpenter's prices could not be read" + proxy +
            " since 2026-12-01T18:20:00Z (HTTP 503): the costs shown are the catalog's until "
            "they are"}},
      {"read",
       "2026-12-01T18:00:00Z",
       "",
       false,
       {"True", "Current", "the costs shown are Karpenter's prices, read" + proxy + " every 5m0s"}},
      // One failed read is not stale yet: the condition stays.
      {"one failure",
       "2026-12-01T18:00:00Z",
       "2026-12-01T18:20:00Z",
       false,
       {"True", "Current", "the costs shown are Karpenter's prices, read" + proxy + " every 5m0s"}},
      {"stale",
       "2026-12-01T18:00:00Z",
       "2026-12-01T18:20:00Z",
       true,
       {"False", "Stale",
        "Karpenter's prices could not be read" + proxy +
            " since 2026-12-01T18:20:00Z (HTTP 503): the costs shown are its prices as last read "
            "at "
            "2026-12-01T18:00:00Z, which may have changed since"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    reads.lastRead = row.lastRead;
    reads.failingSince = row.failingSince;
    reads.error = row.failingSince.empty() ? "" : "HTTP 503";
    reads.stale = row.stale;
    CHECK(karpenterPricesCondition(reads) == row.expected);
  }
}

}  // namespace gpuplacement::core::offering_prices_tests
