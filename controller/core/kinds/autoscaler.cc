#include "core/kinds/autoscaler.h"

#include <algorithm>
#include <limits>

#include "base/json_access.h"

namespace gpuplacement::core {

namespace {

int replicasOf(const nlohmann::json& value, int fallback) {
  if (!value.is_number_integer()) {
    return fallback;
  }
  return static_cast<int>(
      std::clamp<std::int64_t>(value.get<std::int64_t>(), 0, std::numeric_limits<int>::max()));
}

}  // namespace

AutoscalerView autoscalerFromJson(const nlohmann::json& object) {
  using base::memberOf;
  using base::stringMember;
  AutoscalerView view;
  view.bounds.name = stringMember(memberOf(object, "metadata"), "name");
  const auto& spec = memberOf(object, "spec");
  const auto& ref = memberOf(spec, "scaleTargetRef");
  const auto kind = targetKindNamed(stringMember(ref, "kind"));
  const std::string apiVersion = stringMember(ref, "apiVersion");
  // A scaleTargetRef names its group too: "Deployment" of another group is
  // not the apps/v1 one (Jobs have no scale subresource).
  if (kind && !traitsOf(*kind).runsOnce && apiVersion.starts_with("apps/")) {
    view.targetKind = kind;
    view.targetName = stringMember(ref, "name");
  }
  view.bounds.minReplicas = replicasOf(memberOf(spec, "minReplicas"), 1);
  view.bounds.maxReplicas = replicasOf(memberOf(spec, "maxReplicas"), 0);
  return view;
}

}  // namespace gpuplacement::core
