#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/caches.h"
#include "core/cluster/capacity.h"
#include "core/kinds/autoscaler.h"
#include "core/plan/workload_plan.h"

namespace gpuplacement::app {

// What a GpuWorkload's reconcile reads around its target, beyond one
// lookup: the objects an index of ObjectCaches finds, made into what the
// plan reads.

// The pods (pendingPodsByTarget) the scheduler cannot place: how many, and
// the reason of the one waiting longest.
core::PendingPods pendingPodsOf(const PodCache& pods, const std::vector<std::string>& keys);

// The pods (boundPodsByTarget) bound to nodes, with the node's type and
// what they request there.
std::vector<core::OwnPod> boundPodsOf(const PodCache& pods, const NodeCache& nodes,
                                      const std::vector<std::string>& keys);

// Of the HorizontalPodAutoscalers that scale one target
// (autoscalersByTarget), the one in force: the first by name where several
// do, as the HPA controller refuses them all; nullopt when none does or
// they cannot be read.
std::optional<core::Autoscaler> autoscalerOf(const AutoscalerCache& autoscalers,
                                             const std::vector<std::string>& keys);

// The key a target's pods are filed under (pendingPodsByTarget,
// boundPodsByTarget): its own, or for a RayJob the RayCluster KubeRay made
// for its run (status.rayClusterName), whose pods name only that cluster,
// and for a TrainJob the JobSet the Trainer made under its name.
TargetKey podsKeyOf(const TargetKey& target, const core::TargetState& state);

// The RayJob whose run the pods of `podsOwner` are, when it is a RayCluster
// KubeRay made for one (named "<rayjob>-xxxxx" and the RayJob's
// status.rayClusterName), or the TrainJob, when it is a JobSet of a
// TrainJob's name; nullopt otherwise.
std::optional<TargetKey> runOfPods(const ObjectCaches& caches, const TargetKey& podsOwner);

// The targets of every kind (in its namespace) whose ownership record names
// the GpuWorkload "ns/name".
std::vector<core::TargetRef> targetsOwnedBy(const ObjectCaches& caches,
                                            const std::string& workloadKey);

// Why targets of this kind cannot be read (their informer refused or not
// synced); empty when they can.
std::string targetsUnreadable(const TargetCache& targets, core::TargetKind kind);

}  // namespace gpuplacement::app
