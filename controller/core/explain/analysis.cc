#include "core/explain/analysis.h"

#include <cmath>

#include "base/decimal.h"
#include "core/explain/decision_json.h"
#include "core/explain/explainer.h"

namespace gpuplacement::core {

using json = nlohmann::json;

namespace {

Status checkSetup(const Catalog& catalog, const CurrentSetup& current, double hoursPerMonth) {
  const auto* instance = catalog.find(current.instanceType);
  if (!instance) {
    return Error{"current.instanceType",
                 "\"" + current.instanceType + "\" is not an instance type of the catalog"};
  }
  if (current.accelerators < 0 || current.instances < 0 ||
      (current.accelerators > 0 && current.instances > 0)) {
    return Error{"current.accelerators",
                 "give either a number of accelerators or a number of instances"};
  }
  if (instance->acceleratorCount == 0 && current.accelerators > 0) {
    return Error{"current.accelerators",
                 current.instanceType + " has no accelerators; use --current-instances"};
  }
  if (current.accelerators > instance->acceleratorCount && instance->acceleratorCount > 0) {
    return Error{"current.accelerators", current.instanceType + " has " +
                                             std::to_string(instance->acceleratorCount) +
                                             " accelerators; use --current-instances for more"};
  }
  if (current.hourlyCost && !(*current.hourlyCost > 0)) {
    return Error{"current.hourlyCost", "must be a positive amount in USD an hour"};
  }
  if (!(hoursPerMonth > 0 && hoursPerMonth <= 744)) {
    return Error{"hours", "must be between 1 and 744 hours a month"};
  }
  return Ok{};
}

// What runs today: its accelerators, memory, and what it costs an hour.
void describeCurrent(const PlacementEngine& engine, const WorkloadIntent& intent,
                     const CurrentSetup& current, Analysis& analysis) {
  const auto& catalog = engine.catalog();
  const int index = catalog.indexOf(current.instanceType);
  const auto& instance = catalog.instances[index];
  const auto* accelerator = catalog.acceleratorOf(instance);
  analysis.currentAccelerator = accelerator ? accelerator->name : "";
  const int instances = std::max(current.instances, current.accelerators > 0 ? 0 : 1);
  analysis.currentAcceleratorCount =
      current.accelerators > 0 ? current.accelerators : instances * instance.acceleratorCount;
  const auto memory = estimateMemory(intent, engine.policy().memoryOverheads);
  const double fill = engine.policy().memoryFillLimit;
  analysis.currentMemoryGiB = accelerator
                                  ? analysis.currentAcceleratorCount * accelerator->memoryGiB
                                  : instances * instance.allocatableMemoryGiB;
  if (accelerator && !accelerator->precisions.has(intent.precision)) {
    analysis.currentProblem =
        accelerator->name + " does not run " + std::string(nameOf(intent.precision)) + " natively";
  } else if (analysis.currentMemoryGiB * fill + 1e-9 < memory.requiredGiB) {
    analysis.currentProblem = "holds " + base::formatGiB(analysis.currentMemoryGiB * fill) +
                              " GiB within the fill limit; the model needs " +
                              base::formatGiB(memory.requiredGiB);
  }
  analysis.currentFits = analysis.currentProblem.empty();

  if (current.hourlyCost) {
    analysis.currentPriced = true;
    analysis.currentHourlyCost = *current.hourlyCost;
    analysis.currentCostNote = "as given (--current-hourly-cost)";
    return;
  }
  const auto nodeHourly = engine.price(index, analysis.capacityType);
  if (!nodeHourly) {
    analysis.currentCostNote =
        current.instanceType + " has no " +
        (analysis.capacityType == CapacityType::Spot ? "spot" : "on-demand") +
        " price in the catalog; give --current-hourly-cost";
    return;
  }
  analysis.currentPriced = true;
  if (current.accelerators > 0) {
    // One replica on `accelerators` devices, priced as the cost model prices it.
    WorkloadIntent one = intent;
    one.replicas = 1;
    const auto assessment =
        assess(engine, one, current.instanceType, current.accelerators, {}, analysis.capacityType);
    analysis.currentHourlyCost = assessment.placement ? assessment.placement->hourlyCost : 0;
    analysis.currentCostNote = assessment.placement ? assessment.placement->costNote : "";
    return;
  }
  analysis.currentHourlyCost = *nodeHourly * instances;
  analysis.currentCostNote = std::to_string(instances) + " whole " + current.instanceType + " at " +
                             base::formatMoney(*nodeHourly) + "/h";
}

}  // namespace

Result<Analysis> analyze(const PlacementEngine& engine, const WorkloadIntent& intent,
                         const CurrentSetup& current, double hoursPerMonth) {
  if (auto ok = checkSetup(engine.catalog(), current, hoursPerMonth); !ok) {
    return ok.error();
  }
  Analysis analysis;
  analysis.current = current;
  analysis.hoursPerMonth = hoursPerMonth;
  analysis.capacityType = intent.constraints.capacityType == CapacityType::Spot
                              ? CapacityType::Spot
                              : CapacityType::OnDemand;
  describeCurrent(engine, intent, current, analysis);
  analysis.currentMonthlyCost = analysis.currentHourlyCost * hoursPerMonth;

  WorkloadIntent wanted = intent;
  wanted.replicas = 1;
  analysis.recommended = decide(engine, wanted);
  const auto savingsOf = [&](double monthly) {
    return analysis.currentPriced && analysis.currentMonthlyCost > 0
               ? (analysis.currentMonthlyCost - monthly) / analysis.currentMonthlyCost * 100
               : 0;
  };
  if (analysis.recommended.placement) {
    auto& placement = *analysis.recommended.placement;
    placement.monthlyCost = placement.hourlyCost * hoursPerMonth;
    placement.totalMonthlyCost = placement.monthlyCost;
    analysis.recommendedMonthlyCost = placement.monthlyCost;
    analysis.monthlySavings =
        analysis.currentPriced ? analysis.currentMonthlyCost - analysis.recommendedMonthlyCost : 0;
    analysis.savingsPercent = savingsOf(analysis.recommendedMonthlyCost);
  }
  for (const auto& alternative : analysis.recommended.alternatives) {
    if (!alternative.hourlyCost || alternative.instanceType.empty()) {
      continue;
    }
    const double monthly = *alternative.hourlyCost * hoursPerMonth;
    analysis.alternatives.push_back(RankedOption{
        alternative.instanceType, alternative.accelerator, alternative.acceleratorCount,
        alternative.capacityType, monthly, savingsOf(monthly), alternative.rejected});
  }
  return analysis;
}

json toJson(const Analysis& analysis, const Scheduling* scheduling) {
  const auto& recommended = analysis.recommended;
  json alternatives = json::array();
  for (const auto& option : analysis.alternatives) {
    alternatives.push_back(
        {{"instanceType", option.instanceType},
         {"accelerator", option.accelerator},
         {"acceleratorCount", option.acceleratorCount},
         {"capacityType", nameOf(option.capacityType)},
         {"monthlyCost", roundMoney(option.monthlyCost)},
         {"savingsPercent", analysis.currentPriced
                                ? json(std::round(option.savingsPercent * 10) / 10)
                                : json(nullptr)},
         {"note", option.note}});
  }
  return json{
      {"current",
       {{"instanceType", analysis.current.instanceType},
        {"accelerator",
         analysis.currentAccelerator.empty() ? json(nullptr) : json(analysis.currentAccelerator)},
        {"acceleratorCount", analysis.currentAcceleratorCount},
        {"capacityType", nameOf(analysis.capacityType)},
        {"hourlyCost",
         analysis.currentPriced ? json(roundMoney(analysis.currentHourlyCost)) : json(nullptr)},
        {"monthlyCost",
         analysis.currentPriced ? json(roundMoney(analysis.currentMonthlyCost)) : json(nullptr)},
        {"costNote", analysis.currentCostNote},
        {"memoryGiB", roundGiB(analysis.currentMemoryGiB)},
        {"fitsModel", analysis.currentFits},
        {"problem", analysis.currentProblem}}},
      {"hoursPerMonth", analysis.hoursPerMonth},
      {"memory", toJson(recommended.memory)},
      {"recommended", recommended.placement
                          ? placementToJson(*recommended.placement, PlacementView::WhatIf)
                          : json(nullptr)},
      {"scheduling", scheduling ? toJson(*scheduling) : json(nullptr)},
      {"rule", recommended.rule},
      {"reason", recommended.reason},
      {"savingsPercent", analysis.currentPriced && recommended.placement
                             ? json(std::round(analysis.savingsPercent * 10) / 10)
                             : json(nullptr)},
      {"monthlySavings", analysis.currentPriced && recommended.placement
                             ? json(roundMoney(analysis.monthlySavings))
                             : json(nullptr)},
      {"alternatives", std::move(alternatives)}};
}

}  // namespace gpuplacement::core
