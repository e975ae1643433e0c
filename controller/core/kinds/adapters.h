#pragma once

#include "core/kinds/kind_adapter.h"

// Each kind's adapter, one file each; core/kinds/kinds.cc puts them in the
// order of TargetKind.
namespace gpuplacement::core::kinds {

const KindAdapter& deploymentAdapter();
const KindAdapter& statefulSetAdapter();
const KindAdapter& jobAdapter();
const KindAdapter& rayClusterAdapter();
const KindAdapter& rayServiceAdapter();
const KindAdapter& leaderWorkerSetAdapter();

// The pod template at spec.template, its pods' labels from spec.selector's
// matchLabels where it has any (the apps kinds and Job).
void readSelectedTemplate(const nlohmann::json& spec, TargetState& state);

}  // namespace gpuplacement::core::kinds
