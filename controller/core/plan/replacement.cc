#include "core/plan/replacement.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/decimal.h"

namespace gpuplacement::core {
namespace {

bool samePlacement(const Placement& wanted, const AppliedRecord& applied) {
  return wanted.instanceType == applied.instanceType &&
         wanted.acceleratorCount == applied.acceleratorCount &&
         wanted.migProfile == applied.migProfile && wanted.timeSlices == applied.timeSlices &&
         wanted.claim == applied.claim && wanted.capacityType == applied.capacityType;
}

// Below this an hourly cost is nothing: devices already paid for.
constexpr double kNothing = 5e-5;

// Performance per dollar the cluster pays more; infinite on devices it
// already pays for.
double valuePerDollar(double performance, double clusterHourly) {
  return clusterHourly <= kNothing ? std::numeric_limits<double>::infinity()
                                   : performance / clusterHourly;
}

// The gain of `wanted` over `current` by the objective's own measure, in
// what the cluster pays more for each (the engine's order). When both use
// devices already paid for, their shares are compared instead.
double gainPercent(Objective objective, const Placement& wanted, const Assessment& current) {
  const bool bothPaidFor =
      wanted.paidByCluster() <= kNothing && current.paidByCluster() <= kNothing;
  const double now = bothPaidFor ? current.hourlyCost : current.paidByCluster();
  const double next = bothPaidFor ? wanted.hourlyCost : wanted.paidByCluster();
  switch (objective) {
    case Objective::CostOptimized:
      return now > 0 ? (now - next) / now * 100 : 0;
    case Objective::Balanced: {
      const double before = bothPaidFor ? current.performance / std::max(now, 1e-9)
                                        : valuePerDollar(current.performance, now);
      const double after = bothPaidFor ? wanted.performance / std::max(next, 1e-9)
                                       : valuePerDollar(wanted.performance, next);
      if (std::isinf(after) || std::isinf(before)) {
        return std::isinf(after) && !std::isinf(before) ? 100 : -100;
      }
      return before > 0 ? (after / before - 1) * 100 : 0;
    }
    case Objective::MaxPerformance:
      if (current.performance > 0 && wanted.performance != current.performance) {
        return (wanted.performance / current.performance - 1) * 100;
      }
      return now > 0 ? (now - next) / now * 100 : 0;
  }
  return 0;
}

// "g6e.xlarge is 12.0% cheaper", or, moving onto devices already paid
// for, what that saves.
std::string gainMessage(Objective objective, const Placement& wanted, const Assessment& current,
                        double gain) {
  if (wanted.paidByCluster() <= kNothing && current.paidByCluster() > kNothing &&
      objective != Objective::MaxPerformance) {
    return wanted.instanceType + " uses idle devices already paid for, " +
           base::formatMoney(current.paidByCluster()) + "/h per replica less for the cluster";
  }
  if (current.paidByCluster() <= kNothing && wanted.paidByCluster() > kNothing &&
      objective != Objective::MaxPerformance) {
    return wanted.instanceType + " would cost the cluster " +
           base::formatMoney(wanted.paidByCluster()) +
           "/h per replica more; where it runs now costs nothing more (the node stays for "
           "other pods)";
  }
  const bool forTheCluster =
      wanted.paidByCluster() != wanted.hourlyCost || current.paidByCluster() != current.hourlyCost;
  const char* measure = objective == Objective::CostOptimized ? "cheaper"
                        : objective == Objective::Balanced    ? "more performance per dollar"
                                                              : "faster";
  return wanted.instanceType + " is " + base::formatFixed(gain, 1) + "% " + measure +
         (forTheCluster && objective != Objective::MaxPerformance ? " for the cluster" : "");
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
    gate.monthlySaving = (input.current->paidByCluster() - wanted.paidByCluster()) *
                         input.hoursPerMonth * input.replicas;
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
    gate.message = gainMessage(input.objective, wanted, *input.current, gate.gainPercent);
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
