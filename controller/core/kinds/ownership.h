#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/types.h"
#include "core/kinds/pod_scheduling.h"
#include "core/kinds/pod_set.h"

namespace gpuplacement::core {

// The annotation that records exactly what the operator set on a target
// (a Deployment, a RayCluster's worker groups), so later patches and the clean-up
// touch only that.
inline constexpr const char* kOwnedFieldsAnnotation = "gpuplacement.io/owned-fields";

// A group size the operator wrote (spec.scaling.groupSize: Set), and what
// it replaced: put back on release while the object still holds what the
// operator wrote, and left as it is once someone changed it.
struct OwnedGroupSize {
  std::string pointer;   // where (PodGroups::sizePointer)
  std::int32_t set = 0;  // the size written
  std::int32_t was = 0;  // the team's size before it
  // A bound raised or lowered to `set` so the size is within it (a Ray
  // worker group's maxReplicas, minReplicas): the team's value.
  std::optional<std::int32_t> minWas{};
  std::optional<std::int32_t> maxWas{};

  bool operator==(const OwnedGroupSize&) const = default;
};

// What the operator owns on one target, as recorded in the annotation.
struct OwnedFields {
  std::string workload;  // the GpuWorkload (same namespace) that set them
  // In the pod template (placed there).
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::map<std::string, std::string>>
      resources;  // container -> name -> value
  // Mixed capacity: the topologyKey of the spread constraint we added.
  std::string spreadKey;
  // A group across nodes: the labels of the required pod affinity on the
  // zone we added (core/decide/render.h, Scheduling::zoneGroup).
  GroupLabels zoneGroup;
  // ... and the topologyKey of the preferred pod affinity we added over
  // the same labels (Scheduling::networkDomainKey).
  std::string networkDomainKey;
  // Placed at the pods: the template carries the scheduling gate and the
  // annotation kPodSchedulingAnnotation holding these.
  std::optional<PodScheduling> pods;
  // On claims (DRA): the ResourceClaimTemplate the pod template's
  // spec.resourceClaims entry kPodClaimName names, and the container whose
  // resources.claims lists it.
  std::string claimTemplate;
  std::string claimContainer;
  // For a kind of several pod sets: the pod sets these were set in (the
  // same in each), so one no longer placed is cleared and no other is
  // touched. Empty for a kind of one pod set.
  std::vector<std::string> podSets;
  // The size of the target's groups, where the operator wrote it. A record
  // written before it reads as none.
  std::optional<OwnedGroupSize> groupSize{};

  bool empty() const {
    return nodeSelector.empty() && tolerations.empty() && resources.empty() && spreadKey.empty() &&
           zoneGroup.empty() && networkDomainKey.empty() && !pods && claimTemplate.empty() &&
           !groupSize;
  }
  bool operator==(const OwnedFields&) const = default;
};

// The ownership annotation as read, once, when the target arrives: absent,
// a record, or text that is not one (edited by hand).
struct OwnershipRecord {
  enum class Form : std::uint8_t { Absent, Readable, Unreadable };
  Form form = Form::Absent;
  OwnedFields fields;        // when Readable
  std::uint64_t digest = 0;  // of the annotation's text: tells our own write in the cache

  bool operator==(const OwnershipRecord&) const = default;
};

// Reads the annotation's text (nullopt: no annotation).
OwnershipRecord readOwnership(const std::optional<std::string>& annotation);

std::string serializeOwnedFields(const OwnedFields& owned);

}  // namespace gpuplacement::core
