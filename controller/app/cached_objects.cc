#include "app/cached_objects.h"

#include <algorithm>

#include "core/hash.h"
#include "core/json_access.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

using core::memberOf;
using core::stringMember;

}  // namespace

bool WorkloadObject::hasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

std::uint64_t statusDigest(const json& status) {
  return status.is_null() ? 0 : core::jsonDigest(status);
}

WorkloadObject projectWorkload(const json& object, const core::Catalog& catalog) {
  WorkloadObject workload;
  const auto& metadata = memberOf(object, "metadata");
  workload.uid = stringMember(metadata, "uid");
  workload.generation = core::integerMember(metadata, "generation");
  workload.deleting = memberOf(metadata, "deletionTimestamp").is_string();
  if (const auto& finalizers = memberOf(metadata, "finalizers"); finalizers.is_array()) {
    for (const auto& finalizer : finalizers) {
      if (finalizer.is_string()) {
        workload.finalizers.push_back(finalizer.get<std::string>());
      }
    }
  }
  const auto& spec = memberOf(object, "spec");
  if (const auto& name = memberOf(memberOf(spec, "targetRef"), "name"); name.is_string()) {
    workload.targetName = name.get<std::string>();
  }
  if (const auto& policy = memberOf(memberOf(spec, "policyRef"), "name"); policy.is_string()) {
    workload.policyName = policy.get<std::string>();
  }
  auto parsed = core::parseGpuWorkloadSpec(spec, catalog);
  if (parsed) {
    workload.spec = std::move(parsed).value();
  } else {
    workload.specError = parsed.error();
  }
  const auto& status = memberOf(object, "status");
  workload.status = core::workloadStatusFromJson(status);
  workload.statusHash = statusDigest(status);
  return workload;
}

PolicyObject projectPolicy(const json& object, const core::Catalog& catalog,
                           const core::RuleSet& rules) {
  PolicyObject policy;
  const auto& metadata = memberOf(object, "metadata");
  policy.uid = stringMember(metadata, "uid");
  policy.generation = core::integerMember(metadata, "generation");
  static const json kEmpty = json::object();
  const auto& spec = memberOf(object, "spec");
  auto parsed = core::parsePolicySpec(spec.is_null() ? kEmpty : spec, catalog, rules);
  if (parsed) {
    policy.policy = std::move(parsed).value();
  } else {
    policy.error = parsed.error();
  }
  const auto& status = memberOf(object, "status");
  policy.conditions = core::workloadStatusFromJson(status).conditions;
  policy.workloadCount = core::integerMember(status, "workloads");
  policy.statusHash = statusDigest(status);
  return policy;
}

}  // namespace gpuplacement::app
