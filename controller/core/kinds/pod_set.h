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

// The target and pod set a pod was made for.
struct PodOwner {
  std::string target;
  std::string podSet;

  bool operator==(const PodOwner&) const = default;
};

}  // namespace gpuplacement::core
