#include "core/explain/decision_json.h"

#include <cmath>

#include "core/catalog/quantity.h"

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

json toJson(const Decision& decision, const Scheduling* scheduling) {
  json alternatives = json::array();
  for (const auto& alternative : decision.alternatives) {
    alternatives.push_back(alternativeToJson(alternative, PlacementView::WhatIf));
  }
  json result = {
      {"placement", decision.placement ? placementToJson(*decision.placement, PlacementView::WhatIf)
                                       : json(nullptr)},
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
