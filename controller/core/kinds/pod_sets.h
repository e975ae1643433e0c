#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kinds/target.h"

// Which of a target's pod sets a GpuWorkload places, and one pod set seen
// as a target of its own. The one write that places them all is the
// plan's (core/plan/pod_sets_patch.h).
namespace gpuplacement::core {

// The pod sets a GpuWorkload places, as indexes into target.podSets:
// those `names` names (spec.targetRef.podSets), or the kind's default. An
// error names the first pod set the target does not have.
struct PlacedPodSets {
  std::vector<std::size_t> indexes;
  std::string error;
};
PlacedPodSets placedPodSets(const TargetState& target, const std::vector<std::string>& names);

// The names of the pod sets placed (none when `names` names one the
// target does not have).
std::vector<std::string> placedPodSetNames(const TargetState& target,
                                           const std::vector<std::string>& names);

// The pods the placed pod sets run at once.
std::int32_t placedReplicas(const TargetState& target, const PlacedPodSets& placed);

// The target as one pod set sees it: that pod set's template as the
// target's own (the target itself for a kind of one pod set).
TargetState podSetView(const TargetState& target, std::size_t index);

}  // namespace gpuplacement::core
