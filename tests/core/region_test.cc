// Which region the cluster runs in (its nodes' topology.kubernetes.io/region
// or --region), and whether the prices shown are that region's.
#include "core/cluster/region.h"

#include <deque>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/catalog/region_name.h"
#include "core/cluster/cluster.h"

namespace gpuplacement::core::region_tests {
namespace {

// A cluster whose nodes carry these region labels ("" for none).
struct Nodes {
  std::deque<NodeView> views;  // stable addresses for ClusterState
  ClusterState state;

  Nodes(const std::vector<std::string>& regions, std::string flag = "") {
    state.nodesKnown = true;
    state.regionFlag = std::move(flag);
    for (const auto& region : regions) {
      NodeView view;
      view.region = region;
      views.push_back(view);
      ClusterState::Node node;
      node.name = "node-" + std::to_string(views.size());
      node.node = &views.back();
      state.nodes.push_back(node);
    }
  }
};

Catalog catalogIn(std::string region, std::string asOf = "2026-02-09") {
  Catalog catalog;
  catalog.region = std::move(region);
  catalog.pricesAsOf = std::move(asOf);
  return catalog;
}

TEST_CASE("the cluster's region: what most nodes say, or --region") {
  using Source = ClusterRegion::Source;
  struct Row {
    const char* what;
    std::vector<std::string> labels;
    std::string flag;
    ClusterRegion want;
  };
  const std::vector<Row> rows = {
      {"no node", {}, "", {"", Source::Unknown, 0, 0, "", 0}},
      {"no node says", {"", ""}, "", {"", Source::Unknown, 0, 0, "", 2}},
      {"every node says",
       {"eu-central-1", "eu-central-1"},
       "",
       {"eu-central-1", Source::Nodes, 2, 0, "", 0}},
      {"some say, some do not",
       {"eu-central-1", ""},
       "",
       {"eu-central-1", Source::Nodes, 1, 0, "", 1}},
      {"most win; the others are counted",
       {"us-west-2", "eu-central-1", "eu-central-1", "ap-south-1", "us-west-2", "us-west-2"},
       "",
       {"us-west-2", Source::Nodes, 3, 3, "eu-central-1", 0}},
      {"a tie goes to the first name in order, whatever the listing order",
       {"us-west-2", "eu-central-1"},
       "",
       {"eu-central-1", Source::Nodes, 1, 1, "us-west-2", 0}},
      {"--region for a cluster whose nodes do not say",
       {"", ""},
       "eu-west-1",
       {"eu-west-1", Source::Flag, 0, 0, "", 2}},
      {"--region wins over the nodes, which are counted against it",
       {"us-east-1", "us-east-1"},
       "eu-west-1",
       {"eu-west-1", Source::Flag, 0, 2, "us-east-1", 0}},
      {"--region with no node", {}, "eu-west-1", {"eu-west-1", Source::Flag, 0, 0, "", 0}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const Nodes nodes(row.labels, row.flag);
    CHECK(clusterRegionOf(nodes.state) == row.want);
  }
}

TEST_CASE("a node's region is its topology.kubernetes.io/region label") {
  const auto node = nodeFromJson(
      {{"metadata", {{"labels", {{"topology.kubernetes.io/region", "eu-central-1"}}}}}});
  CHECK(node.region == "eu-central-1");
  CHECK(nodeFromJson({{"metadata", {{"name", "bare"}}}}).region.empty());
}

TEST_CASE("region names: two letters, words, a number") {
  for (const char* good : {"us-east-1", "eu-central-1", "us-gov-west-1", "ap-southeast-2",
                           "cn-north-1", "il-central-1"}) {
    CAPTURE(good);
    CHECK(isRegionName(good));
  }
  for (const char* bad : {"", "us-east", "useast1", "US-EAST-1", "us-east-1a", "u-east-1", "us--1",
                          "us-east-", "-east-1", "us-east-1 ", "us_east_1"}) {
    CAPTURE(bad);
    CHECK_FALSE(isRegionName(bad));
  }
}

TEST_CASE("the prices shown are the cluster's region's, another region's, or not known to be") {
  struct Row {
    const char* what;
    std::string catalogRegion;
    std::vector<std::string> labels;
    std::string flag;
    std::string status;
    std::string reason;
    std::vector<std::string> says;  // in the message
  };
  const std::vector<Row> rows = {
      {"the nodes' region is the catalog's",
       "us-east-1",
       {"us-east-1", "us-east-1"},
       "",
       "True",
       "ClusterRegion",
       {"us-east-1 prices of 2026-02-09 (the catalog's)",
        "its nodes' topology.kubernetes.io/region"}},
      {"the nodes are in another region",
       "us-east-1",
       {"eu-central-1"},
       "",
       "False",
       "OtherRegion",
       {"runs in eu-central-1", "us-east-1 prices of 2026-02-09",
        "no eu-central-1 prices are loaded"}},
      {"--region names another region",
       "us-east-1",
       {},
       "ap-south-1",
       "False",
       "OtherRegion",
       {"runs in ap-south-1 (--region)"}},
      {"nodes in two regions: the message says so",
       "us-east-1",
       {"us-east-1", "us-east-1", "us-west-2"},
       "",
       "True",
       "ClusterRegion",
       {"some nodes name another region (us-west-2)"}},
      {"no node says and no --region",
       "us-east-1",
       {""},
       "",
       "Unknown",
       "RegionUnknown",
       {"--region is not set", "us-east-1 prices", "may not be this cluster's"}},
      {"the catalog names no region",
       "",
       {"us-east-1"},
       "",
       "Unknown",
       "PricesRegionUnknown",
       {"names no region"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.what);
    const Nodes nodes(row.labels, row.flag);
    const auto verdict =
        pricesForRegion(catalogIn(row.catalogRegion), clusterRegionOf(nodes.state));
    CHECK(verdict.status == row.status);
    CHECK(verdict.reason == row.reason);
    for (const auto& part : row.says) {
      CAPTURE(verdict.message);
      CHECK(verdict.message.find(part) != std::string::npos);
    }
  }
}

TEST_CASE("the message names no node count: a node more does not rewrite the status") {
  const Nodes two({"eu-central-1", "eu-central-1"});
  const Nodes three({"eu-central-1", "eu-central-1", "eu-central-1", "us-east-1"});
  const Nodes four({"eu-central-1", "eu-central-1", "eu-central-1", "us-east-1", "us-east-1"});
  CHECK(pricesForRegion(catalogIn("us-east-1"), clusterRegionOf(three.state)) ==
        pricesForRegion(catalogIn("us-east-1"), clusterRegionOf(four.state)));
  CHECK(pricesForRegion(catalogIn("us-east-1"), clusterRegionOf(two.state)).reason ==
        "OtherRegion");
}

}  // namespace
}  // namespace gpuplacement::core::region_tests
