#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/pod_scheduling.h"
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
  // In the pod template (placed there).
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::map<std::string, std::string>>
      resources;  // container -> name -> value
  // Placed at the pods: the template carries the scheduling gate and the
  // annotation kPodSchedulingAnnotation holding these.
  std::optional<PodScheduling> pods;

  bool empty() const {
    return nodeSelector.empty() && tolerations.empty() && resources.empty() && !pods;
  }
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
  bool gated = false;  // the template carries kSchedulingGate
  // The template's kPodSchedulingAnnotation; nullopt: absent.
  std::optional<std::string> podScheduling;
  // Of spec.template as the server stores it: tells a new commit (or a
  // rollout restart) from the same manifest applied again.
  std::uint64_t templateDigest = 0;
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

// The field manager this operator writes as (the API server records it in
// managedFields; GitOps tools are told to ignore what it owns).
inline constexpr const char* kFieldManager = "gpu-placement-operator";

// The last writer of a Deployment's pod template other than `self`, from
// the object's metadata.managedFields: "manager (Operation)"; empty when
// none is recorded. Known only where an object is read with its
// managedFields (a write's answer), never from the cache, which leaves
// them out.
std::string lastTemplateWriter(const nlohmann::json& object, const std::string& self);

}  // namespace gpuplacement::core
