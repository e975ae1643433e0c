#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "core/decide/engine.h"
#include "core/intent/policy.h"
#include "core/plan/status.h"

namespace gpuplacement::core {

// Whether the placement a decision asks for should replace the one in
// force now. Moves caused by the user's own change of intent happen at
// once; moves caused by prices or rules are damped: a minimum gain
// (hysteresis), a cooldown per workload, and a limit on rollouts at once.
enum class GateVerdict {
  Apply,           // write the new placement now
  Keep,            // the one in force is the one wanted
  Hold,            // better, but not by enough (hysteresis)
  Cooldown,        // better, but the last move was too recent
  WaitForRollout,  // better, but maxConcurrentRollouts are in progress
};

struct GateInput {
  const Placement* wanted = nullptr;       // the decision's placement
  const AppliedRecord* applied = nullptr;  // what is in force, if anything
  const Assessment* current = nullptr;     // `applied` under today's engine
  bool specChanged = false;                // applied for an older generation
  Objective objective = Objective::Balanced;
  ReplacementSettings settings;
  std::optional<Timestamp> lastMove;  // when the placement in force was applied
  Timestamp now;
  bool rolloutSlotFree = true;
  double hoursPerMonth = 730;
  int replicas = 1;
};

struct Gate {
  GateVerdict verdict = GateVerdict::Apply;
  bool replacement = false;  // a damped move (prices or rules), not a new intent
  bool forced = false;       // the placement in force is no longer possible
  double gainPercent = 0;    // by the objective's measure
  double monthlySaving = 0;  // USD for all replicas; negative if dearer
  std::chrono::seconds wait{0};
  std::string message;
};

Gate gateReplacement(const GateInput& input);

}  // namespace gpuplacement::core
