#include "app/command_output.h"

#include <cmath>
#include <cstdio>

#include "app/price_basis.h"
#include "app/table.h"
#include "base/decimal.h"
#include "base/io/yaml_json.h"
#include "core/catalog/quantity.h"
#include "core/decide/render.h"
#include "core/explain/decision_json.h"
#include "core/explain/explainer.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

}  // namespace

std::string shapeOf(const std::string& accelerator, int count) {
  return accelerator.empty() ? "CPU" : std::to_string(count) + "x " + accelerator;
}

std::string capacityText(core::CapacityType capacity) {
  return capacity == core::CapacityType::Spot    ? "spot"
         : capacity == core::CapacityType::Mixed ? "half spot, half on-demand"
                                                 : "on-demand";
}

namespace {

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

// What of the devices a replica takes: whole ones, a MIG slice, or
// replicas of a time-sliced GPU.
std::string shareOf(const core::Placement& placement) {
  if (!placement.migProfile.empty()) {
    return "a MIG " + placement.migProfile + " slice of 1 " + placement.accelerator;
  }
  if (placement.timeSlices > 0) {
    return std::to_string(placement.acceleratorCount) + " of " +
           std::to_string(placement.timeSlices) + " time-sliced replicas of 1 " +
           placement.accelerator;
  }
  return shapeOf(placement.accelerator, placement.acceleratorCount);
}

void printPlacement(const core::Placement& placement, double hoursPerMonth, std::ostream& out) {
  out << "PLACEMENT    " << placement.instanceType << ": " << shareOf(placement) << " ("
      << core::nameOf(placement.tier) << ")";
  if (placement.acceleratorsPerInstance > 0) {
    out << " of " << placement.acceleratorsPerInstance << " per node";
  }
  if (placement.nodesPerReplica > 1) {
    out << " on each of " << placement.nodesPerReplica << " nodes a replica, joined by EFA ("
        << placement.efaInterfaces << " interfaces, "
        << base::formatCount(std::llround(placement.networkGbps)) << " Gbps a node)";
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
  if (placement.wholeDeviceHourlyCost) {
    out << "WHOLE DEVICE " << base::formatMoney(*placement.wholeDeviceHourlyCost)
        << "/h per replica on whole devices instead\n";
  }
  if (placement.latencyMs) {
    const bool bound = !placement.latencyComputeBound && placement.bandwidthUtilization >= 1;
    out << "LATENCY      " << (bound ? "at least " : "about ")
        << base::formatFixed(*placement.latencyMs, 1) << " ms per "
        << core::latencyUnitName(placement.latencyUnit);
    if (placement.latencyComputeBound) {
      out << " (compute-bound: its FLOPs at 40% of the devices' dense peak)\n";
    } else {
      out << " (memory-bound: what a token reads, at "
          << base::formatPercent(placement.bandwidthUtilization)
          << " of the devices' peak bandwidth"
          << (placement.bandwidthAssumed           ? ", an assumption for this tier"
              : placement.bandwidthUtilization < 1 ? ", what the serving stack reaches"
                                                   : "")
          << ")\n";
    }
  }
  if (placement.tokensPerSecondPerReplica > 0) {
    out << "THROUGHPUT   about "
        << base::formatCount(std::llround(placement.tokensPerSecondPerReplica))
        << " output tokens/s per replica at the load";
    if (placement.replicasForThroughput > 0) {
      out << "; the target takes " << placement.replicasForThroughput << " replica"
          << (placement.replicasForThroughput == 1 ? "" : "s") << ", "
          << base::formatMoney(placement.hourlyCost * placement.replicasForThroughput) << "/h, "
          << base::formatMoney(placement.monthlyCost * placement.replicasForThroughput) << "/month";
    }
    out << "\n";
  }
  if (placement.timeToFirstTokenMs > 0) {
    out << "FIRST TOKEN  about " << base::formatFixed(placement.timeToFirstTokenMs, 0)
        << " ms for the mean prompt on a replica with room (its prefill; waiting behind other "
           "requests adds to it)\n";
  }
  if (placement.memoryRequestGiB > 0 && placement.tier != core::Tier::CPU) {
    // A pod's: a group's pods each ask for it on their own node.
    out << "HOST MEMORY  " << base::formatGiB(placement.memoryRequestGiB)
        << (placement.nodesPerReplica > 1 ? " GiB per pod" : " GiB per replica")
        << " (the runtime and one checkpoint shard to load through), "
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

}  // namespace

void printDecision(const std::string& name, const core::WorkloadIntent& intent,
                   const core::Decision& decision, const core::Scheduling* scheduling,
                   double hoursPerMonth, std::ostream& out) {
  const auto& memory = decision.memory;
  if (!name.empty()) {
    out << "WORKLOAD     " << name << "\n";
  }
  out << "INTENT       " << describeIntent(intent) << " (size " << decision.sizeBucket << ")\n";
  if (memory.serving.stated()) {
    out << "MEMORY       " << base::formatGiB(memory.weightsGiB) << " GiB weights + "
        << base::formatGiB(memory.kvCacheGiB) << " GiB KV cache + "
        << base::formatGiB(memory.reserveGiB)
        << " GiB reserve = " << base::formatGiB(memory.requiredGiB)
        << " GiB needed on one device\n";
  } else {
    out << "MEMORY       " << core::formatParameterCount(memory.parameters) << " x "
        << base::formatFixed(memory.bytesPerParameter, memory.bytesPerParameter < 1 ? 1 : 0)
        << " B x " << base::formatFixed(memory.overhead, 2)
        << " overhead = " << base::formatGiB(memory.requiredGiB) << " GiB needed (weights "
        << base::formatGiB(memory.weightsGiB) << " GiB)\n";
  }
  if (!decision.memoryNote.empty()) {
    out << "LOAD         " << decision.memoryNote << "\n";
  }
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
    // ">=" a bound at peak bandwidth; "~" an estimate at what a serving
    // stack reaches (or where compute binds).
    const bool bound = !placement.latencyComputeBound && placement.bandwidthUtilization >= 1;
    answer += std::string(bound ? "; >= " : "; ~") + base::formatFixed(*placement.latencyMs, 1) +
              " ms/" + core::latencyUnitName(placement.latencyUnit) +
              (placement.latencyComputeBound ? " (compute)"
               : bound                       ? ""
                       : " at " + base::formatPercent(placement.bandwidthUtilization) +
                             " of peak bandwidth");
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

void printPriceBasis(const core::PlacementEngine& engine, std::ostream& out) {
  out << "\nPRICES       " << priceBasisText(engine) << "\n";
}

void printJsonOrYaml(const json& value, OutputFormat format, std::ostream& out) {
  if (format == OutputFormat::Yaml) {
    out << base::toYaml(value);
  } else {
    out << value.dump(2) << "\n";
  }
}

base::Result<OutputFormat> parseOutputFormat(const std::string& text) {
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
  return base::Error{
      "-o", "\"" + text + "\" is not an output format (use table, json, yaml or markdown)"};
}

}  // namespace gpuplacement::app
