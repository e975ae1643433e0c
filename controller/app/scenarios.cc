#include "app/scenarios.h"

#include "app/cli.h"
#include "app/price_basis.h"
#include "app/table.h"
#include "app/workload_flags.h"
#include "base/decimal.h"
#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "base/json_reader.h"
#include "core/decide/render.h"
#include "core/explain/decision_json.h"

namespace gpuplacement::app {
namespace {

using base::Error;
using base::Result;
using json = nlohmann::json;

}  // namespace

namespace {

Result<core::CurrentSetup> parseCurrentSetup(const base::ObjectReader& entry) {
  const auto current = entry.child("current");
  if (auto ok = current.requireObject(); !ok) {
    return ok.error();
  }
  auto type = current.string("instanceType");
  auto accelerators = current.optionalInteger("accelerators", 1, 4096);
  auto instances = current.optionalInteger("instances", 1, 100000);
  for (const Error* error :
       {type ? nullptr : &type.error(), accelerators ? nullptr : &accelerators.error(),
        instances ? nullptr : &instances.error()}) {
    if (error) {
      return *error;
    }
  }
  core::CurrentSetup setup;
  setup.instanceType = *type;
  setup.accelerators = static_cast<int>(accelerators->value_or(0));
  setup.instances = static_cast<int>(instances->value_or(0));
  return setup;
}

// A scenario's workload, as the flags recommend would take.
Result<WorkloadFlags> parseScenarioWorkload(const base::ObjectReader& entry) {
  const auto workload = entry.child("workload");
  if (auto ok = workload.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = workload.onlyKeys({"kind", "parameters", "precision", "framework", "architecture",
                                   "latencyTargetMs", "objective"});
      !ok) {
    return ok.error();
  }
  WorkloadFlags flags;
  flags.objective = "CostOptimized";
  for (auto [key, target] :
       {std::pair{"kind", &flags.kind}, std::pair{"parameters", &flags.parameters},
        std::pair{"precision", &flags.precision}, std::pair{"framework", &flags.framework},
        std::pair{"architecture", &flags.architecture}, std::pair{"objective", &flags.objective}}) {
    auto value = workload.optionalString(key);
    if (!value) {
      return value.error();
    }
    if (*value) {
      *target = **value;
    }
  }
  auto latency = workload.optionalNumber("latencyTargetMs", 0.001, 3.6e6);
  auto spot = entry.optionalBool("spot");
  for (const Error* error :
       {latency ? nullptr : &latency.error(), spot ? nullptr : &spot.error()}) {
    if (error) {
      return *error;
    }
  }
  flags.latencyMs = *latency;
  flags.capacity = spot->value_or(false) ? "Spot" : "OnDemand";
  return flags;
}

Result<Scenario> parseScenario(const base::ObjectReader& entry, const core::Catalog& catalog,
                               double defaultHours) {
  if (auto ok = entry.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = entry.onlyKeys(
          {"id", "description", "current", "workload", "hoursPerMonth", "spot", "expected"});
      !ok) {
    return ok.error();
  }
  Scenario scenario;
  auto id = entry.string("id");
  auto description = entry.optionalString("description");
  auto expected = entry.optionalString("expected");
  auto hours = entry.optionalNumber("hoursPerMonth", 1, 744);
  auto current = parseCurrentSetup(entry);
  auto flags = parseScenarioWorkload(entry);
  for (const Error* error :
       {id ? nullptr : &id.error(), description ? nullptr : &description.error(),
        expected ? nullptr : &expected.error(), hours ? nullptr : &hours.error(),
        current ? nullptr : &current.error(), flags ? nullptr : &flags.error()}) {
    if (error) {
      return *error;
    }
  }
  auto intent = flags->toIntent(catalog);
  if (!intent) {
    // Flag names become the file's field names.
    std::string field = intent.error().field;
    if (field.rfind("--", 0) == 0) {
      field = "workload." + field.substr(2);
    }
    return Error{entry.path() + " (" + *id + "): " + field, intent.error().message};
  }
  scenario.id = *id;
  scenario.description = description->value_or("");
  scenario.expected = expected->value_or("");
  scenario.current = std::move(current).value();
  scenario.intent = std::move(intent).value();
  scenario.hoursPerMonth = hours->value_or(defaultHours);
  return scenario;
}

}  // namespace

Result<std::vector<Scenario>> scenariosFromFile(const std::string& path,
                                                const core::Catalog& catalog, double defaultHours) {
  auto text = base::readTextFile(path);
  if (!text) {
    return Error{"--scenarios", text.error().field + ": " + text.error().message};
  }
  auto document = base::parseYaml(*text, path);
  if (!document) {
    return document.error();
  }
  if (!document->is_object() || !document->contains("scenarios") ||
      !(*document)["scenarios"].is_array()) {
    return Error{path + ": scenarios", "required: a list of scenarios"};
  }
  std::vector<Scenario> scenarios;
  const auto& list = (*document)["scenarios"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    base::ObjectReader entry(list[i], path + ": scenarios[" + std::to_string(i) + "]");
    auto scenario = parseScenario(entry, catalog, defaultHours);
    if (!scenario) {
      return scenario.error();
    }
    scenarios.push_back(std::move(scenario).value());
  }
  return scenarios;
}

base::Status applyOverrides(const ScenarioOverrides& overrides, const core::Catalog& catalog,
                            std::vector<Scenario>& scenarios) {
  std::vector<core::Tier> tiers;
  for (const auto& tier : overrides.tiers) {
    auto parsed = enumFlag<core::Tier>("--tiers", tier);
    if (!parsed) {
      return parsed.error();
    }
    tiers.push_back(*parsed);
  }
  std::optional<core::Objective> objective;
  if (overrides.objective) {
    auto parsed = enumFlag<core::Objective>("--objective", *overrides.objective);
    if (!parsed) {
      return parsed.error();
    }
    objective = *parsed;
  }
  if (overrides.maxHourlyCost && !(*overrides.maxHourlyCost > 0)) {
    return Error{"--max-hourly-cost", "must be a positive amount in USD per replica-hour"};
  }
  if (overrides.hoursPerMonth &&
      !(*overrides.hoursPerMonth >= 1 && *overrides.hoursPerMonth <= 744)) {
    return Error{"--hours", "must be between 1 and 744 hours a month"};
  }
  for (auto& scenario : scenarios) {
    auto& constraints = scenario.intent.constraints;
    if (!tiers.empty()) {
      constraints.tiers = tiers;
    }
    scenario.intent.objective = objective.value_or(scenario.intent.objective);
    constraints.maxHourlyCost =
        overrides.maxHourlyCost ? overrides.maxHourlyCost : constraints.maxHourlyCost;
    scenario.hoursPerMonth = overrides.hoursPerMonth.value_or(scenario.hoursPerMonth);
    if (overrides.spot) {
      constraints.capacityType = core::CapacityType::Spot;
    }
    if (!overrides.instanceTypes.empty()) {
      constraints.instanceTypes = overrides.instanceTypes;
    }
    if (!overrides.excludedInstanceTypes.empty()) {
      constraints.excludedInstanceTypes = overrides.excludedInstanceTypes;
    }
    if (auto ok = core::validateIntent(scenario.intent, catalog); !ok) {
      return Error{scenario.id + ": " + ok.error().field, ok.error().message};
    }
  }
  return base::Ok{};
}

int runScenarios(const core::PlacementEngine& engine, const std::vector<Scenario>& scenarios,
                 OutputFormat format, std::ostream& out, std::ostream& err) {
  Table table({"SCENARIO", "CURRENT", "$/MONTH", "RECOMMENDED", "$/MONTH", "SAVINGS", "EXPECTED"});
  json results = json::array();
  bool allPlaced = true;
  for (const auto& scenario : scenarios) {
    auto analysis =
        core::analyze(engine, scenario.intent, scenario.current, scenario.hoursPerMonth);
    if (!analysis) {
      err << "error: " << scenario.id << ": " << analysis.error().describe() << "\n";
      return kExitBadInput;
    }
    const auto& placement = analysis->recommended.placement;
    allPlaced = allPlaced && placement.has_value();
    if (format != OutputFormat::Table) {
      std::optional<core::Scheduling> scheduling;
      if (placement) {
        scheduling = core::renderScheduling(*placement, engine.catalog(), engine.policy());
      }
      json result = core::toJson(*analysis, scheduling ? &*scheduling : nullptr);
      result["id"] = scenario.id;
      result["description"] = scenario.description;
      result["expected"] = scenario.expected;
      result["prices"] = priceBasisJson(engine);
      results.push_back(std::move(result));
      continue;
    }
    table.add(
        {scenario.id,
         shapeOf(analysis->currentAccelerator, analysis->currentAcceleratorCount) + " " +
             scenario.current.instanceType,
         analysis->currentPriced ? base::formatMoney(analysis->currentMonthlyCost) : "unknown",
         placement ? shapeOf(placement->accelerator, placement->acceleratorCount) + " " +
                         placement->instanceType + " " + capacityText(placement->capacityType)
                   : "none: " + analysis->recommended.cannotPlace,
         placement ? base::formatMoney(placement->monthlyCost) : "-",
         placement && analysis->currentPriced ? base::formatFixed(analysis->savingsPercent, 1) + "%"
                                              : "-",
         scenario.expected});
  }
  if (format == OutputFormat::Table) {
    table.print(out);
    printPriceBasis(engine, out);
  } else {
    printJsonOrYaml(results, format, out);
  }
  return allPlaced ? kExitOk : kExitCannotPlace;
}

}  // namespace gpuplacement::app
