#include "core/plan/admission_answer.h"

#include <algorithm>
#include <set>

#include "base/json_access.h"

namespace gpuplacement::core {
namespace {

// How long Kueue waits before it reserves quota for a Workload again after
// a Retry: long enough not to spin on a flavor that cannot hold it, short
// enough that the next flavor is tried soon.
constexpr int kRetrySeconds = 30;

std::string joined(const std::set<std::string>& names) {
  std::string text;
  for (const auto& name : names) {
    text += (text.empty() ? "" : ", ") + name;
  }
  return text;
}

AdmissionAnswer retry(std::string message) {
  return {"Retry", std::move(message), {}, kRetrySeconds};
}

}  // namespace

std::optional<WorkloadIntent> intentWithinFlavor(WorkloadIntent intent, const FlavorReach& reach,
                                                 const std::string& flavor, std::string& why) {
  auto& constraints = intent.constraints;
  const auto asked = constraints.capacityType;
  const bool onDemand =
      !reach.onDemand.empty() && (asked == CapacityType::OnDemand || asked == CapacityType::Any);
  const bool spot =
      !reach.spot.empty() && (asked == CapacityType::Spot || asked == CapacityType::Any);
  if (!onDemand && !spot) {
    why = "the flavor " + flavor + " reaches " +
          (reach.empty() ? std::string("no instance type of the catalog")
                         : std::string(reach.spot.empty() ? "on-demand" : "spot") +
                               " capacity only, and spec.constraints.capacityType is " +
                               std::string(base::nameOf(asked)));
    return std::nullopt;
  }
  constraints.capacityType = onDemand && spot ? CapacityType::Any
                             : onDemand       ? CapacityType::OnDemand
                                              : CapacityType::Spot;
  std::set<std::string> types;
  for (const auto* side : {onDemand ? &reach.onDemand : nullptr, spot ? &reach.spot : nullptr}) {
    if (side) {
      types.insert(side->begin(), side->end());
    }
  }
  std::vector<std::string> within;
  for (const auto& type : types) {
    const auto& own = constraints.instanceTypes;
    if (own.empty() || std::find(own.begin(), own.end(), type) != own.end()) {
      within.push_back(type);
    }
  }
  if (within.empty()) {
    why = "none of the instance types the flavor " + flavor +
          " reaches is in spec.constraints.instanceTypes";
    return std::nullopt;
  }
  constraints.instanceTypes = std::move(within);
  return intent;
}

std::optional<AdmissionAnswer> answerAdmission(const AdmissionRequest& request) {
  const auto& workload = *request.workload;
  const auto* check = workload.check(request.check);
  if (!check || check->state != "Pending" || !workload.quotaReserved || workload.evicted ||
      workload.finished || !request.flavors) {
    return std::nullopt;
  }
  if (!request.scheduling) {
    return retry(request.unplaced.empty() ? "not placed" : request.unplaced);
  }
  AdmissionAnswer answer{"Ready", "", {}, 0};
  std::set<std::string> flavorNames;
  for (const auto& podSet : request.podSets) {
    if (std::find(workload.podSets.begin(), workload.podSets.end(), podSet) ==
        workload.podSets.end()) {
      continue;  // a pod set Kueue does not queue
    }
    const auto* assignment = workload.assignment(podSet);
    if (!assignment) {
      return std::nullopt;  // quota not reserved for it yet
    }
    std::map<std::string, std::string> labels;
    std::vector<Toleration> given;
    for (const auto& [resource, name] : assignment->flavors) {
      const auto flavor = request.flavors->find(name);
      if (flavor == request.flavors->end()) {
        return std::nullopt;  // not in the cache yet: answer when it is
      }
      flavorNames.insert(name);
      labels.insert(flavor->second.nodeLabels.begin(), flavor->second.nodeLabels.end());
      given.insert(given.end(), flavor->second.tolerations.begin(),
                   flavor->second.tolerations.end());
    }
    KueuePodSetUpdate update{podSet, {}, {}};
    for (const auto& [key, value] : request.scheduling->nodeSelector) {
      const auto flavorValue = labels.find(key);
      if (flavorValue == labels.end()) {
        update.nodeSelector[key] = value;
      } else if (flavorValue->second != value) {
        std::set<std::string> reserved;
        for (const auto& entry : assignment->flavors) {
          reserved.insert(entry.second);
        }
        return retry("pod set " + podSet + ": the flavor " + joined(reserved) +
                     " Kueue reserved selects " + key + "=" + flavorValue->second +
                     ", and the placement needs " + key + "=" + value);
      }
    }
    for (const auto& toleration : request.scheduling->tolerations) {
      if (std::find(given.begin(), given.end(), toleration) == given.end()) {
        update.tolerations.push_back(toleration);
      }
    }
    answer.updates.push_back(std::move(update));
  }
  answer.message = "placed within the flavor " + joined(flavorNames);
  return answer;
}

nlohmann::json admissionCheckApply(const KueueWorkload& workload, const std::string& namespace_,
                                   const std::string& check, const AdmissionAnswer& answer,
                                   const std::string& now) {
  nlohmann::json state = {{"name", check},
                          {"state", answer.state},
                          {"message", answer.message},
                          {"lastTransitionTime", now}};
  if (answer.state == "Retry" && answer.requeueAfterSeconds > 0) {
    state["requeueAfterSeconds"] = answer.requeueAfterSeconds;
  }
  if (!answer.updates.empty()) {
    auto& updates = state["podSetUpdates"] = nlohmann::json::array();
    for (const auto& update : answer.updates) {
      nlohmann::json item = {{"name", update.podSet}};
      if (!update.nodeSelector.empty()) {
        item["nodeSelector"] = update.nodeSelector;
      }
      if (!update.tolerations.empty()) {
        auto& list = item["tolerations"] = nlohmann::json::array();
        for (const auto& toleration : update.tolerations) {
          list.push_back(tolerationToJson(toleration));
        }
      }
      updates.push_back(std::move(item));
    }
  }
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "Workload"},
          {"metadata", {{"name", workload.name}, {"namespace", namespace_}}},
          {"status", {{"admissionChecks", nlohmann::json::array({std::move(state)})}}}};
}

AdmissionCheckView admissionCheckFromJson(const nlohmann::json& object) {
  AdmissionCheckView view;
  view.controllerName = base::stringMember(base::memberOf(object, "spec"), "controllerName");
  const auto& conditions = base::memberOf(base::memberOf(object, "status"), "conditions");
  if (conditions.is_array()) {
    for (const auto& condition : conditions) {
      if (base::stringMember(condition, "type") == "Active") {
        view.active = base::stringMember(condition, "status") == "True";
      }
    }
  }
  return view;
}

nlohmann::json admissionCheckActiveApply(const std::string& name, const std::string& now) {
  nlohmann::json condition = {
      {"type", "Active"},
      {"status", "True"},
      {"reason", "Ready"},
      {"message",
       "gpu-placement-operator answers this check: each Workload whose target a GpuWorkload "
       "places gets the placement's node selector and tolerations within the flavor Kueue "
       "reserved (podSetUpdates), or Retry naming where the flavor disagrees"},
      {"lastTransitionTime", now}};
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "AdmissionCheck"},
          {"metadata", {{"name", name}}},
          {"status", {{"conditions", nlohmann::json::array({std::move(condition)})}}}};
}

}  // namespace gpuplacement::core
