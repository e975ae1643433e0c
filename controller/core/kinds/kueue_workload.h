#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

// Kueue's Workload for a target it queues (kueue.x-k8s.io/v1beta2): the
// pod sets as Kueue took them when the target was created, the flavor
// each resource of a pod set was given when quota was reserved, and the
// states of the admission checks that must be Ready before Kueue starts
// it. Read once, when it arrives; Kueue's own fields only.
namespace gpuplacement::core {

// One admission check's state on the Workload.
struct KueueCheckState {
  std::string name;
  std::string state;  // Pending, Ready, Retry or Rejected
  std::string message;

  bool operator==(const KueueCheckState&) const = default;
};

// The flavor each resource of one pod set was given.
struct KueuePodSetAssignment {
  std::string podSet;
  std::map<std::string, std::string> flavors;  // resource name -> ResourceFlavor
  std::int32_t count = 0;                      // pods admitted

  bool operator==(const KueuePodSetAssignment&) const = default;
};

struct KueueWorkload {
  std::string name;
  // The target it stands for: its controlling owner reference.
  std::string ownerKind;
  std::string ownerName;
  std::string ownerUid;
  std::vector<std::string> podSets;  // spec.podSets, by name
  // status.admission: the ClusterQueue whose quota was reserved (empty:
  // none yet) and each pod set's flavors.
  std::string clusterQueue;
  std::vector<KueuePodSetAssignment> assignments;
  std::vector<KueueCheckState> checks;
  bool quotaReserved = false;  // condition QuotaReserved
  bool admitted = false;       // condition Admitted: every check Ready, the target started
  bool evicted = false;        // condition Evicted: its quota is being taken back
  bool finished = false;       // condition Finished

  const KueueCheckState* check(const std::string& checkName) const;
  // The flavor Kueue reserved for a pod set, while its quota is reserved
  // and not being taken back: that of its accelerator (a resource of
  // nvidia.com/ or aws.amazon.com/), else of its first resource; empty
  // when none is.
  std::string reservedFlavor(const std::string& podSet) const;
  const KueuePodSetAssignment* assignment(const std::string& podSet) const;
  bool operator==(const KueueWorkload&) const = default;
};

KueueWorkload kueueWorkloadFromJson(const nlohmann::json& object);

}  // namespace gpuplacement::core
