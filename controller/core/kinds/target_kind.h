#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/enum_names.h"

namespace gpuplacement::core {

// The objects whose pod sets the operator places. Adding one is a value
// here, its row in kTargetKindTraits and its adapter in core/kinds/
// (docs/architecture.md: Where to add).
enum class TargetKind : std::uint8_t {
  Deployment,
  StatefulSet,
  Job,
  RayCluster,
  RayService,
  LeaderWorkerSet,
  JobSet,
  RayJob,
  TrainJob
};
inline constexpr std::array kTargetKinds = {
    TargetKind::Deployment, TargetKind::StatefulSet, TargetKind::Job,
    TargetKind::RayCluster, TargetKind::RayService,  TargetKind::LeaderWorkerSet,
    TargetKind::JobSet,     TargetKind::RayJob,      TargetKind::TrainJob};

}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::TargetKind> {
  static constexpr std::string_view what = "target kind";
  static constexpr auto names = std::to_array<std::string_view>(
      {"Deployment", "StatefulSet", "Job", "RayCluster", "RayService", "LeaderWorkerSet", "JobSet",
       "RayJob", "TrainJob"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

// What a kind does, as the reconcile needs to know it (Kueue's GenericJob):
// the plan, the record and the rollout slots read these, never the kind.
// How a kind's object is written: a strategic merge patch (built-in
// kinds), or a JSON patch (RFC 6902) made against the templates as read,
// for custom resources, which refuse a strategic merge patch and replace
// lists whole under a JSON merge patch.
enum class WriteMethod : std::uint8_t { StrategicMerge, JsonPatch };

// When its pods' resources (device counts, memory) may be written.
enum class ResourcesWritable : std::uint8_t {
  Always,
  // Only while it is suspended, and only on a server that allows it
  // (KEP-5440, Kubernetes 1.36).
  From136,
  // Never after it is created (its controller's webhook refuses them).
  Never,
};

struct TargetKindTraits {
  std::string_view apiVersion;  // "apps/v1"
  std::string_view resource;    // the REST resource: "deployments"
  // A custom resource's CustomResourceDefinition ("rayclusters.ray.io"),
  // which the cluster may not have; empty for a built-in kind.
  std::string_view crd;
  WriteMethod write = WriteMethod::StrategicMerge;
  // Where it is suspended (a JSON pointer: "/spec/suspend"), for a kind
  // that can wait suspended, its pods not yet made; empty for the others.
  std::string_view suspendPointer;
  // Runs its pod template to an end, once: placed before it starts, held
  // on that placement once it has, its run recorded and priced when it
  // ends; one recreated under the name is a new run.
  bool runsOnce = false;
  // A new template rolls out over running pods: a move takes one of the
  // policy's rollout slots until it is rolled out.
  bool rollsOut = true;
  // Waits suspended for its placement: the patch that places it resumes it
  // (unless another controller queues it).
  bool resumedByPlacement = false;
  ResourcesWritable resources = ResourcesWritable::Always;
  // Its pod template cannot gain spec.resourceClaims once created (the API
  // server keeps a suspended Job's template immutable but for scheduling
  // directives and container resources): its devices on DRA nodes are
  // asked for by the DeviceClass's extended resource (core/cluster/dra.h).
  bool claimsFixed = false;
  // The label its controller puts on each pod naming the template's
  // revision, by which a spread over capacity types counts only this
  // rollout's pods (matchLabelKeys); empty: none used.
  std::string_view podRevisionLabel = "";
  // Resumed by a write of its own, after the one that places it: its
  // controller's webhook refuses a change of the placed fields in the write
  // that resumes it (a TrainJob's podSpecOverrides change only while the
  // object written stays suspended).
  bool resumedApart = false;
  // Where the team sets its pods' resources, when that is not the pod
  // template (a TrainJob's spec.trainer.resourcesPerNode); for messages.
  std::string_view resourcesField = "";
};

using enum WriteMethod;
using enum ResourcesWritable;
// In the order of TargetKind.
inline constexpr std::array<TargetKindTraits, kTargetKinds.size()> kTargetKindTraits = {{
    {"apps/v1", "deployments", "", StrategicMerge, "", false, true, false, Always, false,
     "pod-template-hash"},
    {"apps/v1", "statefulsets", "", StrategicMerge, "", false, true, false, Always, false},
    {"batch/v1", "jobs", "", StrategicMerge, "/spec/suspend", true, false, true, From136, true},
    // KubeRay makes no pod of a suspended RayCluster, and deletes them all
    // when one is suspended; it leaves running pods as they are when a
    // template changes, so a RayCluster is placed while it waits suspended.
    {"ray.io/v1", "rayclusters", "rayclusters.ray.io", JsonPatch, "/spec/suspend", false, true,
     true, Always, false},
    {"ray.io/v1", "rayservices", "rayservices.ray.io", JsonPatch, "", false, true, false, Always,
     false},
    {"leaderworkerset.x-k8s.io/v1", "leaderworkersets", "leaderworkersets.leaderworkerset.x-k8s.io",
     JsonPatch, "", false, true, false, Always, false},
    // Its webhook lets a suspended JobSet's templates change only their
    // labels, annotations, nodeSelector, tolerations and schedulingGates.
    {"jobset.x-k8s.io/v1alpha2", "jobsets", "jobsets.jobset.x-k8s.io", JsonPatch, "/spec/suspend",
     true, false, true, Never, true},
    // KubeRay makes the RayCluster from spec.rayClusterSpec, and the
    // submitter Job, only when it is resumed, and takes no later change of
    // that spec: placed while it waits suspended, its resources with it
    // (no webhook of KubeRay's checks more than its name).
    {"ray.io/v1", "rayjobs", "rayjobs.ray.io", JsonPatch, "/spec/suspend", true, false, true,
     Always, false},
    // Kubeflow Trainer v2 runs it as a JobSet of its own name, made from
    // its runtime's template and its spec.podSpecOverrides (nodeSelector,
    // tolerations) and spec.trainer (numNodes, resourcesPerNode): the
    // JobSet's webhook keeps the resources as created, and the Trainer's
    // lets podSpecOverrides change only in a write that leaves it
    // suspended, so the placing write and the resuming one are two.
    {"trainer.kubeflow.org/v1alpha1", "trainjobs", "trainjobs.trainer.kubeflow.org", JsonPatch,
     "/spec/suspend", true, false, true, Never, true, "", true, "spec.trainer.resourcesPerNode"},
}};

inline const TargetKindTraits& traitsOf(TargetKind kind) {
  return kTargetKindTraits[static_cast<std::size_t>(kind)];
}

// "apps/v1" or "batch/v1".
inline std::string_view apiVersionOf(TargetKind kind) {
  return traitsOf(kind).apiVersion;
}
// The REST resource: "deployments", "statefulsets", "jobs".
inline std::string_view resourceOf(TargetKind kind) {
  return traitsOf(kind).resource;
}
// The kind of an object named by its kind (exactly as the API spells it).
std::optional<TargetKind> targetKindNamed(std::string_view kind);
// "apps/v1 Deployment, apps/v1 StatefulSet and batch/v1 Job": for messages.
std::string supportedTargets();

// "Deployment llama-chat": a target in messages.
std::string describeTarget(TargetKind kind, const std::string& name);

}  // namespace gpuplacement::core
