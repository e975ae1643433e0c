#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/cluster/dra.h"
#include "core/kinds/target.h"
#include "core/plan/template_patch.h"

// The pod-template fields a placement on claims (DRA) sets beside the
// team's own: the pod's spec.resourceClaims entry kPodClaimName, naming the
// ResourceClaimTemplate of the claim, and that entry in the device
// container's resources.claims. Part of planTemplatePatch.
namespace gpuplacement::core {

struct ClaimsPatch {
  // spec.resourceClaims: merged by name (a strategic merge patch).
  std::optional<nlohmann::json> podClaims;
  // The whole resources.claims list of `container`, which a strategic merge
  // patch replaces: the team's entries and ours, or null when none is left.
  std::string container;
  std::optional<nlohmann::json> containerClaims;
};

// `claim` null: ours, if any, goes. Conflicts and what the record will say
// go into `plan`.
ClaimsPatch planClaims(const TargetState& live, const DeviceClaim* claim,
                       const std::string& container, const std::string& workload,
                       const OwnedFields& owned, PatchPlan& plan);

}  // namespace gpuplacement::core
