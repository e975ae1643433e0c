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
const KindAdapter& jobSetAdapter();

// The one pod set "main" of the apps kinds and Job, of `replicas` pods: the
// pod template at spec.template, its pods' labels from spec.selector's
// matchLabels where it has any.
void readMainPodSet(const nlohmann::json& spec, std::int32_t replicas, TargetState& state);

}  // namespace gpuplacement::core::kinds
