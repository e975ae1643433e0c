#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/cluster/capacity.h"
#include "core/cluster/cluster.h"
#include "core/kinds/toleration.h"

// Kueue's ResourceFlavor (kueue.x-k8s.io/v1beta2): the nodes a flavor's
// quota stands for. At admission Kueue merges its nodeLabels into the pod
// template's nodeSelector and its tolerations into the template's; a key
// the template already sets to another value fails the Workload
// (FailedToStart), so a placement within a flavor must agree with them.
namespace gpuplacement::core {

struct ResourceFlavorView {
  std::map<std::string, std::string> nodeLabels;
  std::vector<Taint> nodeTaints;
  std::vector<Toleration> tolerations;

  bool operator==(const ResourceFlavorView&) const = default;
};

ResourceFlavorView resourceFlavorFromJson(const nlohmann::json& object);

// The instance types, on demand and spot, whose nodes carry every node
// label of a flavor: the labels Karpenter gives a node of the type
// (karpenterLabels), with those of a NodePool that may launch it (its
// template's labels and karpenter.sh/nodepool, its name). The decision
// for a Workload Kueue reserved the flavor for is made among these.
struct FlavorReach {
  std::set<std::string> onDemand;
  std::set<std::string> spot;

  bool empty() const { return onDemand.empty() && spot.empty(); }
  bool operator==(const FlavorReach&) const = default;
};

FlavorReach flavorReach(const ResourceFlavorView& flavor, const Catalog& catalog,
                        const ClusterState& cluster);

}  // namespace gpuplacement::core
