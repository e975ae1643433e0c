#pragma once

#include <cstdint>
#include <string>

namespace gpuplacement::core {

// One pod template of a target and the pods made from it (Kueue's PodSet):
// a Deployment's one, a Ray cluster's head group and each worker group, a
// LeaderWorkerSet's leader and workers.
struct PodSet {
  std::string name;  // "main"; a Ray worker group's groupName; "leader", "worker"
  std::string role;  // what it is in its kind: "main", "head", "worker", "leader"
  // Carries the model, so the GpuWorkload places it unless its
  // spec.targetRef.podSets names others (a Ray head, which runs no model,
  // is left as the team wrote it).
  bool placedByDefault = true;
  std::int32_t replicas = 1;  // its pods running at once
  // Where its pod template is in the object, as a JSON pointer
  // ("/spec/workerGroupSpecs/0/template").
  std::string templatePointer;

  bool operator==(const PodSet&) const = default;
};

// Pods that run one replica of the model together, one per node where no
// node holds it: a LeaderWorkerSet's groups, a JobSet's replicated job, a
// Ray cluster's worker group. Kinds whose pods are each a replica (a
// Deployment's, a StatefulSet's, a Job's) form none.
struct PodGroups {
  std::int32_t groups = 0;  // replicas of the model, each a group; 0: the kind forms none
  std::int32_t size = 1;    // pods a group has, as the team wrote it
  // Where the size is written, for what the status asks the team to set
  // ("spec.leaderWorkerTemplate.size").
  std::string sizeField;

  bool formed() const { return groups > 0; }
  bool operator==(const PodGroups&) const = default;
};

// The target and pod set a pod was made for.
struct PodOwner {
  std::string target;
  std::string podSet;

  bool operator==(const PodOwner&) const = default;
};

}  // namespace gpuplacement::core
