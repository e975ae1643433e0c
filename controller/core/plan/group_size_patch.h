#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds/target.h"

// The size of a target's groups, written in the same JSON patch as the
// placement where the GpuWorkload's spec.scaling.groupSize is Set, and put
// back when the placement goes.
namespace gpuplacement::core {

struct GroupSizePatch {
  nlohmann::json ops = nlohmann::json::array();  // JSON patch operations (RFC 6902)
  // The object's fields they write ("spec.leaderWorkerTemplate.size"), to
  // name what was put back when someone took it.
  std::vector<std::string> fields;
  std::optional<OwnedGroupSize> owned;  // the ownership record's, after the ops
};

// `wanted`: the size the placement needs. 0: none of the operator's, so a
// size it wrote goes back to the team's while the object still holds it,
// and is left, and forgotten, once someone changed it. A bound the kind
// clamps the size to (a Ray worker group's minReplicas, maxReplicas) is
// moved to the size only where it would clamp it, and put back with it.
GroupSizePatch planGroupSize(const TargetState& live, std::int32_t wanted);

}  // namespace gpuplacement::core
