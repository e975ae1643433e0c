#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/enum_names.h"

namespace gpuplacement::core {

// The objects whose pod template the operator places. Adding one (a
// JobSet, a LeaderWorkerSet) is a value here, its row in kTargetKindTraits,
// its reading in targetFromJson and its progress in TargetState
// (docs/architecture.md: Where to add).
enum class TargetKind : std::uint8_t { Deployment, StatefulSet, Job };
inline constexpr std::array kTargetKinds = {TargetKind::Deployment, TargetKind::StatefulSet,
                                            TargetKind::Job};

}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::TargetKind> {
  static constexpr std::string_view what = "target kind";
  static constexpr auto names =
      std::to_array<std::string_view>({"Deployment", "StatefulSet", "Job"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

// What a kind does, as the reconcile needs to know it (Kueue's GenericJob):
// the plan, the record and the rollout slots read these, never the kind.
struct TargetKindTraits {
  std::string_view apiVersion;  // "apps/v1"
  std::string_view resource;    // the REST resource: "deployments"
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
  // Its pods' resources may change only while it is suspended, and only on
  // a server that allows it (KEP-5440, Kubernetes 1.36).
  bool resourcesFixedBefore136 = false;
  // Its pod template cannot gain spec.resourceClaims once created (the API
  // server keeps a suspended Job's template immutable but for scheduling
  // directives and container resources): its devices on DRA nodes are
  // asked for by the DeviceClass's extended resource (core/dra.h).
  bool claimsFixed = false;
};

inline constexpr std::array<TargetKindTraits, kTargetKinds.size()> kTargetKindTraits = {{
    {"apps/v1", "deployments", false, true, false, false, false},
    {"apps/v1", "statefulsets", false, true, false, false, false},
    {"batch/v1", "jobs", true, false, true, true, true},
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
