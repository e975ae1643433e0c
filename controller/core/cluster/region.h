#pragma once

#include <string>

#include "core/catalog/catalog.h"
#include "core/cluster/capacity.h"

// Which AWS region the cluster runs in, and whether the prices the
// operator shows are that region's: a cost from another region's price list
// is not what the cluster pays, and must say so.
namespace gpuplacement::core {

inline constexpr const char* kRegionLabel = "topology.kubernetes.io/region";

struct ClusterRegion {
  enum class Source { Unknown, Nodes, Flag };
  std::string name;  // empty while unknown
  Source source = Source::Unknown;
  int nodes = 0;       // nodes labelled with `name`
  int otherNodes = 0;  // nodes labelled with another region
  std::string other;   // the most common other region, for the message
  int unlabelled = 0;  // nodes with no region label

  bool operator==(const ClusterRegion&) const = default;
};

// The region most of the nodes name (kRegionLabel); the operator's
// --region (`cluster.regionFlag`) wins over the nodes, and is all there is
// for a cluster whose nodes carry no label. Ties go to the name first in
// order, so the answer never depends on the order the nodes were listed.
ClusterRegion clusterRegionOf(const ClusterState& cluster);

// The PricesForRegion condition: True when the catalog's prices are for the
// cluster's region, False when they are another region's (the costs shown
// are not what this cluster pays), Unknown when either region is unknown.
struct PricesForRegion {
  std::string status;  // True, False, Unknown
  std::string reason;  // ClusterRegion, OtherRegion, RegionUnknown, PricesRegionUnknown
  std::string message;

  bool operator==(const PricesForRegion&) const = default;
};

PricesForRegion pricesForRegion(const Catalog& catalog, const ClusterRegion& region);

}  // namespace gpuplacement::core
