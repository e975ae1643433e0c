#include "core/replacement.h"

#include "base/decimal.h"

namespace gpuplacement::core {
namespace {

bool samePlacement(const Placement& wanted, const AppliedRecord& applied) {
  return wanted.instanceType == applied.instanceType &&
         wanted.acceleratorCount == applied.acceleratorCount &&
         wanted.capacityType == applied.capacityType;
}

// The gain of `wanted` over `current` by the objective's own measure.
double gainPercent(Objective objective, const Placement& wanted, const Assessment& current) {
  switch (objective) {
    case Objective::CostOptimized:
      return current.hourlyCost > 0
                 ? (current.hourlyCost - wanted.hourlyCost) / current.hourlyCost * 100
                 : 0;
    case Objective::Balanced: {
      const double now = current.performance / std::max(current.hourlyCost, 1e-9);
      const double next = wanted.performance / std::max(wanted.hourlyCost, 1e-9);
      return now > 0 ? (next / now - 1) * 100 : 0;
    }
    case Objective::MaxPerformance:
      if (current.performance > 0 && wanted.performance != current.performance) {
        return (wanted.performance / current.performance - 1) * 100;
      }
      return current.hourlyCost > 0
                 ? (current.hourlyCost - wanted.hourlyCost) / current.hourlyCost * 100
                 : 0;
  }
  return 0;
}

}  // namespace

Gate gateReplacement(const GateInput& input) {
  Gate gate;
  if (!input.applied) {
    gate.message = "first placement";
    return gate;
  }
  const auto& wanted = *input.wanted;
  if (samePlacement(wanted, *input.applied)) {
    gate.verdict = GateVerdict::Keep;
    return gate;
  }
  if (input.current) {
    gate.monthlySaving =
        (input.current->hourlyCost - wanted.hourlyCost) * input.hoursPerMonth * input.replicas;
  }
  if (input.specChanged) {
    gate.message = "the workload's spec changed";
    return gate;  // the user asked for something else: no damping
  }
  gate.replacement = true;
  if (!input.current || !input.current->feasible) {
    gate.forced = true;
    gate.message = input.current ? input.current->reason : "the placement in force is unknown";
  } else {
    gate.gainPercent = gainPercent(input.objective, wanted, *input.current);
    const char* measure = input.objective == Objective::CostOptimized ? "cheaper"
                          : input.objective == Objective::Balanced ? "more performance per dollar"
                                                                   : "faster";
    gate.message =
        wanted.instanceType + " is " + base::formatFixed(gate.gainPercent, 1) + "%" + " " + measure;
    if (gate.gainPercent < input.settings.minSavingsPercent) {
      gate.verdict = GateVerdict::Hold;
      gate.message += ", below minSavingsPercent " +
                      base::formatFixed(input.settings.minSavingsPercent, 1) + "%";
      return gate;
    }
    if (input.lastMove) {
      const auto since =
          std::chrono::duration_cast<std::chrono::seconds>(input.now - *input.lastMove);
      if (since < input.settings.cooldown) {
        gate.verdict = GateVerdict::Cooldown;
        gate.wait = input.settings.cooldown - since;
        gate.message += "; the last move was " + std::to_string(since.count()) +
                        " s ago, cooldown is " + std::to_string(input.settings.cooldown.count()) +
                        " s";
        return gate;
      }
    }
  }
  if (!input.rolloutSlotFree) {
    gate.verdict = GateVerdict::WaitForRollout;
    gate.message += "; waiting for one of " + std::to_string(input.settings.maxConcurrentRollouts) +
                    " rollouts in progress to finish";
    return gate;
  }
  return gate;
}

}  // namespace gpuplacement::core
