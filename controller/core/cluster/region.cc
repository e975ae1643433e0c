#include "core/cluster/region.h"

#include <map>

namespace gpuplacement::core {

ClusterRegion clusterRegionOf(const ClusterState& cluster) {
  ClusterRegion region;
  std::map<std::string, int> counts;  // ordered: ties resolve the same way every time
  for (const auto& node : cluster.nodes) {
    if (!node.node || node.node->region.empty()) {
      ++region.unlabelled;
    } else {
      ++counts[node.node->region];
    }
  }
  std::string most;
  int mostCount = 0;
  for (const auto& [name, count] : counts) {
    if (count > mostCount) {
      most = name;
      mostCount = count;
    }
  }
  if (!cluster.regionFlag.empty()) {
    region.name = cluster.regionFlag;
    region.source = ClusterRegion::Source::Flag;
  } else if (!most.empty()) {
    region.name = most;
    region.source = ClusterRegion::Source::Nodes;
  }
  int otherMost = 0;
  for (const auto& [name, count] : counts) {
    if (name == region.name) {
      region.nodes = count;
      continue;
    }
    region.otherNodes += count;
    if (count > otherMost) {
      otherMost = count;
      region.other = name;
    }
  }
  return region;
}

namespace {

// The messages name no node counts: a node more or less must not rewrite
// every workload's status.
std::string whereFrom(const ClusterRegion& region) {
  return region.source == ClusterRegion::Source::Flag ? "--region"
                                                      : "its nodes' " + std::string(kRegionLabel);
}

// Nodes that name another region than the one taken: said, since an EKS
// cluster runs in one region and such a label is worth a look.
std::string others(const ClusterRegion& region) {
  return region.otherNodes == 0 ? "" : "; some nodes name another region (" + region.other + ")";
}

}  // namespace

PricesForRegion pricesForRegion(const Catalog& catalog, const ClusterRegion& region) {
  if (catalog.region.empty() && catalog.pricesFrom == PricesFrom::Karpenter) {
    return {"True", "ClusterRegion",
            "the costs shown are " + pricesText(catalog) +
                ", in the region Karpenter runs in (its zones name no AWS region)"};
  }
  if (catalog.region.empty()) {
    return {"Unknown", "PricesRegionUnknown",
            "the catalog names no region for its prices: the costs shown may not be what this "
            "cluster pays"};
  }
  if (region.name.empty()) {
    return {"Unknown", "RegionUnknown",
            "no node says its region (" + std::string(kRegionLabel) +
                ") and --region is not set: the costs shown are " + pricesText(catalog) +
                ", which may not be this cluster's"};
  }
  if (region.name != catalog.region) {
    return {"False", "OtherRegion",
            "the cluster runs in " + region.name + " (" + whereFrom(region) +
                "); the costs shown are " + pricesText(catalog) + ", not what it pays there: no " +
                region.name + " prices are loaded" + others(region)};
  }
  return {"True", "ClusterRegion",
          "the cluster runs in " + region.name + " (" + whereFrom(region) +
              "), the region of the costs shown: " + pricesText(catalog) + others(region)};
}

}  // namespace gpuplacement::core
