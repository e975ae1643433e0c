#include "app/commands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <unordered_map>

#include "app/cli.h"
#include "app/price_basis.h"
#include "app/table.h"
#include "app/target_key.h"
#include "base/decimal.h"
#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "base/json_reader.h"
#include "core/decision_json.h"
#include "core/explainer.h"
#include "core/quantity.h"
#include "core/render.h"
#include "core/target.h"

namespace gpuplacement::app {
namespace {

using base::Error;
using base::Ok;
using base::parseYaml;
using base::parseYamlDocuments;
using base::readTextFile;
using base::Result;
using base::toYaml;
using json = nlohmann::json;

template <typename E>
Result<E> enumFlag(const std::string& flag, const std::string& value) {
  auto parsed = core::parseEnum<E>(value);
  if (!parsed) {
    return Error{flag, parsed.error().message};
  }
  return parsed;
}

std::string shapeOf(const std::string& accelerator, int count) {
  return accelerator.empty() ? "CPU" : std::to_string(count) + "x " + accelerator;
}

std::string capacityText(core::CapacityType capacity) {
  return capacity == core::CapacityType::Spot    ? "spot"
         : capacity == core::CapacityType::Mixed ? "half spot, half on-demand"
                                                 : "on-demand";
}

std::string describeIntent(const core::WorkloadIntent& intent) {
  std::string text = std::string(core::nameOf(intent.kind)) + ", " +
                     core::formatParameterCount(intent.parameters) + " " +
                     std::string(core::nameOf(intent.precision)) + ", " +
                     std::string(core::nameOf(intent.architecture)) + "/" +
                     std::string(core::nameOf(intent.framework)) + ", " +
                     std::string(core::nameOf(intent.objective));
  if (intent.latencyTargetMs) {
    text += ", latency < " + base::formatFixed(*intent.latencyTargetMs, 0) + " ms";
  }
  return text;
}

void printScheduling(const core::Scheduling& scheduling, std::ostream& out) {
  std::string selector;
  for (const auto& [key, value] : scheduling.nodeSelector) {
    selector += (selector.empty() ? "" : ", ") + key + "=" + value;
  }
  out << "SCHEDULING   nodeSelector " << selector << "\n";
  for (const auto& toleration : scheduling.tolerations) {
    out << "             toleration " << toleration.key << " " << toleration.op
        << (toleration.value.empty() ? "" : " " + toleration.value) << " " << toleration.effect
        << "\n";
  }
  for (const auto& [name, value] : scheduling.resources) {
    out << "             resources " << name << "=" << value << " (requests = limits)\n";
  }
  for (const auto& [name, value] : scheduling.requestsOnly) {
    out << "             resources " << name << "=" << value << " (request, no limit)\n";
  }
}

void printPlacement(const core::Placement& placement, double hoursPerMonth, std::ostream& out) {
  out << "PLACEMENT    " << placement.instanceType << ": "
      << shapeOf(placement.accelerator, placement.acceleratorCount) << " ("
      << core::nameOf(placement.tier) << ")";
  if (placement.acceleratorsPerInstance > 0) {
    out << " of " << placement.acceleratorsPerInstance << " per node";
  }
  out << ", " << capacityText(placement.capacityType) << "\n";
  out << "MEMORY USE   " << base::formatGiB(placement.requiredMemoryGiB) << " of "
      << base::formatGiB(placement.availableMemoryGiB) << " GiB ("
      << base::formatPercent(placement.requiredMemoryGiB /
                             std::max(placement.availableMemoryGiB, 1e-9))
      << " full; the fill limit is " << base::formatPercent(placement.memoryFillLimit) << ")\n";
  out << "COST         " << base::formatMoney(placement.hourlyCost) << "/h, "
      << base::formatMoney(placement.monthlyCost) << "/month per replica ("
      << base::formatFixed(hoursPerMonth, 0) << " h); " << placement.replicas << " replica"
      << (placement.replicas == 1 ? "" : "s") << ": "
      << base::formatMoney(placement.totalMonthlyCost) << "/month\n";
  out << "NODE         " << placement.costNote << " (" << core::nameOf(placement.costModel)
      << ")\n";
  if (placement.latencyMs) {
    out << "LATENCY      at least " << base::formatFixed(*placement.latencyMs, 1) << " ms per "
        << core::latencyUnitName(placement.latencyUnit)
        << (placement.latencyComputeBound
                ? " (compute-bound: its FLOPs at 40% of the devices' dense peak)\n"
                : " (memory-bound: every weight read once at the devices' peak bandwidth)\n");
  }
  if (placement.memoryRequestGiB > 0 && placement.tier != core::Tier::CPU) {
    out << "HOST MEMORY  " << base::formatGiB(placement.memoryRequestGiB)
        << " GiB per replica (the runtime and one checkpoint shard to load through), "
           "counted against the node's allocatable\n";
  }
}

void printAlternatives(const std::vector<core::Alternative>& alternatives, std::ostream& out) {
  if (alternatives.empty()) {
    return;
  }
  out << "\n";
  Table table({"ALTERNATIVE", "ACCELERATORS", "CAPACITY", "$/HOUR", "WHY NOT"});
  for (const auto& alternative : alternatives) {
    if (alternative.instanceType.empty()) {
      table.add({"(" + std::string(core::nameOf(alternative.tier)) + ")", "-", "-", "-",
                 alternative.rejected});
      continue;
    }
    table.add({alternative.instanceType,
               shapeOf(alternative.accelerator, alternative.acceleratorCount),
               capacityText(alternative.capacityType),
               alternative.hourlyCost ? base::formatMoney(*alternative.hourlyCost) : "-",
               alternative.rejected});
  }
  table.print(out);
}

void printDecision(const std::string& name, const core::WorkloadIntent& intent,
                   const core::Decision& decision, const core::Scheduling* scheduling,
                   double hoursPerMonth, std::ostream& out) {
  const auto& memory = decision.memory;
  if (!name.empty()) {
    out << "WORKLOAD     " << name << "\n";
  }
  out << "INTENT       " << describeIntent(intent) << " (size " << decision.sizeBucket << ")\n";
  out << "MEMORY       " << core::formatParameterCount(memory.parameters) << " x "
      << base::formatFixed(memory.bytesPerParameter, memory.bytesPerParameter < 1 ? 1 : 0)
      << " B x " << base::formatFixed(memory.overhead, 2)
      << " overhead = " << base::formatGiB(memory.requiredGiB) << " GiB needed (weights "
      << base::formatGiB(memory.weightsGiB) << " GiB)\n";
  if (!decision.placement) {
    out << "PLACEMENT    none: " << decision.cannotPlace << "\n";
  } else {
    printPlacement(*decision.placement, hoursPerMonth, out);
  }
  out << "RULE         " << (decision.rule.empty() ? "-" : decision.rule)
      << (decision.ruleSource.empty() ? "" : " (" + decision.ruleSource + ")") << "\n";
  out << "REASON       " << decision.reason << "\n";
  if (scheduling) {
    printScheduling(*scheduling, out);
  }
  printAlternatives(decision.alternatives, out);
}

// One decision as a row of docs/decisions.md.
std::vector<std::string> markdownRow(const std::string& name, const core::WorkloadIntent& intent,
                                     const core::Decision& decision, const std::string& rationale) {
  std::string what = describeIntent(intent);
  if (intent.replicas > 1) {
    what += ", " + std::to_string(intent.replicas) + " replicas";
  }
  if (intent.constraints.capacityType != core::CapacityType::OnDemand) {
    what += ", " + std::string(core::nameOf(intent.constraints.capacityType));
  }
  for (auto tier : intent.constraints.tiers) {
    what += ", only " + std::string(core::nameOf(tier));
  }
  if (!decision.placement) {
    return {name, what, "**none**: " + decision.cannotPlace, "-", "-", "-", rationale};
  }
  const auto& placement = *decision.placement;
  std::string answer = "`" + placement.instanceType + "`, " +
                       shapeOf(placement.accelerator, placement.acceleratorCount) + ", " +
                       capacityText(placement.capacityType) + "; " +
                       base::formatGiB(placement.requiredMemoryGiB) + " of " +
                       base::formatGiB(placement.availableMemoryGiB) + " GiB";
  if (placement.latencyMs) {
    answer += "; >= " + base::formatFixed(*placement.latencyMs, 1) + " ms/" +
              core::latencyUnitName(placement.latencyUnit) +
              (placement.latencyComputeBound ? " (compute)" : "");
  }
  if (decision.latencyTargetUnreachable) {
    answer += " (**LatencyTargetUnreachable**)";
  }
  return {name,
          what,
          answer,
          base::formatMoney(placement.hourlyCost),
          base::formatMoney(placement.totalMonthlyCost),
          placement.costNote,
          rationale};
}

// Where every table of prices ends: their region, date and overrides.
void printPriceBasis(const core::PlacementEngine& engine, std::ostream& out) {
  out << "\nPRICES       " << priceBasisText(engine) << "\n";
}

void printJsonOrYaml(const json& value, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::Yaml) {
    out << toYaml(value);
  } else {
    out << value.dump(2) << "\n";
  }
}

}  // namespace

Result<OutputFormat> parseOutputFormat(const std::string& text) {
  if (text == "table" || text == "wide") {
    return OutputFormat::Table;
  }
  if (text == "json") {
    return OutputFormat::Json;
  }
  if (text == "yaml") {
    return OutputFormat::Yaml;
  }
  if (text == "markdown") {
    return OutputFormat::Markdown;
  }
  return Error{"-o",
               "\"" + text + "\" is not an output format (use table, json, yaml or markdown)"};
}

namespace {

// Names the flag, not the CRD field the validator speaks of.
Error withFlagName(const Error& error) {
  for (auto [field, flag] :
       {std::pair{"spec.constraints.instanceTypes", "--instance-types"},
        std::pair{"spec.constraints.excludedInstanceTypes", "--exclude-instance-types"}}) {
    if (error.field.rfind(field, 0) == 0) {
      return Error{flag, error.message};
    }
  }
  return error;
}

}  // namespace

Result<core::WorkloadIntent> WorkloadFlags::toIntent(const core::Catalog& catalog) const {
  core::WorkloadIntent intent;
  if (kind.empty()) {
    return Error{"--kind", "required (use " + core::allowedValues<core::WorkloadKind>() + ")"};
  }
  if (parameters.empty()) {
    return Error{"--params", "required (e.g. 7B, 1.3B, 350M, 7e9)"};
  }
  auto parsedKind = enumFlag<core::WorkloadKind>("--kind", kind);
  if (!parsedKind) {
    return parsedKind.error();
  }
  intent.kind = *parsedKind;
  auto count = core::parseParameterCount(parameters);
  if (!count) {
    return Error{"--params", count.error().message};
  }
  intent.parameters = *count;
  auto parsedPrecision = enumFlag<core::Precision>("--precision", precision);
  auto parsedFramework = enumFlag<core::Framework>("--framework", framework);
  auto parsedArchitecture = enumFlag<core::Architecture>("--architecture", architecture);
  auto parsedObjective = enumFlag<core::Objective>("--objective", objective);
  auto parsedCapacity = enumFlag<core::CapacityType>("--capacity", capacity);
  for (const Error* error : {parsedPrecision ? nullptr : &parsedPrecision.error(),
                             parsedFramework ? nullptr : &parsedFramework.error(),
                             parsedArchitecture ? nullptr : &parsedArchitecture.error(),
                             parsedObjective ? nullptr : &parsedObjective.error(),
                             parsedCapacity ? nullptr : &parsedCapacity.error()}) {
    if (error) {
      return *error;
    }
  }
  intent.precision = *parsedPrecision;
  intent.framework = *parsedFramework;
  intent.architecture = *parsedArchitecture;
  intent.objective = *parsedObjective;
  intent.constraints.capacityType = *parsedCapacity;
  if (latencyMs && !(*latencyMs > 0)) {
    return Error{"--latency-ms", "must be a positive number of milliseconds"};
  }
  intent.latencyTargetMs = latencyMs;
  if (maxHourlyCost && !(*maxHourlyCost > 0)) {
    return Error{"--max-hourly-cost", "must be a positive amount in USD per replica-hour"};
  }
  intent.constraints.maxHourlyCost = maxHourlyCost;
  for (const auto& tier : tiers) {
    auto parsed = enumFlag<core::Tier>("--tiers", tier);
    if (!parsed) {
      return parsed.error();
    }
    intent.constraints.tiers.push_back(*parsed);
  }
  intent.constraints.instanceTypes = instanceTypes;
  intent.constraints.excludedInstanceTypes = excludedInstanceTypes;
  if (replicas < 1) {
    return Error{"--replicas", "must be at least 1 (a target scaled to zero needs no placement)"};
  }
  intent.replicas = replicas;
  if (auto ok = core::validateIntent(intent, catalog); !ok) {
    return withFlagName(ok.error());
  }
  return intent;
}

namespace {

// A manifest's object: its namespace (empty when the manifest names none)
// and name.
runtime::ObjectKey manifestKey(const json& document) {
  const auto& metadata = base::memberOf(document, "metadata");
  return {base::stringMember(metadata, "namespace"), base::stringMember(metadata, "name")};
}

// The targets a manifest file holds next to its GpuWorkloads: what the
// operator would read from the cluster.
using ManifestTargets = std::unordered_map<TargetKey, core::TargetState>;

// A GpuWorkload document as the operator would place it: with its
// target's replicas and pod requests when the file holds the target.
Result<NamedIntent> intentOfManifest(const json& document, const std::string& where,
                                     const core::Catalog& catalog, std::optional<int> replicas,
                                     const ManifestTargets& targets) {
  if (base::stringMember(document, "apiVersion") != "gpuplacement.io/v1alpha1") {
    return Error{where + ": apiVersion", "expected gpuplacement.io/v1alpha1"};
  }
  const auto key = manifestKey(document);
  const std::string name = key.str();
  const auto spec = document.find("spec");
  if (spec == document.end()) {
    return Error{where + " (" + name + "): spec", "required"};
  }
  auto parsed = core::parseGpuWorkloadSpec(*spec, catalog);
  if (!parsed) {
    return Error{where + " (" + name + "): " + parsed.error().field, parsed.error().message};
  }
  // As the operator would read it: the target's replicas, surge and pod
  // requests when the file holds the target; --replicas over them.
  const auto& ref = parsed->targetRef;
  const auto target = targets.find({ref.kind, {key.ns, ref.name}});
  auto intent = core::intentOf(*parsed, target == targets.end() ? nullptr : &target->second);
  if (replicas) {
    intent.replicas = *replicas;
  }
  const auto& annotations = base::memberOf(base::memberOf(document, "metadata"), "annotations");
  if (const auto given = base::stringMember(annotations, kReplicasAnnotation); !given.empty()) {
    const auto count = std::atoi(given.c_str());
    if (count < 1 || std::to_string(count) != given) {
      return Error{where + " (" + name + "): metadata.annotations." + kReplicasAnnotation,
                   "must be a whole number of replicas, at least 1"};
    }
    intent.replicas = count;
  }
  return NamedIntent{name, std::move(intent),
                     base::stringMember(annotations, kRationaleAnnotation)};
}

}  // namespace

Result<std::vector<NamedIntent>> intentsFromManifests(const std::string& path,
                                                      const core::Catalog& catalog,
                                                      std::optional<int> replicas) {
  auto text = readTextFile(path);
  if (!text) {
    return Error{"-f", text.error().field + ": " + text.error().message};
  }
  auto documents = parseYamlDocuments(*text, path);
  if (!documents) {
    return documents.error();
  }
  // The targets first: a GpuWorkload may come before the Job it places.
  ManifestTargets targets;
  std::vector<std::size_t> workloads;
  for (std::size_t i = 0; i < documents->size(); ++i) {
    const auto& document = (*documents)[i];
    const std::string where = path + " document " + std::to_string(i + 1);
    if (!document.is_object()) {
      return Error{where, "is not an object"};
    }
    const auto kind = base::stringMember(document, "kind");
    const auto apiVersion = base::stringMember(document, "apiVersion");
    if (kind == "GpuWorkload") {
      workloads.push_back(i);
    } else if (const auto target = core::targetKindNamed(kind);
               target && apiVersion == core::apiVersionOf(*target)) {
      targets[{*target, manifestKey(document)}] = core::targetFromJson(*target, document);
    } else if (apiVersion.rfind("gpuplacement.io/", 0) == 0) {
      return Error{where, "is not a GpuWorkload (kind: GpuWorkload)"};
    }
    // Anything else a bundle holds (Services, ConfigMaps) is not read.
  }
  std::vector<NamedIntent> intents;
  for (const auto i : workloads) {
    auto intent = intentOfManifest((*documents)[i], path + " document " + std::to_string(i + 1),
                                   catalog, replicas, targets);
    if (!intent) {
      return intent.error();
    }
    intents.push_back(std::move(intent).value());
  }
  if (intents.empty()) {
    return Error{"-f", path + " holds no GpuWorkload"};
  }
  return intents;
}

int runRecommend(const core::PlacementEngine& engine, const std::vector<NamedIntent>& intents,
                 OutputFormat format, std::ostream& out) {
  bool allPlaced = true;
  json results = json::array();
  Table markdown({"Workload", "Intent", "Answer", "$/hour", "$/month", "Node", "Why"});
  for (std::size_t i = 0; i < intents.size(); ++i) {
    const auto& [name, intent, rationale] = intents[i];
    const auto decision = decide(engine, intent);
    std::optional<core::Scheduling> scheduling;
    if (decision.placement) {
      scheduling = core::renderScheduling(*decision.placement, engine.catalog(), engine.policy());
    } else {
      allPlaced = false;
    }
    if (format == OutputFormat::Table) {
      if (i > 0) {
        out << "\n";
      }
      printDecision(name, intent, decision, scheduling ? &*scheduling : nullptr,
                    engine.policy().hoursPerMonth, out);
      continue;
    }
    if (format == OutputFormat::Markdown) {
      markdown.add(markdownRow(name, intent, decision, rationale));
      continue;
    }
    json result = core::toJson(decision, scheduling ? &*scheduling : nullptr);
    if (!name.empty()) {
      result["workload"] = name;
    }
    result["prices"] = priceBasisJson(engine);
    results.push_back(std::move(result));
  }
  if (format == OutputFormat::Table) {
    printPriceBasis(engine, out);
  } else if (format == OutputFormat::Markdown) {
    markdown.printMarkdown(out);
    const auto& source = engine.catalog().pricesSource;
    out << "\nPrices: " << priceBasisText(engine) << (source.empty() ? "" : ": " + source) << ".\n";
  } else {
    printJsonOrYaml(results.size() == 1 ? results[0] : results, format, out);
  }
  return allPlaced ? kExitOk : kExitCannotPlace;
}

namespace {

void printCurrent(const core::Analysis& a, std::ostream& out) {
  out << "CURRENT      " << a.current.instanceType << ": "
      << shapeOf(a.currentAccelerator, a.currentAcceleratorCount) << ", "
      << capacityText(a.capacityType) << ", ";
  if (a.currentPriced) {
    out << base::formatMoney(a.currentHourlyCost) << "/h, "
        << base::formatMoney(a.currentMonthlyCost) << "/month ("
        << base::formatFixed(a.hoursPerMonth, 0) << " h): " << a.currentCostNote;
  } else {
    out << "cost unknown: " << a.currentCostNote;
  }
  out << (a.currentFits ? "" : "; it cannot run the model: " + a.currentProblem) << "\n";
}

void printSavings(const core::Analysis& a, std::ostream& out) {
  if (a.recommended.placement && a.currentPriced) {
    out << "\nSAVINGS      " << base::formatFixed(a.savingsPercent, 1) << "% ("
        << base::formatMoney(a.monthlySavings) << "/month) moving from " << a.current.instanceType
        << " to " << a.recommended.placement->instanceType << "\n";
  }
  if (a.alternatives.empty()) {
    return;
  }
  out << "\n";
  Table table({"RANK", "INSTANCE", "ACCELERATORS", "CAPACITY", "$/MONTH", "SAVINGS", "NOTE"});
  int rank = 2;
  for (const auto& option : a.alternatives) {
    table.add({std::to_string(rank++), option.instanceType,
               shapeOf(option.accelerator, option.acceleratorCount),
               capacityText(option.capacityType), base::formatMoney(option.monthlyCost),
               a.currentPriced ? base::formatFixed(option.savingsPercent, 1) + "%" : "-",
               option.note});
  }
  table.print(out);
}

}  // namespace

int runAnalyze(const core::PlacementEngine& engine, const core::WorkloadIntent& intent,
               const core::CurrentSetup& current, double hours, OutputFormat format,
               std::ostream& out, std::ostream& err) {
  auto analysis = core::analyze(engine, intent, current, hours);
  if (!analysis) {
    err << "error: " << analysis.error().describe() << "\n";
    return kExitBadInput;
  }
  std::optional<core::Scheduling> scheduling;
  if (analysis->recommended.placement) {
    scheduling =
        core::renderScheduling(*analysis->recommended.placement, engine.catalog(), engine.policy());
  }
  const int exitCode = analysis->recommended.placement ? kExitOk : kExitCannotPlace;
  if (format != OutputFormat::Table) {
    auto result = core::toJson(*analysis, scheduling ? &*scheduling : nullptr);
    result["prices"] = priceBasisJson(engine);
    printJsonOrYaml(result, format, out);
    return exitCode;
  }
  printCurrent(*analysis, out);
  printDecision("", intent, analysis->recommended, scheduling ? &*scheduling : nullptr,
                analysis->hoursPerMonth, out);
  printSavings(*analysis, out);
  printPriceBasis(engine, out);
  return exitCode;
}

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
  auto text = readTextFile(path);
  if (!text) {
    return Error{"--scenarios", text.error().field + ": " + text.error().message};
  }
  auto document = parseYaml(*text, path);
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
  return Ok{};
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

int runCatalog(const core::PlacementEngine& engine, std::optional<core::Tier> tier,
               OutputFormat format, std::ostream& out) {
  const auto& catalog = engine.catalog();
  Table table({"INSTANCE", "TIER", "ACCELERATOR", "COUNT", "GIB/ACCEL", "VCPU", "MEMORY GIB",
               "ON-DEMAND $/H", "SPOT $/H"});
  json rows = json::array();
  for (std::size_t i = 0; i < catalog.instances.size(); ++i) {
    const auto& instance = catalog.instances[i];
    if (tier && instance.tier != *tier) {
      continue;
    }
    const auto* accelerator = catalog.acceleratorOf(instance);
    const auto onDemand = engine.price(static_cast<int>(i), core::CapacityType::OnDemand);
    const auto spot = engine.price(static_cast<int>(i), core::CapacityType::Spot);
    if (format == OutputFormat::Table) {
      table.add({instance.type, std::string(core::nameOf(instance.tier)),
                 accelerator ? accelerator->name : "-", std::to_string(instance.acceleratorCount),
                 accelerator ? base::formatFixed(accelerator->memoryGiB, 2) : "-",
                 std::to_string(instance.vcpus), base::formatFixed(instance.memoryGiB, 0),
                 onDemand ? base::formatMoney(*onDemand) : "-",
                 spot ? base::formatMoney(*spot) : "-"});
      continue;
    }
    rows.push_back(
        {{"instanceType", instance.type},
         {"tier", core::nameOf(instance.tier)},
         {"accelerator", accelerator ? json(accelerator->name) : json(nullptr)},
         {"acceleratorCount", instance.acceleratorCount},
         {"acceleratorMemoryGiB", accelerator ? json(accelerator->memoryGiB) : json(nullptr)},
         {"vcpus", instance.vcpus},
         {"memoryGiB", instance.memoryGiB},
         {"onDemand", onDemand ? json(*onDemand) : json(nullptr)},
         {"spot", spot ? json(*spot) : json(nullptr)}});
  }
  if (format == OutputFormat::Table) {
    table.print(out);
    printPriceBasis(engine, out);
  } else {
    printJsonOrYaml({{"prices", priceBasisJson(engine)}, {"instances", std::move(rows)}}, format,
                    out);
  }
  return kExitOk;
}

}  // namespace gpuplacement::app
