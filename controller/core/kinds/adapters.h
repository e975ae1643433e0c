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
const KindAdapter& rayJobAdapter();
const KindAdapter& trainJobAdapter();

// The one pod set "main" of the apps kinds and Job, of `replicas` pods: the
// pod template at spec.template, its pods' labels from spec.selector's
// matchLabels where it has any.
void readMainPodSet(const nlohmann::json& spec, std::int32_t replicas, TargetState& state);

// The pod sets of a KubeRay RayCluster spec found at `pointer` (a
// RayCluster's /spec, a RayService's /spec/rayClusterConfig, a RayJob's
// /spec/rayClusterSpec): the head group, placed only when there are no
// worker groups, and each worker group by its groupName (core/kinds/ray.cc).
void readRayClusterSpec(const nlohmann::json& clusterSpec, const std::string& pointer,
                        TargetState& state);

}  // namespace gpuplacement::core::kinds
