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
#include "core/catalog/quantity.h"
#include "core/decide/cluster_cost.h"
#include "core/decide/render.h"
#include "core/explain/decision_json.h"
#include "core/explain/explainer.h"
#include "core/kinds/target.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

}  // namespace

int runRecommend(const core::PlacementEngine& engine, const std::vector<NamedIntent>& intents,
                 const core::WhatIfCluster* cluster, OutputFormat format, std::ostream& out) {
  bool allPlaced = true;
  json results = json::array();
  Table markdown({"Workload", "Intent", "Answer", "$/hour", "$/month", "Node", "Why"});
  std::optional<core::ClusterView> view;
  if (cluster) {
    view = core::clusterViewOf(cluster->state(), engine.catalog(), engine.policy());
  }
  for (std::size_t i = 0; i < intents.size(); ++i) {
    const auto& [name, intent, rationale] = intents[i];
    const auto decision = view ? decide(engine, intent, core::ClusterContext{&*view, {}, {}})
                               : decide(engine, intent);
    std::optional<core::Scheduling> scheduling;
    if (decision.placement) {
      scheduling =
          view ? core::renderScheduling(*decision.placement, engine.catalog(), engine.policy(),
                                        view->labels)
               : core::renderScheduling(*decision.placement, engine.catalog(), engine.policy());
    } else {
      allPlaced = false;
    }
    if (format == OutputFormat::Table) {
      if (i > 0) {
        out << "\n";
      }
      if (cluster) {
        out << "CLUSTER      what-if: " << cluster->assumed() << "\n";
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
    if (cluster) {
      result["assumedCluster"] = cluster->assumed();
    }
    results.push_back(std::move(result));
  }
  if (format == OutputFormat::Table) {
    printPriceBasis(engine, out);
  } else if (format == OutputFormat::Markdown) {
    markdown.printMarkdown(out);
    if (cluster) {
      out << "\nAssumed cluster: " << cluster->assumed() << ".\n";
    }
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
