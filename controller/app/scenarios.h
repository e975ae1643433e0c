#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/command_output.h"
#include "base/result.h"
#include "core/decide/engine.h"
#include "core/explain/analysis.h"
#include "core/intent/workload.h"

namespace gpuplacement::app {

// One what-if of `analyze --scenarios FILE` (config/examples/*.yaml).
struct Scenario {
  std::string id;
  std::string description;
  std::string expected;
  core::CurrentSetup current;
  core::WorkloadIntent intent;
  double hoursPerMonth = 0;
};

base::Result<std::vector<Scenario>> scenariosFromFile(const std::string& path,
                                                      const core::Catalog& catalog,
                                                      double defaultHours);

// Command-line flags that apply to every scenario of a file: the
// constraints, the objective, the hours and spot pricing. (Flags that
// describe a model or a current setup cannot: each scenario names its own.)
struct ScenarioOverrides {
  std::vector<std::string> tiers;
  std::optional<std::string> objective;
  std::optional<double> maxHourlyCost;
  std::optional<double> hoursPerMonth;
  bool spot = false;
  std::vector<std::string> instanceTypes;
  std::vector<std::string> excludedInstanceTypes;
};

// Errors name the flag.
base::Status applyOverrides(const ScenarioOverrides& overrides, const core::Catalog& catalog,
                            std::vector<Scenario>& scenarios);

// The process exit code (0 placed, 1 cannot place, 2 bad input).
int runScenarios(const core::PlacementEngine& engine, const std::vector<Scenario>& scenarios,
                 OutputFormat format, std::ostream& out, std::ostream& err);

}  // namespace gpuplacement::app
