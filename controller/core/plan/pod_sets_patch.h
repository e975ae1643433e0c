#pragma once

#include "core/kinds/target.h"
#include "core/plan/template_patch.h"

// The one write that places a target's pod sets (core/kinds/pod_sets.h
// says which they are).
namespace gpuplacement::core {

// What to send to make the placed pod sets carry request.desired and the
// others nothing of ours. A kind written by strategic merge has one pod
// set, and this is planTemplatePatch's plan. A kind written by JSON patch
// gets a JSON patch: each pod set's template before and after the same
// template patch, a resourceVersion precondition and the ownership record;
// a conflict or an error in any pod set plans nothing at all.
PatchPlan planPodSetsPatch(const TargetState& live, const PatchRequest& request);

}  // namespace gpuplacement::core
