#include "core/decision_json.h"

#include <algorithm>
#include <cmath>

#include "core/quantity.h"

namespace gpuplacement::core {

using json = nlohmann::json;

double roundMoney(double dollars) {
  return std::round(dollars * 1e4) / 1e4;
}
double roundGiB(double gib) {
  return std::round(gib * 100) / 100;
}

json toJson(const MemoryEstimate& memory) {
  json result{{"parameters", formatParameterCount(memory.parameters)},
              {"precision", nameOf(memory.precision)},
              {"bytesPerParameter", memory.bytesPerParameter},
              {"overhead", memory.overhead},
              {"weightsGiB", roundGiB(memory.weightsGiB)},
              {"requiredGiB", roundGiB(memory.requiredGiB)}};
  if (memory.serving.stated()) {
    result["kvCacheGiB"] = roundGiB(memory.kvCacheGiB);
    result["reserveGiB"] = roundGiB(memory.reserveGiB);
    result["contextTokens"] = memory.serving.contextTokens;
    result["concurrentSequences"] = memory.serving.concurrentSequences;
    result["kvCachePrecision"] = nameOf(memory.serving.kvPrecision);
  }
  if (memory.kvBytesPerToken > 0) {
    result["kvCacheBytesPerToken"] = std::llround(memory.kvBytesPerToken);
  }
  return result;
}

json toJson(const Placement& placement) {
  json result{
      {"tier", nameOf(placement.tier)},
      {"accelerator", placement.accelerator.empty() ? json(nullptr) : json(placement.accelerator)},
      {"instanceType", placement.instanceType},
      {"acceleratorCount", placement.acceleratorCount},
      {"acceleratorsPerInstance", placement.acceleratorsPerInstance},
      {"capacityType", nameOf(placement.capacityType)},
      {"hourlyCost", roundMoney(placement.hourlyCost)},
      {"monthlyCost", roundMoney(placement.monthlyCost)},
      {"replicas", placement.replicas},
      {"totalHourlyCost", roundMoney(placement.totalHourlyCost)},
      {"totalMonthlyCost", roundMoney(placement.totalMonthlyCost)},
      {"costModel", nameOf(placement.costModel)},
      {"nodeHourlyCost", roundMoney(placement.nodeHourlyCost)},
      {"nodes", placement.nodes},
      {"replicasPerNode", placement.replicasPerNode},
      {"idleAccelerators", placement.idleAccelerators},
      {"costNote", placement.costNote},
      {"requiredMemoryGiB", roundGiB(placement.requiredMemoryGiB)},
      {"availableMemoryGiB", roundGiB(placement.availableMemoryGiB)},
      {"memoryFillPercent", std::round(placement.requiredMemoryGiB /
                                       std::max(placement.availableMemoryGiB, 1e-9) * 1000) /
                                10},
      {"memoryFillLimitPercent", std::round(placement.memoryFillLimit * 100)},
      {"performance", std::round(placement.performance * 100) / 100},
      {"performanceUnit", placement.performanceUnit},
      {"latencyMs",
       placement.latencyMs ? json(std::round(*placement.latencyMs * 100) / 100) : json(nullptr)}};
  if (placement.capacityType == CapacityType::Mixed) {
    result["capacityMix"] = {{"onDemandReplicas", placement.onDemandReplicas},
                             {"spotReplicas", placement.spotReplicas},
                             {"spotNodeHourlyCost", roundMoney(placement.spotNodeHourlyCost)}};
  }
  if (!placement.reservation.empty()) {
    result["reservation"] = placement.reservation;
  }
  if (!placement.migProfile.empty()) {
    result["migProfile"] = placement.migProfile;
  }
  if (placement.timeSlices > 0) {
    result["timeSlices"] = placement.timeSlices;
  }
  if (placement.claim) {
    result["resourceClaim"] = true;
  }
  if (placement.wholeDeviceHourlyCost) {
    result["wholeDeviceHourlyCost"] = roundMoney(*placement.wholeDeviceHourlyCost);
  }
  if (placement.latencyMs) {
    result["latencyPer"] = latencyUnitName(placement.latencyUnit);
    result["latencyBound"] = placement.latencyComputeBound ? "compute" : "memory";
    result["bandwidthUtilization"] = placement.bandwidthUtilization;
  }
  if (placement.tokensPerSecondPerReplica > 0) {
    result["tokensPerSecondPerReplica"] = std::round(placement.tokensPerSecondPerReplica * 10) / 10;
  }
  if (placement.replicasForThroughput > 0) {
    result["replicasForThroughput"] = placement.replicasForThroughput;
    result["hourlyCostForThroughput"] =
        roundMoney(placement.hourlyCost * placement.replicasForThroughput);
  }
  if (placement.timeToFirstTokenMs > 0) {
    result["timeToFirstTokenMs"] = std::round(placement.timeToFirstTokenMs * 10) / 10;
  }
  if (placement.neededAccelerators > 0) {
    result["neededAccelerators"] = placement.neededAccelerators;
  }
  if (placement.tier == Tier::CPU) {
    result["cpuRequest"] = placement.cpuRequest;
  }
  if (placement.memoryRequestGiB > 0) {
    result[placement.tier == Tier::CPU ? "memoryRequestGiB" : "hostMemoryGiB"] =
        roundGiB(placement.memoryRequestGiB);
  }
  return result;
}

json toJson(const Scheduling& scheduling) {
  json tolerations = json::array();
  for (const auto& toleration : scheduling.tolerations) {
    tolerations.push_back(tolerationToJson(toleration));
  }
  auto requests = scheduling.resources;
  requests.insert(scheduling.requestsOnly.begin(), scheduling.requestsOnly.end());
  return json{{"nodeSelector", scheduling.nodeSelector},
              {"tolerations", std::move(tolerations)},
              {"resources", {{"limits", scheduling.resources}, {"requests", std::move(requests)}}}};
}

json toJson(const Alternative& alternative) {
  json item = {{"instanceType",
                alternative.instanceType.empty() ? json(nullptr) : json(alternative.instanceType)},
               {"tier", nameOf(alternative.tier)},
               {"hourlyCost",
                alternative.hourlyCost ? json(roundMoney(*alternative.hourlyCost)) : json(nullptr)},
               {"rejected", alternative.rejected}};
  if (!alternative.instanceType.empty()) {
    item["accelerator"] =
        alternative.accelerator.empty() ? json(nullptr) : json(alternative.accelerator);
    item["acceleratorCount"] = alternative.acceleratorCount;
    if (!alternative.migProfile.empty()) {
      item["migProfile"] = alternative.migProfile;
    }
    if (alternative.timeSlices > 0) {
      item["timeSlices"] = alternative.timeSlices;
    }
    item["capacityType"] = nameOf(alternative.capacityType);
  }
  return item;
}

json toJson(const Decision& decision, const Scheduling* scheduling) {
  json alternatives = json::array();
  for (const auto& alternative : decision.alternatives) {
    alternatives.push_back(toJson(alternative));
  }
  json result = {{"placement", decision.placement ? toJson(*decision.placement) : json(nullptr)},
                 {"scheduling", scheduling ? toJson(*scheduling) : json(nullptr)},
                 {"rule", decision.rule.empty() ? json(nullptr) : json(decision.rule)},
                 {"ruleSource", decision.ruleSource},
                 {"reason", decision.reason},
                 {"alternatives", std::move(alternatives)},
                 {"memory", toJson(decision.memory)},
                 {"sizeBucket", decision.sizeBucket},
                 {"latencyClass", nameOf(decision.latency)}};
  result["placedReason"] = decision.placedReason();
  if (!decision.memoryNote.empty()) {
    result["memory"]["note"] = decision.memoryNote;
  }
  if (!decision.placement) {
    result["cannotPlace"] = decision.cannotPlace;
  }
  return result;
}

}  // namespace gpuplacement::core
