#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog.h"
#include "core/policy.h"
#include "core/rules.h"
#include "core/status.h"
#include "core/workload.h"

namespace gpuplacement::app {

inline constexpr const char* kFinalizer = "gpuplacement.io/finalizer";

// What the informer keeps of a GpuWorkload: the parsed spec (or why it
// does not parse), the parts of status the controller reads back, and a
// digest of the whole status to tell whether a write is needed.
struct WorkloadObject {
  std::string uid;
  std::int64_t generation = 0;
  bool deleting = false;
  std::vector<std::string> finalizers;
  std::optional<core::GpuWorkloadSpec> spec;
  core::Error specError;
  std::string targetName;  // even when the spec is invalid, to index by target
  std::string policyName = "default";
  core::WorkloadStatus status;
  std::uint64_t statusHash = 0;

  bool hasFinalizer() const;
};

WorkloadObject projectWorkload(const nlohmann::json& object, const core::Catalog& catalog);

// What the informer keeps of a PlacementPolicy.
struct PolicyObject {
  std::string uid;
  std::int64_t generation = 0;
  std::optional<core::Policy> policy;
  core::Error error;
  std::vector<core::Condition> conditions;
  std::int64_t workloadCount = 0;  // status.workloads as written
  std::uint64_t statusHash = 0;
};

PolicyObject projectPolicy(const nlohmann::json& object, const core::Catalog& catalog,
                           const core::RuleSet& rules);

// The digest of a status document as the API server stores it.
std::uint64_t statusDigest(const nlohmann::json& status);

}  // namespace gpuplacement::app
