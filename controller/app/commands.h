#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/placement_config.h"
#include "base/result.h"
#include "core/analysis.h"
#include "core/workload.h"

namespace gpuplacement::app {

enum class OutputFormat { Table, Json, Yaml, Markdown };
base::Result<OutputFormat> parseOutputFormat(const std::string& text);

// The workload as flags; values as in the CRD, case-insensitive.
struct WorkloadFlags {
  std::string kind;
  std::string parameters;
  std::string precision = "fp16";
  std::string framework = "PyTorch";
  std::string architecture = "Transformer";
  std::optional<double> latencyMs;
  std::string objective = "Balanced";
  std::vector<std::string> tiers;
  std::optional<double> maxHourlyCost;
  std::string capacity = "OnDemand";
  int replicas = 1;
  std::vector<std::string> instanceTypes;
  std::vector<std::string> excludedInstanceTypes;

  // Errors name the flag: "--objective: \"fast\" is not a valid objective ...".
  base::Result<core::WorkloadIntent> toIntent(const core::Catalog& catalog) const;
};

struct NamedIntent {
  std::string name;  // namespace/name from a manifest; empty for flags
  core::WorkloadIntent intent;
  std::string rationale;  // the manifest's gpuplacement.io/rationale annotation, if any
};

// Manifest annotations the command line reads (the operator ignores them):
// replicas for a what-if (over the target's, when the file holds it), and a
// line on why the answer is right, printed by -o markdown (docs/decisions.md).
inline constexpr const char* kReplicasAnnotation = "gpuplacement.io/replicas";
inline constexpr const char* kRationaleAnnotation = "gpuplacement.io/rationale";

// GpuWorkload manifests from a file (several documents allowed). Where the
// file also holds a GpuWorkload's target (a Deployment, StatefulSet or Job
// of that name and namespace), its replicas (a Job's parallelism) and its
// pod template's own cpu and memory requests count, as the operator counts
// them; other documents (Services, ConfigMaps) are not read. Errors name
// the document and the field.
// Replicas: a GpuWorkload's gpuplacement.io/replicas annotation, else
// `replicas` (--replicas, when given), else its target's, else 1.
base::Result<std::vector<NamedIntent>> intentsFromManifests(const std::string& path,
                                                            const core::Catalog& catalog,
                                                            std::optional<int> replicas);

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

// Each returns the process exit code (0 placed, 1 cannot place, 2 bad input).
int runRecommend(const core::PlacementEngine& engine, const std::vector<NamedIntent>& intents,
                 OutputFormat format, std::ostream& out);
int runAnalyze(const core::PlacementEngine& engine, const core::WorkloadIntent& intent,
               const core::CurrentSetup& current, double hours, OutputFormat format,
               std::ostream& out, std::ostream& err);
int runScenarios(const core::PlacementEngine& engine, const std::vector<Scenario>& scenarios,
                 OutputFormat format, std::ostream& out, std::ostream& err);
int runCatalog(const core::PlacementEngine& engine, std::optional<core::Tier> tier,
               OutputFormat format, std::ostream& out);

}  // namespace gpuplacement::app
