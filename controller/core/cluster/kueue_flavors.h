#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

}  // namespace gpuplacement::core
