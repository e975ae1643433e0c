#include "core/analysis.h"

#include <cmath>

#include "core/decision_json.h"

namespace gpuplacement::core {

using json = nlohmann::json;

Result<Analysis> analyze(const PlacementEngine& engine, const WorkloadIntent& intent,
                         const CurrentSetup& current, double hoursPerMonth) {
  const auto& catalog = engine.catalog();
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
    return Error{"current.accelerators", current.instanceType +
                                             " has no accelerators; use "
                                             "--current-instances"};
  }
  if (!(hoursPerMonth > 0 && hoursPerMonth <= 744)) {
    return Error{"hours", "must be between 1 and 744 hours a month"};
  }
  Analysis analysis;
  analysis.current = current;
  analysis.hoursPerMonth = hoursPerMonth;
  analysis.capacityType = intent.constraints.capacityType == CapacityType::Spot
                              ? CapacityType::Spot
                              : CapacityType::OnDemand;
  const auto* accelerator = catalog.acceleratorOf(*instance);
  analysis.currentAccelerator = accelerator ? accelerator->name : "";
  // Accelerators in use: as given, or every accelerator of N instances.
  const int instances = current.instances > 0 ? current.instances : 0;
  analysis.currentAcceleratorCount = current.accelerators > 0
                                         ? current.accelerators
                                         : instances * std::max(instance->acceleratorCount, 0);
  if (analysis.currentAcceleratorCount == 0 && instances == 0) {
    analysis.currentAcceleratorCount = std::max(instance->acceleratorCount, 0);
  }

  const MemoryEstimate memory = estimateMemory(intent, engine.policy().memoryOverheads);
  std::optional<double> hourly;
  if (instance->acceleratorCount > 0) {
    hourly =
        engine.hourlyCost(instance->type, analysis.currentAcceleratorCount, analysis.capacityType);
    analysis.currentMemoryGiB = analysis.currentAcceleratorCount * accelerator->memoryGiB;
  } else {
    const auto one = engine.hourlyCost(instance->type, 0, analysis.capacityType, 0);
    const auto index = catalog.indexOf(instance->type);
    const auto price = engine.price(index, analysis.capacityType);
    hourly = price ? std::optional<double>(*price * std::max(instances, 1)) : one;
    analysis.currentMemoryGiB = instance->memoryGiB * std::max(instances, 1);
  }
  if (!hourly) {
    return Error{"current.instanceType",
                 current.instanceType + " has no " +
                     (analysis.capacityType == CapacityType::Spot ? "spot" : "on-demand") +
                     " price in the catalog; set one with --policy"};
  }
  analysis.currentHourlyCost = *hourly;
  analysis.currentMonthlyCost = *hourly * hoursPerMonth;
  analysis.currentFits = analysis.currentMemoryGiB + 1e-9 >= memory.requiredGiB;

  WorkloadIntent wanted = intent;
  wanted.replicas = 1;
  analysis.recommended = engine.decide(wanted);
  if (analysis.recommended.placement) {
    auto& placement = *analysis.recommended.placement;
    placement.monthlyCost = placement.hourlyCost * hoursPerMonth;
    placement.totalMonthlyCost = placement.monthlyCost;
    analysis.recommendedMonthlyCost = placement.monthlyCost;
    analysis.monthlySavings = analysis.currentMonthlyCost - analysis.recommendedMonthlyCost;
    analysis.savingsPercent = analysis.currentMonthlyCost > 0
                                  ? analysis.monthlySavings / analysis.currentMonthlyCost * 100
                                  : 0;
  }
  for (const auto& alternative : analysis.recommended.alternatives) {
    if (!alternative.hourlyCost || alternative.instanceType.empty()) {
      continue;
    }
    RankedOption option;
    option.instanceType = alternative.instanceType;
    option.accelerator = alternative.accelerator;
    option.acceleratorCount = alternative.acceleratorCount;
    option.capacityType = alternative.capacityType;
    option.monthlyCost = *alternative.hourlyCost * hoursPerMonth;
    option.savingsPercent =
        analysis.currentMonthlyCost > 0
            ? (analysis.currentMonthlyCost - option.monthlyCost) / analysis.currentMonthlyCost * 100
            : 0;
    option.note = alternative.rejected;
    analysis.alternatives.push_back(std::move(option));
  }
  return analysis;
}

json toJson(const Analysis& analysis, const Scheduling* scheduling) {
  const auto& recommended = analysis.recommended;
  json alternatives = json::array();
  for (const auto& option : analysis.alternatives) {
    alternatives.push_back({{"instanceType", option.instanceType},
                            {"accelerator", option.accelerator},
                            {"acceleratorCount", option.acceleratorCount},
                            {"capacityType", nameOf(option.capacityType)},
                            {"monthlyCost", roundMoney(option.monthlyCost)},
                            {"savingsPercent", std::round(option.savingsPercent * 10) / 10},
                            {"note", option.note}});
  }
  return json{
      {"current",
       {{"instanceType", analysis.current.instanceType},
        {"accelerator",
         analysis.currentAccelerator.empty() ? json(nullptr) : json(analysis.currentAccelerator)},
        {"acceleratorCount", analysis.currentAcceleratorCount},
        {"capacityType", nameOf(analysis.capacityType)},
        {"hourlyCost", roundMoney(analysis.currentHourlyCost)},
        {"monthlyCost", roundMoney(analysis.currentMonthlyCost)},
        {"memoryGiB", roundGiB(analysis.currentMemoryGiB)},
        {"fitsModel", analysis.currentFits}}},
      {"hoursPerMonth", analysis.hoursPerMonth},
      {"memory", toJson(recommended.memory)},
      {"recommended", recommended.placement ? toJson(*recommended.placement) : json(nullptr)},
      {"scheduling", scheduling ? toJson(*scheduling) : json(nullptr)},
      {"rule", recommended.rule},
      {"reason", recommended.reason},
      {"savingsPercent", std::round(analysis.savingsPercent * 10) / 10},
      {"monthlySavings", roundMoney(analysis.monthlySavings)},
      {"alternatives", std::move(alternatives)}};
}

}  // namespace gpuplacement::core
