#include "core/kinds/kueue_workload.h"

#include <algorithm>

#include "base/json_access.h"

namespace gpuplacement::core {
namespace {

using base::memberOf;
using base::stringMember;
using json = nlohmann::json;

bool conditionTrue(const json& status, const char* type) {
  const auto& conditions = memberOf(status, "conditions");
  if (!conditions.is_array()) {
    return false;
  }
  return std::any_of(conditions.begin(), conditions.end(), [&](const json& condition) {
    return stringMember(condition, "type") == type && stringMember(condition, "status") == "True";
  });
}

}  // namespace

const KueueCheckState* KueueWorkload::check(const std::string& checkName) const {
  const auto it = std::find_if(checks.begin(), checks.end(), [&](const KueueCheckState& state) {
    return state.name == checkName;
  });
  return it == checks.end() ? nullptr : &*it;
}

const KueuePodSetAssignment* KueueWorkload::assignment(const std::string& podSet) const {
  const auto it =
      std::find_if(assignments.begin(), assignments.end(),
                   [&](const KueuePodSetAssignment& entry) { return entry.podSet == podSet; });
  return it == assignments.end() ? nullptr : &*it;
}

std::string KueueWorkload::reservedFlavor(const std::string& podSet) const {
  const auto* reserved = assignment(podSet);
  if (!quotaReserved || evicted || finished || !reserved || reserved->flavors.empty()) {
    return "";
  }
  for (const auto& [resource, flavor] : reserved->flavors) {
    if (resource.starts_with("nvidia.com/") || resource.starts_with("aws.amazon.com/")) {
      return flavor;
    }
  }
  return reserved->flavors.begin()->second;
}

KueueWorkload kueueWorkloadFromJson(const json& object) {
  KueueWorkload workload;
  const auto& metadata = memberOf(object, "metadata");
  workload.name = stringMember(metadata, "name");
  if (const auto& owners = memberOf(metadata, "ownerReferences"); owners.is_array()) {
    for (const auto& owner : owners) {
      if (memberOf(owner, "controller") == true) {
        workload.ownerKind = stringMember(owner, "kind");
        workload.ownerName = stringMember(owner, "name");
        workload.ownerUid = stringMember(owner, "uid");
        break;
      }
    }
  }
  if (const auto& podSets = memberOf(memberOf(object, "spec"), "podSets"); podSets.is_array()) {
    for (const auto& podSet : podSets) {
      // Kueue defaults a pod set's name to "main".
      workload.podSets.push_back(base::stringOf(memberOf(podSet, "name"), "main"));
    }
  }
  const auto& status = memberOf(object, "status");
  const auto& admission = memberOf(status, "admission");
  workload.clusterQueue = stringMember(admission, "clusterQueue");
  if (const auto& assignments = memberOf(admission, "podSetAssignments"); assignments.is_array()) {
    for (const auto& item : assignments) {
      KueuePodSetAssignment assignment;
      assignment.podSet = base::stringOf(memberOf(item, "name"), "main");
      if (const auto& flavors = memberOf(item, "flavors"); flavors.is_object()) {
        for (const auto& [resource, flavor] : flavors.items()) {
          assignment.flavors[resource] = base::stringOf(flavor);
        }
      }
      assignment.count = static_cast<std::int32_t>(
          std::clamp<std::int64_t>(base::integerMember(item, "count"), 0, INT32_MAX));
      workload.assignments.push_back(std::move(assignment));
    }
  }
  if (const auto& checks = memberOf(status, "admissionChecks"); checks.is_array()) {
    for (const auto& check : checks) {
      workload.checks.push_back({stringMember(check, "name"), stringMember(check, "state"),
                                 stringMember(check, "message")});
    }
  }
  workload.quotaReserved = conditionTrue(status, "QuotaReserved");
  workload.admitted = conditionTrue(status, "Admitted");
  workload.evicted = conditionTrue(status, "Evicted");
  workload.finished = conditionTrue(status, "Finished");
  return workload;
}

}  // namespace gpuplacement::core
