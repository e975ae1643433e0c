#include "core/cluster/kueue_flavors.h"

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

}  // namespace gpuplacement::core
