#include "core/plan/status.h"

#include <cmath>
#include <cstdio>

#include "base/decimal.h"
#include "base/hash.h"
#include "base/json_access.h"
#include "core/catalog/quantity.h"
#include "core/explain/placement_json.h"
#include "core/kinds/pod_sets.h"

namespace gpuplacement::core {

using base::memberOf;
namespace {

using base::decimalString;

using json = nlohmann::json;

std::string text(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// What a status records; an unknown spelling reads as on-demand, as before
// Mixed existed.
CapacityType capacityTypeOf(const std::string& text) {
  const auto capacity = parseEnum<CapacityType>(text);
  return capacity ? *capacity : CapacityType::OnDemand;
}

std::int64_t integer(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

// The rule that decided, the memory it sized and the alternatives that lost.
void addDecision(const Decision& decision, json& status) {
  if (!decision.rule.empty()) {
    status["rule"] = decision.rule;
    status["ruleSource"] = decision.ruleSource;
  }
  // decision.reason is the Placed condition's message: not said twice.
  const auto& memory = decision.memory;
  status["memory"] = {{"parameters", formatParameterCount(memory.parameters)},
                      {"precision", nameOf(memory.precision)},
                      {"overhead", decimalString(memory.overhead, 3)},
                      {"requiredGiB", decimalString(memory.requiredGiB, 2)},
                      {"method", memory.method},
                      {"runtimeGiB", decimalString(memory.runtimeGiB, 2)}};
  if (memory.serving.stated()) {
    auto& terms = status["memory"];
    terms["weightsGiB"] = decimalString(memory.weightsGiB, 2);
    terms["kvCacheGiB"] = decimalString(memory.kvCacheGiB, 2);
    terms["reserveGiB"] = decimalString(memory.reserveGiB, 2);
  }
  if (memory.kvBytesPerToken > 0) {
    status["memory"]["kvCacheBytesPerToken"] = std::llround(memory.kvBytesPerToken);
  }
  if (!decision.memoryNote.empty()) {
    status["memory"]["note"] = decision.memoryNote;
  }
  json alternatives = json::array();
  for (const auto& alternative : decision.alternatives) {
    alternatives.push_back(alternativeToJson(alternative, PlacementView::Status));
  }
  status["alternatives"] = std::move(alternatives);
}

}  // namespace

void setCondition(std::vector<Condition>& conditions, Condition next, const std::string& now) {
  for (auto& condition : conditions) {
    if (condition.type != next.type) {
      continue;
    }
    next.lastTransitionTime =
        condition.status == next.status && !condition.lastTransitionTime.empty()
            ? condition.lastTransitionTime
            : now;
    condition = std::move(next);
    return;
  }
  next.lastTransitionTime = now;
  conditions.push_back(std::move(next));
}

const Condition* findCondition(const std::vector<Condition>& conditions, const std::string& type) {
  for (const auto& condition : conditions) {
    if (condition.type == type) {
      return &condition;
    }
  }
  return nullptr;
}

namespace {

// The placement fields of `applied`, or of `placement` where `applied`
// leaves them out because they are the same.
void readAppliedPlacement(const json& applied, const json& placement, AppliedRecord& record) {
  const json& source = applied.contains("instanceType") ? applied : placement;
  if (!source.is_object()) {
    return;
  }
  record.instanceType = text(source, "instanceType");
  record.accelerator = text(source, "accelerator");
  const auto tier = parseEnum<Tier>(text(source, "tier"));
  record.tier = tier ? *tier : Tier::CPU;
  record.acceleratorCount = static_cast<int>(integer(source, "acceleratorCount"));
  record.migProfile = text(source, "migProfile");
  record.timeSlices = static_cast<int>(integer(source, "timeSlices"));
  record.claim = memberOf(source, "resourceClaim").is_boolean() &&
                 memberOf(source, "resourceClaim").get<bool>();
  record.capacityType = capacityTypeOf(text(source, "capacityType"));
}

bool samePlacement(const AppliedRecord& applied, const Placement& placement) {
  return applied.instanceType == placement.instanceType &&
         applied.accelerator == placement.accelerator && applied.tier == placement.tier &&
         applied.acceleratorCount == placement.acceleratorCount &&
         applied.migProfile == placement.migProfile && applied.timeSlices == placement.timeSlices &&
         applied.claim == placement.claim && applied.capacityType == placement.capacityType;
}

}  // namespace

namespace {

std::vector<UnavailableType> readUnavailable(const json& status) {
  std::vector<UnavailableType> unavailable;
  if (const auto it = status.find("unavailable"); it != status.end() && it->is_array()) {
    for (const auto& item : *it) {
      if (item.is_object()) {
        unavailable.push_back({text(item, "instanceType"),
                               capacityTypeOf(text(item, "capacityType")), text(item, "since"),
                               text(item, "until"), text(item, "message")});
      }
    }
  }
  return unavailable;
}

}  // namespace

WorkloadStatus workloadStatusFromJson(const json& status) {
  WorkloadStatus result;
  if (!status.is_object()) {
    return result;
  }
  result.observedGeneration = integer(status, "observedGeneration");
  if (const auto it = status.find("applied"); it != status.end() && it->is_object()) {
    AppliedRecord applied;
    // Statuses written before StatefulSets and Jobs name a Deployment.
    applied.targetKind = targetKindNamed(text(*it, "targetKind")).value_or(TargetKind::Deployment);
    applied.targetName = text(*it, "targetName");
    applied.targetUid = text(*it, "targetUid");
    applied.targetGeneration = integer(*it, "targetGeneration");
    if (applied.targetName.empty()) {
      applied.targetName = text(*it, "deployment");
      applied.targetGeneration = integer(*it, "deploymentGeneration");
    }
    readAppliedPlacement(*it, memberOf(status, "placement"), applied);
    applied.specGeneration = integer(*it, "specGeneration");
    applied.time = text(*it, "time");
    applied.replacement =
        memberOf(*it, "replacement").is_boolean() && memberOf(*it, "replacement").get<bool>();
    result.applied = std::move(applied);
  }
  if (const auto it = status.find("lastReplacement"); it != status.end() && it->is_object()) {
    result.lastReplacement =
        ReplacementRecord{text(*it, "from"), text(*it, "to"), text(*it, "monthlySaving"),
                          text(*it, "time"), text(*it, "reason")};
  }
  if (const auto it = status.find("reverts"); it != status.end() && it->is_object()) {
    RevertRecord reverts;
    reverts.count = static_cast<int>(integer(*it, "count"));
    reverts.since = text(*it, "since");
    reverts.last = text(*it, "last");
    if (const auto& fields = memberOf(*it, "fields"); fields.is_array()) {
      for (const auto& field : fields) {
        reverts.fields.push_back(base::stringOf(field));
      }
    }
    reverts.fieldManager = text(*it, "fieldManager");
    reverts.stoppedAtGeneration = integer(*it, "stoppedAtGeneration");
    reverts.stoppedAtTemplate = base::parseDigest(text(*it, "stoppedAtTemplate")).value_or(0);
    result.reverts = std::move(reverts);
  }
  result.unavailable = readUnavailable(status);
  if (const auto it = status.find("run"); it != status.end() && it->is_object()) {
    result.run = JobRunRecord{text(*it, "job"),
                              text(*it, "startTime"),
                              text(*it, "endTime"),
                              integer(*it, "durationSeconds"),
                              text(*it, "outcome"),
                              text(*it, "instanceType"),
                              capacityTypeOf(text(*it, "capacityType")),
                              static_cast<int>(integer(*it, "pods")),
                              text(*it, "hourlyCost"),
                              text(*it, "cost")};
  }
  if (const auto it = status.find("conditions"); it != status.end() && it->is_array()) {
    for (const auto& item : *it) {
      if (!item.is_object()) {
        continue;
      }
      result.conditions.push_back(Condition{
          text(item, "type"), text(item, "status"), text(item, "reason"), text(item, "message"),
          text(item, "lastTransitionTime"), integer(item, "observedGeneration")});
    }
  }
  return result;
}

namespace {

json unavailableJson(const std::vector<UnavailableType>& unavailable) {
  json list = json::array();
  for (const auto& entry : unavailable) {
    list.push_back({{"instanceType", entry.instanceType},
                    {"capacityType", nameOf(entry.capacityType)},
                    {"since", entry.since},
                    {"until", entry.until},
                    {"message", entry.message}});
  }
  return list;
}

}  // namespace

json statusToJson(const StatusView& view) {
  json status = {{"observedGeneration", view.observedGeneration}, {"mode", view.mode}};
  if (view.placement) {
    status["placement"] = placementToJson(*view.placement, PlacementView::Status);
  }
  if (!view.podSets.empty()) {
    json list = json::array();
    for (const auto& podSet : view.podSets) {
      list.push_back({{"name", podSet.name},
                      {"role", podSet.role},
                      {"pods", podSet.pods},
                      {"hourlyCost", base::decimalString(podSet.hourlyCost, 4)}});
    }
    status["podSets"] = std::move(list);
  }
  if (view.recommendation) {
    status["recommendation"] = placementToJson(*view.recommendation, PlacementView::Status);
    status["recommendation"]["note"] = view.recommendationNote;
  }
  if (view.decision) {
    addDecision(*view.decision, status);
  }
  if (view.throughput) {
    const auto& advice = *view.throughput;
    status["throughput"] = {
        {"tokensPerSecond", decimalString(advice.targetTokensPerSecond, 1)},
        {"replicas", advice.replicas},
        {"replicasFrom", advice.replicasFrom},
        {"carriesTokensPerSecond", decimalString(advice.carriesTokensPerSecond, 1)},
        {"replicasNeeded", advice.replicasNeeded},
        {"hourlyCostNeeded", decimalString(advice.hourlyCostNeeded, 4)},
        {"enough", advice.enough},
        {"message", advice.message}};
  }
  if (view.applied) {
    const auto& applied = *view.applied;
    json record = {{"targetKind", base::nameOf(applied.targetKind)},
                   {"targetName", applied.targetName},
                   {"targetUid", applied.targetUid},
                   {"targetGeneration", applied.targetGeneration},
                   {"specGeneration", applied.specGeneration},
                   {"time", applied.time},
                   {"replacement", applied.replacement}};
    // Usually what the target carries is the placement shown: said once.
    if (!view.placement || !samePlacement(applied, *view.placement)) {
      record["instanceType"] = applied.instanceType;
      record["tier"] = nameOf(applied.tier);
      record["acceleratorCount"] = applied.acceleratorCount;
      if (!applied.migProfile.empty()) {
        record["migProfile"] = applied.migProfile;
      }
      if (applied.timeSlices > 0) {
        record["timeSlices"] = applied.timeSlices;
      }
      if (applied.claim) {
        record["resourceClaim"] = true;
      }
      record["capacityType"] = nameOf(applied.capacityType);
      if (!applied.accelerator.empty()) {
        record["accelerator"] = applied.accelerator;
      }
    }
    status["applied"] = std::move(record);
  }
  if (view.lastReplacement) {
    const auto& last = *view.lastReplacement;
    status["lastReplacement"] = {{"from", last.from},
                                 {"to", last.to},
                                 {"monthlySaving", last.monthlySaving},
                                 {"time", last.time},
                                 {"reason", last.reason}};
  }
  if (view.reverts) {
    const auto& reverts = *view.reverts;
    json record = {{"count", reverts.count},
                   {"since", reverts.since},
                   {"last", reverts.last},
                   {"fields", reverts.fields}};
    if (!reverts.fieldManager.empty()) {
      record["fieldManager"] = reverts.fieldManager;
    }
    if (reverts.stopped()) {
      record["stoppedAtGeneration"] = reverts.stoppedAtGeneration;
      record["stoppedAtTemplate"] = base::digestText(reverts.stoppedAtTemplate);
    }
    status["reverts"] = std::move(record);
  }
  if (!view.unavailable.empty()) {
    status["unavailable"] = unavailableJson(view.unavailable);
  }
  if (view.run) {
    const auto& run = *view.run;
    status["run"] = {{"job", run.job},
                     {"startTime", run.startTime},
                     {"endTime", run.endTime},
                     {"durationSeconds", run.durationSeconds},
                     {"outcome", run.outcome},
                     {"instanceType", run.instanceType},
                     {"capacityType", nameOf(run.capacityType)},
                     {"pods", run.pods},
                     {"hourlyCost", run.hourlyCost},
                     {"cost", run.cost}};
  }
  status["policy"] = {{"name", view.policyName}};
  if (view.policyGeneration > 0) {
    status["policy"]["generation"] = view.policyGeneration;
  }
  status["conditions"] = conditionsToJson(view.conditions);
  return status;
}

json conditionsToJson(const std::vector<Condition>& conditions) {
  json list = json::array();
  for (const auto& condition : conditions) {
    list.push_back({{"type", condition.type},
                    {"status", condition.status},
                    {"reason", condition.reason},
                    {"message", condition.message},
                    {"lastTransitionTime", condition.lastTransitionTime},
                    {"observedGeneration", condition.observedGeneration}});
  }
  return list;
}

namespace {

// Whether decisions see the cluster the policy asks for.
Condition capacityKnown(const ClusterView& cluster, std::int64_t generation) {
  if (!cluster.problem.empty()) {
    return {"CapacityKnown",
            "False",
            "NodesUnreadable",
            cluster.problem + ": placing as capacity.source None (every type in the catalog)",
            "",
            generation};
  }
  return {"CapacityKnown",      "True", std::string(nameOf(cluster.capacity.source)),
          cluster.capacity.why, "",     generation};
}

}  // namespace

json policyStatus(const PolicyStatusInput& input) {
  Condition accepted{"Accepted", "True", "Valid", "", "", input.generation};
  if (!input.invalid) {
    accepted.message = "generation " + std::to_string(input.generation) + " is in force";
  } else {
    accepted.status = "False";
    accepted.reason = "Invalid";
    accepted.message =
        input.invalid->describe() + "; " +
        (input.generationInForce
             ? "generation " + std::to_string(*input.generationInForce) + " stays in force"
             : std::string("no version of this policy is in force"));
  }
  auto conditions = input.conditions;
  const auto now = base::formatRfc3339(input.now);
  setCondition(conditions, accepted, now);
  json status = {{"observedGeneration", input.generation}, {"workloads", input.workloads}};
  if (const auto* cluster = input.cluster) {
    setCondition(conditions, capacityKnown(*cluster, input.generation), now);
    status["capacity"] = {{"source", std::string(nameOf(cluster->capacity.source))},
                          {"why", cluster->capacity.why}};
    status["nodeLabels"] = {{"scheme", std::string(nameOf(cluster->labels.scheme))},
                            {"capacityTypeKey", cluster->labels.capacityLabel.key}};
    if (!cluster->labels.why.empty()) {
      status["nodeLabels"]["why"] = cluster->labels.why;
    }
  }
  if (input.pricesShared) {
    setCondition(conditions, *input.pricesShared, now);
  }
  status["conditions"] = conditionsToJson(conditions);
  return status;
}

std::vector<PodSetCost> podSetCosts(const TargetState& target,
                                    const std::vector<std::string>& names,
                                    double hourlyCostPerReplica) {
  std::vector<PodSetCost> costs;
  if (target.podSets.size() < 2) {
    return costs;
  }
  for (const auto index : placedPodSets(target, names).indexes) {
    const auto& podSet = target.podSets[index];
    costs.push_back({podSet.name, podSet.role, podSet.replicas,
                     hourlyCostPerReplica * static_cast<double>(podSet.replicas)});
  }
  return costs;
}

}  // namespace gpuplacement::core
