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

// The labels by which a required pod affinity on the zone keeps each
// group of a kind's pods in one zone: the affinity selects the kind's pods
// (`member`, which every pod of the kind carries) of the pod's own group
// (`group`, whose value a group's pods share and no other group's: the
// term's matchLabelKeys, which the API server turns into the value of each
// pod it makes). The group key cannot be in the selector as well: the API
// server refuses a pod whose selector names a matchLabelKeys key.
struct GroupLabels {
  std::string member;
  std::string group;

  bool empty() const { return group.empty(); }
  bool operator==(const GroupLabels&) const = default;
};

// The bounds a kind's controller holds a group's size within (a Ray worker
// group's minReplicas and maxReplicas: KubeRay runs replicas clamped to
// them), with where each is in the object as a JSON pointer; no pointer:
// the kind has no such bound.
struct SizeBounds {
  std::int32_t min = 0;
  std::int32_t max = INT32_MAX;
  std::string minPointer{};
  std::string maxPointer{};

  bool operator==(const SizeBounds&) const = default;
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
  // What keeps each group in one zone; empty where the kind gives its
  // groups no such label, or its template cannot take the affinity
  // (`affinityFixed`).
  GroupLabels labels{};
  // The operator cannot write its pods' affinity: a JobSet's webhook lets
  // a suspended one change only labels, annotations, nodeSelector,
  // tolerations and scheduling gates, and a TrainJob's overrides take
  // none (its runtime's is shared). Its groups' zone is the team's to keep.
  bool affinityFixed = false;
  // Nor can the size change once the object is created (a JobSet's
  // replicated jobs; a TrainJob's JobSet): a group of another size is
  // created again.
  bool sizeFixed = false;
  // Where the size is in the object, as a JSON pointer
  // ("/spec/leaderWorkerTemplate/size"), for spec.scaling.groupSize: Set
  // to write; empty where it cannot change in place (`sizeFixed`).
  std::string sizePointer{};
  SizeBounds bounds{};
  // Who sets the size instead of the team, where someone does: a sentence
  // naming it ("the Ray autoscaler (spec.enableInTreeAutoscaling: true)").
  // The operator writes no size then, whatever spec.scaling says.
  std::string sizeKeptBy{};
  // The operator writes the size the placement needs: spec.scaling.groupSize
  // is Set, the mode Apply and the kind lets it (set by intentOf, never by
  // the kind).
  bool sizeSet = false;

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
