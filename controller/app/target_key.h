#pragma once

#include <functional>
#include <string>

#include "core/kinds/target_kind.h"
#include "runtime/object_key.h"

namespace gpuplacement::app {

// One target across kinds (a Deployment, a StatefulSet or a Job of a
// namespace): what the indexes, the write expectations and the rollout
// slots are keyed by. Two kinds may share a name in a namespace, so the
// kind is part of the key.
struct TargetKey {
  core::TargetKind kind = core::TargetKind::Deployment;
  runtime::ObjectKey object;

  bool operator==(const TargetKey&) const = default;

  // "Job ml/train": for logs and messages only, never read back.
  std::string str() const { return std::string(base::nameOf(kind)) + " " + object.str(); }
};

}  // namespace gpuplacement::app

template <>
struct std::hash<gpuplacement::app::TargetKey> {
  std::size_t operator()(const gpuplacement::app::TargetKey& key) const noexcept {
    return std::hash<gpuplacement::runtime::ObjectKey>{}(key.object) * 31 +
           static_cast<std::size_t>(key.kind);
  }
};
