#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/types.h"
#include "core/kinds/ownership.h"
#include "core/kinds/pod_set.h"
#include "core/kinds/target_kind.h"

namespace gpuplacement::core {

struct ContainerResources {
  std::string name;
  // Only the resources placement sets: extended resources (names with a
  // '/'), cpu and memory.
  std::map<std::string, std::string> limits;
  std::map<std::string, std::string> requests;
  // resources.claims: each entry's name and request (empty: the whole claim).
  std::vector<std::pair<std::string, std::string>> claims{};

  bool operator==(const ContainerResources&) const = default;
};

// The label that asks for a Job to be created suspended (the chart's
// admission policy) and resumed by the operator once placed: its value
// names the GpuWorkload.
inline constexpr const char* kWorkloadLabel = "gpuplacement.io/workload";

// How far a kind that can wait suspended has got (a Job, a RayCluster). A
// Job runs its pod template once: it is placed while suspended and never
// started, and never moved after it starts. A RayCluster is placed while
// suspended and resumed by the same write.
struct JobProgress {
  bool suspended = false;  // spec.suspend
  // spec.managedBy names another controller, or Kueue queues it (its
  // kueue.x-k8s.io/queue-name label or annotation): that controller decides
  // when it runs, so the operator places it and leaves spec.suspend alone.
  bool queuedElsewhere = false;
  // Kueue queues it (its kueue.x-k8s.io/queue-name label or annotation):
  // its placement goes to Kueue's admission, as an admission check's
  // answer, and the operator writes nothing to it (core/plan/admission_answer.h).
  bool queuedByKueue = false;
  // Its label gpuplacement.io/workload: the GpuWorkload it waits suspended
  // for. Only such a Job is resumed by the operator; another suspended Job
  // (a person's pause) is placed and left suspended.
  std::string waitsFor;
  std::string startTime;  // status.startTime: set once the Job has started
  std::int32_t active = 0;
  enum class End : std::uint8_t { Running, Complete, Failed };
  End end = End::Running;
  std::string endTime;    // Complete: status.completionTime; Failed: the condition's time
  std::string endReason;  // Failed: the Failed condition's reason and message
  // The object whose pods are the run's, when the kind runs through
  // another it makes: a RayJob's RayCluster (status.rayClusterName), by
  // which its pods are found; empty: its pods are its own.
  std::string runsOn;

  bool started() const { return !startTime.empty() || active > 0; }
  bool operator==(const JobProgress&) const = default;
};

}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::JobProgress::End> {
  static constexpr std::string_view what = "Job end";
  static constexpr auto names = std::to_array<std::string_view>({"Running", "Complete", "Failed"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

// What the operator reads of one pod template: its scheduling fields and
// the resources placement sets.
struct PodTemplateState {
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  // The topologyKey of each of the template's topology spread constraints.
  std::vector<std::string> spreadKeys;
  // What selects the pod set's pods: spec.selector's matchLabels, or the
  // template's labels when the selector has none (a spread counts these).
  std::map<std::string, std::string> podLabels;
  std::vector<ContainerResources> containers;
  // spec.resourceClaims: each entry's name and the ResourceClaimTemplate it
  // names (empty when it names a ResourceClaim).
  std::map<std::string, std::string> podClaims;
  bool gated = false;  // the template carries kSchedulingGate
  // The template's kPodSchedulingAnnotation; nullopt: absent.
  std::optional<std::string> podScheduling;
  // Of the template as the server stores it: tells a new commit (or a
  // rollout restart) from the same manifest applied again.
  std::uint64_t templateDigest = 0;
  // The template as the server stores it, kept only for kinds written by
  // JSON patch (core/kinds/json_patch.h), whose writes are made against it.
  nlohmann::json raw;

  bool operator==(const PodTemplateState&) const = default;
};

// The part of a target the controller reads: its pod sets, the ownership
// record, and how far it has got running them (a rollout, or a Job's
// run). Its own template fields are those of the pod set it places (for a
// kind of several pod sets, the first placed; core/kinds/pod_sets.h).
struct TargetState : PodTemplateState {
  TargetKind kind = TargetKind::Deployment;
  std::string uid;
  std::int64_t generation = 0;
  // Pods running the template at once: spec.replicas, or a Job's
  // parallelism (no more than its completions); for a kind of several pod
  // sets, the pods of those it places by default.
  std::int32_t replicas = 1;
  // Pods a rollout may run above `replicas`: a Deployment's RollingUpdate
  // maxSurge, resolved against replicas (rounded up, as the Deployment
  // controller does; 25% when unset); 0 under Recreate and for the other
  // kinds, which replace a pod only after it is gone.
  std::int32_t surge = 0;
  // Pods a Deployment's rollout may take down before their replacements
  // are ready: RollingUpdate maxUnavailable, resolved against replicas
  // (rounded down, as the Deployment controller does; 25% when unset).
  // Under Recreate every old pod goes first (recreate true).
  std::int32_t unavailable = 0;
  bool recreate = false;
  // The kind's pod sets in the object's order (core/kinds/pod_set.h). A
  // kind of one pod set keeps its template in the target's own fields
  // only; a kind of several keeps each one's in podSetTemplates.
  std::vector<PodSet> podSets;
  std::vector<PodTemplateState> podSetTemplates;
  // The groups its placed pods form (core/kinds/pod_set.h); none for kinds
  // whose pods are each a replica.
  PodGroups groups;
  // metadata.annotations is present (a JSON patch adds to it, or makes it).
  bool annotated = false;
  OwnershipRecord ownership;
  // The rollout (Deployment, StatefulSet).
  std::int64_t observedGeneration = 0;
  std::int32_t updatedReplicas = 0;
  // Deployment: availableReplicas; StatefulSet: readyReplicas (what
  // `kubectl rollout status` waits for).
  std::int32_t availableReplicas = 0;
  std::int32_t statusReplicas = 0;
  // Deployment: Progressing=False with reason ProgressDeadlineExceeded.
  bool progressDeadlineExceeded = false;
  // StatefulSet: currentRevision differs from updateRevision.
  bool revisionPending = false;
  // StatefulSet: updateStrategy OnDelete (its pods take a new template only
  // when they are deleted), and a RollingUpdate partition (pods with a
  // lower ordinal keep the old one).
  bool onDelete = false;
  std::int32_t partition = 0;
  JobProgress job;  // a kind with a suspendPointer only
  // Why it is placed through another object, not itself (a RayJob that
  // selects a running RayCluster; a RayCluster a RayJob or RayService made
  // from its own spec): a sentence naming the field and the object to
  // place instead. Empty for a target placed as itself.
  std::string placedThrough;

  bool operator==(const TargetState&) const = default;

  // The current pod template runs everywhere it should: a finished
  // rollout (every replica updated and available, as `kubectl rollout
  // status` waits for), or a Job that has started.
  bool rolledOut() const;
  // The pod template may still change: always, but for a Job only while it
  // is suspended and has never started (KEP-2926; KEP-5440 adds its pod
  // resources from Kubernetes 1.36).
  bool templateMutable() const;
};

// The size the team gave the target's groups: the object's, or the one the
// operator replaced where its ownership record says the object still holds
// the size it wrote (spec.scaling.groupSize: Set).
std::int32_t teamGroupSize(const TargetState& target);

// Whether the target's groups still have the size the operator wrote, and
// every bound it moved still the same: its to put back.
bool groupSizeStillOurs(const TargetState& target, const OwnedGroupSize& owned);

// The cpu (vCPUs) and memory (GiB) one replica of the pod template asks
// for by the team's own sizing: requests, or limits where a container sets
// only those (the API server defaults one to the other), summed over the
// containers; what the ownership record says the operator set is left out.
struct PodRequests {
  double cpu = 0;
  double memoryGiB = 0;
};
PodRequests teamPodRequests(const TargetState& target);

// Reads a Deployment, StatefulSet or Job object; tolerant of anything missing.
TargetState targetFromJson(TargetKind kind, const nlohmann::json& object);

// The field manager this operator writes as (the API server records it in
// managedFields; GitOps tools are told to ignore what it owns).
inline constexpr const char* kFieldManager = "gpu-placement-operator";

// The last writer of a target's pod template other than `self`, from the
// object's metadata.managedFields: "manager (Operation)"; empty when none
// is recorded. Known only where an object is read with its managedFields
// (a write's answer), never from the cache, which leaves them out.
std::string lastTemplateWriter(const nlohmann::json& object, const std::string& self);

}  // namespace gpuplacement::core
