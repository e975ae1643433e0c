#include "core/cluster/kueue_flavors.h"

#include <algorithm>

#include "base/json_access.h"

namespace gpuplacement::core {

ResourceFlavorView resourceFlavorFromJson(const nlohmann::json& object) {
  using base::memberOf;
  ResourceFlavorView flavor;
  const auto& spec = memberOf(object, "spec");
  if (const auto& labels = memberOf(spec, "nodeLabels"); labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      flavor.nodeLabels[key] = base::stringOf(value);
    }
  }
  if (const auto& taints = memberOf(spec, "nodeTaints"); taints.is_array()) {
    for (const auto& item : taints) {
      flavor.nodeTaints.push_back({base::stringMember(item, "key"),
                                   base::stringMember(item, "value"),
                                   base::stringMember(item, "effect")});
    }
  }
  if (const auto& tolerations = memberOf(spec, "tolerations"); tolerations.is_array()) {
    for (const auto& item : tolerations) {
      flavor.tolerations.push_back(tolerationFromJson(item));
    }
  }
  return flavor;
}

namespace {

// Every label of `wanted` in `labels`, but where a node runs: the catalog
// offers every type in every zone of its region (as for NodePools).
bool carries(const std::map<std::string, std::string>& wanted,
             const std::map<std::string, std::string>& labels) {
  return std::all_of(wanted.begin(), wanted.end(), [&](const auto& entry) {
    if (entry.first == "topology.kubernetes.io/zone" ||
        entry.first == "topology.kubernetes.io/region") {
      return true;
    }
    const auto found = labels.find(entry.first);
    return found != labels.end() && found->second == entry.second;
  });
}

}  // namespace

FlavorReach flavorReach(const ResourceFlavorView& flavor, const Catalog& catalog,
                        const ClusterState& cluster) {
  FlavorReach reach;
  for (const auto& instance : catalog.instances) {
    for (const auto capacity : {CapacityType::OnDemand, CapacityType::Spot}) {
      const auto labels = karpenterLabels(instance, catalog, capacity);
      bool reached = carries(flavor.nodeLabels, labels);
      for (const auto& [name, pool] : cluster.nodePools) {
        if (reached) {
          break;
        }
        auto launched = labels;
        for (const auto& [key, value] : pool->labels) {
          launched[key] = value;
        }
        launched["karpenter.sh/nodepool"] = name;
        reached = carries(flavor.nodeLabels, launched) && !excludedBy(*pool, labels);
      }
      if (reached) {
        (capacity == CapacityType::Spot ? reach.spot : reach.onDemand).insert(instance.type);
      }
    }
  }
  return reach;
}

}  // namespace gpuplacement::core
