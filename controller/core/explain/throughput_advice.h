#pragma once

#include <optional>
#include <string>

#include "core/decide/decision.h"
#include "core/intent/workload.h"
#include "core/kinds/autoscaler.h"
#include "core/kinds/target_kind.h"

// Whether a serving target's replicas carry its throughput target, and how
// many would. Replicas stay the team's (or their autoscaler's): the
// operator never writes them, it says what they come to.
namespace gpuplacement::core {

struct ThroughputAdvice {
  double targetTokensPerSecond = 0;
  int replicas = 0;          // what the target may run: spec.replicas, or the autoscaler's maximum
  std::string replicasFrom;  // where `replicas` was read
  double carriesTokensPerSecond = 0;
  int replicasNeeded = 0;
  double hourlyCostNeeded = 0;  // the placement's, at replicasNeeded
  bool enough = true;
  std::string message;

  bool operator==(const ThroughputAdvice&) const = default;
};

// Nullopt when the placement states no replica count for a throughput
// target (none set, or not a serving placement).
std::optional<ThroughputAdvice> adviseThroughput(const Placement& placement,
                                                 const ServingLoad& load, TargetKind kind,
                                                 const std::string& targetName, int replicas,
                                                 const std::optional<Autoscaler>& autoscaler);

}  // namespace gpuplacement::core
