#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/catalog/rules.h"
#include "core/intent/policy.h"
#include "core/kinds/target.h"
#include "core/plan/status.h"
#include "core/plan/workload_plan.h"

namespace gpuplacement::app {

// What the informer stores of a GpuWorkload, parsed once when it arrives:
// the fields its event handlers compare, as they are; the rest packed (the
// validated spec field by field, or why it does not validate, and the
// status the controller reads back), unpacked once per reconcile without
// parsing anything again. About 0.5 KB per workload instead of 2.5 KB of
// small allocations.
struct CachedWorkload {
  std::int64_t generation = 0;
  bool deleting = false;
  bool movedByReplacement = false;  // status.applied.replacement
  std::uint64_t finalizersDigest = 0;
  std::uint64_t statusHash = 0;
  // Even when the spec is invalid, to index by target.
  core::TargetKind targetKind = core::TargetKind::Deployment;
  std::string targetName;
  std::string policyName = "default";
  std::string packed;  // uid, finalizers, spec or its error, status read-back

  core::WorkloadObject unpack() const;
};

// Parses and validates the spec against the catalog (which is fixed for
// the process's life) once, here.
CachedWorkload packWorkload(const nlohmann::json& object, const core::Catalog& catalog);

// What an informer stores of a target (a Deployment, StatefulSet or Job):
// the rollout figures as they are; the scheduling fields, the parsed
// ownership record and a Job's progress packed.
struct CachedTarget {
  core::TargetKind kind = core::TargetKind::Deployment;
  bool progressDeadlineExceeded = false;
  bool revisionPending = false;
  std::int64_t generation = 0;
  std::int64_t observedGeneration = 0;
  std::int32_t replicas = 1;
  std::int32_t updatedReplicas = 0;
  std::int32_t availableReplicas = 0;
  std::int32_t statusReplicas = 0;
  std::uint64_t templateDigest = 0;
  std::string owner;              // the GpuWorkload its ownership record names, if any
  std::uint64_t ownedDigest = 0;  // of the ownership record's text
  std::string packed;             // node selector, tolerations, device resources, ownership, Job

  core::TargetState unpack() const;
  bool operator==(const CachedTarget&) const = default;
};

CachedTarget packTarget(const core::TargetState& state);

// What the informer keeps of a PlacementPolicy.
struct PolicyObject {
  std::string uid;
  std::int64_t generation = 0;
  std::optional<core::Policy> policy;
  base::Error error;
  std::vector<core::Condition> conditions;
  std::int64_t workloadCount = 0;  // status.workloads as written
  std::uint64_t statusHash = 0;
};

PolicyObject projectPolicy(const nlohmann::json& object, const core::Catalog& catalog,
                           const core::RuleSet& rules);

}  // namespace gpuplacement::app
