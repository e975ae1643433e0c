#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/kinds/target_kind.h"

namespace gpuplacement::core {

// A HorizontalPodAutoscaler that scales a target: its maxReplicas bounds
// what the service can carry at a burst.
struct Autoscaler {
  std::string name;
  int minReplicas = 1;
  int maxReplicas = 0;

  bool operator==(const Autoscaler&) const = default;
};

// What the operator keeps of an autoscaling/v2 HorizontalPodAutoscaler:
// the target it scales (none when its scaleTargetRef names a kind the
// operator does not place) and its bounds.
struct AutoscalerView {
  std::optional<TargetKind> targetKind;
  std::string targetName;
  Autoscaler bounds;  // its name, as the object's

  bool operator==(const AutoscalerView&) const = default;
};

// Never fails: what it cannot read it leaves out (no target, bound 0).
AutoscalerView autoscalerFromJson(const nlohmann::json& object);

}  // namespace gpuplacement::core
