#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/policy.h"
#include "core/render.h"
#include "core/types.h"

namespace gpuplacement::core {

// The annotation that records exactly what the operator set on a
// Deployment, so later patches and the clean-up touch only that.
inline constexpr const char* kOwnedFieldsAnnotation = "gpuplacement.io/owned-fields";

struct ContainerResources {
  std::string name;
  // Only the resources placement sets: extended resources (names with a
  // '/'), cpu and memory.
  std::map<std::string, std::string> limits;
  std::map<std::string, std::string> requests;

  bool operator==(const ContainerResources&) const = default;
};

// What the operator owns on one Deployment, as recorded in the annotation.
struct OwnedFields {
  std::string workload;  // the GpuWorkload (same namespace) that set them
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::map<std::string, std::string>>
      resources;  // container -> name -> value

  bool empty() const { return nodeSelector.empty() && tolerations.empty() && resources.empty(); }
  bool operator==(const OwnedFields&) const = default;
};

// The ownership annotation as read, once, when the Deployment arrives:
// absent, a record, or text that is not one (edited by hand).
struct OwnershipRecord {
  enum class Form : std::uint8_t { Absent, Readable, Unreadable };
  Form form = Form::Absent;
  OwnedFields fields;        // when Readable
  std::uint64_t digest = 0;  // of the annotation's text: tells our own write in the cache

  bool operator==(const OwnershipRecord&) const = default;
};

// Reads the annotation's text (nullopt: no annotation).
OwnershipRecord readOwnership(const std::optional<std::string>& annotation);

// The part of a Deployment the controller reads: its pod template's
// scheduling fields, the ownership record, and the rollout status.
struct DeploymentState {
  std::string uid;
  std::int64_t generation = 0;
  std::int32_t replicas = 1;  // spec.replicas
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::vector<ContainerResources> containers;
  OwnershipRecord ownership;
  std::int64_t observedGeneration = 0;
  std::int32_t updatedReplicas = 0;
  std::int32_t availableReplicas = 0;
  std::int32_t statusReplicas = 0;
  // Progressing=False with reason ProgressDeadlineExceeded: the rollout is stuck.
  bool progressDeadlineExceeded = false;

  bool operator==(const DeploymentState&) const = default;

  // The rollout of the current generation is finished: every replica runs
  // the current pod template and is available (what `kubectl rollout
  // status` waits for).
  bool rolledOut() const {
    return observedGeneration >= generation && updatedReplicas >= replicas &&
           availableReplicas >= replicas && statusReplicas <= updatedReplicas;
  }
};

// The cpu (vCPUs) and memory (GiB) one replica of the pod template asks
// for by the team's own sizing: requests, or limits where a container sets
// only those (the API server defaults one to the other), summed over the
// containers; what the ownership record says the operator set is left out.
struct PodRequests {
  double cpu = 0;
  double memoryGiB = 0;
};
PodRequests teamPodRequests(const DeploymentState& deployment);

// Reads a Deployment object; tolerant of anything missing.
DeploymentState deploymentFromJson(const nlohmann::json& object);

std::string serializeOwnedFields(const OwnedFields& owned);

// What to send to make a Deployment carry `desired` (or, for nullptr,
// carry nothing of ours), touching only what the operator owns.
struct PatchPlan {
  // A strategic merge patch with a resourceVersion precondition; empty when
  // the Deployment already matches.
  std::optional<nlohmann::json> patch;
  OwnedFields owned;  // the ownership record after the patch
  // Fields the user set that the placement would overwrite. When any, no
  // patch is planned: nothing is half-applied.
  std::vector<std::string> conflicts;
  std::string error;  // e.g. a named container that does not exist

  bool blocked() const { return !conflicts.empty() || !error.empty(); }
};

PatchPlan planDeploymentPatch(const DeploymentState& live, const Scheduling* desired,
                              const std::vector<std::string>& containers,
                              const std::string& workload, const std::string& resourceVersion);

}  // namespace gpuplacement::core
