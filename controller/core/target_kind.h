#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/enum_names.h"

namespace gpuplacement::core {

// The objects whose pod template the operator places. Adding one (a
// JobSet, a LeaderWorkerSet) is a value here, its reading in
// targetFromJson, its progress in TargetState, and an informer in app/.
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

// "apps/v1" or "batch/v1".
std::string_view apiVersionOf(TargetKind kind);
// The REST resource: "deployments", "statefulsets", "jobs".
std::string_view resourceOf(TargetKind kind);
// The kind of an object named by its kind (exactly as the API spells it).
std::optional<TargetKind> targetKindNamed(std::string_view kind);
// "apps/v1 Deployment, apps/v1 StatefulSet and batch/v1 Job": for messages.
std::string supportedTargets();

// "Deployment llama-chat": a target in messages.
std::string describeTarget(TargetKind kind, const std::string& name);

}  // namespace gpuplacement::core
