#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/decide/engine.h"
#include "core/decide/render.h"

namespace gpuplacement::core {

// What a team runs today: an instance type and either how many of its
// accelerators they use or how many whole instances.
struct CurrentSetup {
  std::string instanceType;
  int accelerators = 0;
  int instances = 0;
  // What the setup costs an hour, when the team knows better than the
  // catalog (a Capacity Block, a negotiated rate) or the catalog has no price.
  std::optional<double> hourlyCost;
};

struct RankedOption {
  std::string instanceType;
  std::string accelerator;
  int acceleratorCount = 0;
  CapacityType capacityType = CapacityType::OnDemand;
  double monthlyCost = 0;
  double savingsPercent = 0;
  std::string note;
};

// The migration analysis of seed 004's analyzer, done right: precision is
// honoured, accelerators are counted with a ceiling, and costs come from the
// same catalog and policy as every placement.
struct Analysis {
  CurrentSetup current;
  std::string currentAccelerator;
  int currentAcceleratorCount = 0;
  CapacityType capacityType = CapacityType::OnDemand;
  double hoursPerMonth = 0;
  bool currentPriced = false;  // false: no catalog price and none given; no savings then
  double currentHourlyCost = 0;
  double currentMonthlyCost = 0;
  std::string currentCostNote;  // how the current cost was worked out
  double currentMemoryGiB = 0;
  bool currentFits = false;
  std::string currentProblem;  // why the current setup cannot run the model, when it cannot
  Decision recommended;
  double recommendedMonthlyCost = 0;
  double savingsPercent = 0;
  double monthlySavings = 0;
  std::vector<RankedOption> alternatives;
};

// Errors name the flag-like field ("current.instanceType") at fault.
Result<Analysis> analyze(const PlacementEngine& engine, const WorkloadIntent& intent,
                         const CurrentSetup& current, double hoursPerMonth);

nlohmann::json toJson(const Analysis& analysis, const Scheduling* scheduling);

}  // namespace gpuplacement::core
