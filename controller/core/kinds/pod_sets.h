#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/target.h"
#include "core/template_patch.h"

// Placing a target pod set by pod set: which of them a GpuWorkload
// places, and the one write that places them all.
namespace gpuplacement::core {

// The pod sets a GpuWorkload places, as indexes into target.podSets:
// those `names` names (spec.targetRef.podSets), or the kind's default. An
// error names the first pod set the target does not have.
struct PlacedPodSets {
  std::vector<std::size_t> indexes;
  std::string error;
};
PlacedPodSets placedPodSets(const TargetState& target, const std::vector<std::string>& names);

// The pods the placed pod sets run at once.
std::int32_t placedReplicas(const TargetState& target, const PlacedPodSets& placed);

// For a target of several pod sets, each placed one with its pods priced
// at `hourlyCostPerReplica` (status.podSets); empty for a kind of one.
std::vector<PodSetCost> podSetCosts(const TargetState& target,
                                    const std::vector<std::string>& names,
                                    double hourlyCostPerReplica);

// The target as one pod set sees it: that pod set's template as the
// target's own (the target itself for a kind of one pod set).
TargetState podSetView(const TargetState& target, std::size_t index);

// What to send to make the placed pod sets carry request.desired and the
// others nothing of ours. A kind written by strategic merge has one pod
// set, and this is planTemplatePatch's plan. A kind written by JSON patch
// gets a JSON patch: each pod set's template before and after the same
// template patch, a resourceVersion precondition and the ownership record;
// a conflict or an error in any pod set plans nothing at all.
PatchPlan planPodSetsPatch(const TargetState& live, const PatchRequest& request);

}  // namespace gpuplacement::core
