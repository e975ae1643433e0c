#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cluster/kueue_flavors.h"
#include "core/decide/engine.h"
#include "core/decide/render.h"
#include "core/intent/workload.h"
#include "core/kinds/target.h"
#include "core/plan/replacement.h"
#include "core/plan/status.h"
#include "core/plan/template_patch.h"

// One reconcile of a GpuWorkload as two pure steps around the writes:
//
//   plan   = planWorkload(input)          what to write to the target
//   ...the caller releases plan.release, writes plan.write, notes the outcome...
//   record = recordWorkload(input, plan, outcome)
//                                         finalizers, status, Events, what next
//
// Neither step reads a clock, a cache or the network: the caller passes the
// cached objects and the time in, and performs what comes out. Every branch
// of the reconcile is therefore a row of a table-driven test.
namespace gpuplacement::core {

inline constexpr const char* kFinalizer = "gpuplacement.io/finalizer";

// What a reconcile reads of a GpuWorkload: the spec as parsed when the
// object arrived (or why it does not parse), the parts of status it reads
// back, and a digest of the whole status to tell whether a write is needed.
struct WorkloadObject {
  std::string uid;
  std::int64_t generation = 0;
  bool deleting = false;
  std::vector<std::string> finalizers;
  std::optional<GpuWorkloadSpec> spec;
  Error specError;
  // Even when the spec is invalid, to index by target.
  TargetKind targetKind = TargetKind::Deployment;
  std::string targetName;
  std::string policyName = "default";
  WorkloadStatus status;
  std::uint64_t statusHash = 0;

  bool hasFinalizer() const;
};

// The digest WorkloadObject::statusHash holds for a status document.
std::uint64_t statusDigest(const nlohmann::json& status);

// The engine in force for the workload's policy, or why there is none.
struct PolicyView {
  const PlacementEngine* engine = nullptr;
  std::int64_t generation = 0;  // 0: the built-in policy
  std::string reason;           // PolicyNotFound or PolicyInvalid, when engine is null
  std::string problem;
};

// The target's pods the scheduler cannot place (PodScheduled=False,
// reason Unschedulable).
struct PendingPods {
  int count = 0;
  std::string message;  // the scheduler's, from the one waiting longest
  std::optional<Timestamp> since;

  bool operator==(const PendingPods&) const = default;
};

// The re-placement rollouts of the workload's policy.
struct RolloutView {
  bool holdsSlot = false;    // the target's rollout already holds a slot
  std::size_t inFlight = 0;  // slots of the policy in use
};

// What the operator's caches say of the Kueue Workload of a Job Kueue
// queues, for the GpuWorkload's status.
struct KueueAdmissionView {
  std::string workload;  // its name; empty: Kueue has not made it yet
  // The admission check on it that this operator answers for (its
  // AdmissionCheck's controllerName is kKueueCheckController); empty: none
  // of its checks is the operator's.
  std::string check;
  // The flavor Kueue reserved quota on for the Job's pods
  // (KueueWorkload::reservedFlavor), and what it is where the cache has
  // it: the decision is made within it.
  std::string flavor{};
  std::optional<ResourceFlavorView> flavorView{};
};

struct WorkloadInput {
  std::string ns;    // the GpuWorkload's namespace, and its target's
  std::string name;  // the GpuWorkload's name, as its ownership records carry it
  const WorkloadObject* workload = nullptr;  // null: gone from the cache
  // When the workload is gone: targets whose ownership record still names
  // it (deleted while no operator ran, or its finalizer removed by hand).
  // Their fields are taken back.
  std::vector<TargetRef> orphans;
  const TargetState* target = nullptr;  // the cached target
  std::string targetResourceVersion;
  // No target because targets of its kind cannot be read (RBAC): why.
  std::string targetUnreadable;
  PendingPods pending;  // of the target
  // The HorizontalPodAutoscaler that scales the target, where one does and
  // the operator may read them: its maxReplicas bounds the throughput.
  std::optional<Autoscaler> autoscaler;
  // The target's pods bound to nodes, with what they hold there: room the
  // decision gives back to its own replicas (core/cluster/capacity.h).
  std::vector<OwnPod> ownPods;
  PolicyView policy;
  // What the policy sees of the cluster (candidates, idle devices, node
  // labels); null: none, as offline. Computed once per cluster generation
  // by the caller: a change of it re-places nothing by itself, and what
  // it changes goes through the same gate as a price change.
  const ClusterView* cluster = nullptr;
  RolloutView rollouts;
  Timestamp now;
  // The operator watches pods and may patch them: placing at the pods
  // (behind a scheduling gate) is possible. Without it, placeAt Auto
  // places in the pod template.
  bool podsPlaceable = false;
  // Hold each placed GpuWorkload with our finalizer (--finalizer). Off, the
  // ownership record on the target is what lets its fields be taken back
  // after a deletion, and a finalizer left from before is removed.
  bool useFinalizer = false;
  // The API server lets a suspended Job's pod resources change (KEP-5440:
  // on by default from Kubernetes 1.36). Without it a Job is placed only
  // when its own device requests already match the decision.
  bool jobResourcesMutable = true;
  std::string serverVersion;  // "v1.34.10", for the message when it cannot
  KueueAdmissionView kueue;   // a Job Kueue queues (target->job.queuedByKueue)
};

struct Event {
  std::string type;  // Normal or Warning
  std::string reason;
  std::string message;

  bool operator==(const Event&) const = default;
};

// What the next reconcile of this key should be.
struct NextReconcile {
  enum class Kind { AwaitChange, After, Terminal };
  Kind kind = Kind::AwaitChange;
  std::chrono::seconds after{0};  // for After
  std::string message;            // for Terminal

  bool operator==(const NextReconcile&) const = default;
};

enum class RolloutStep {
  None,
  Reserve,  // take a rollout slot before the write (a damped move starts)
  Wait,     // every slot is taken: wake this workload when one frees
};

struct TargetWrite {
  TargetRef target;
  Scheduling scheduling;
  // What planTemplatePatch is asked (`desired` points at `scheduling`:
  // request() sets it, so the struct may be copied and moved).
  PatchRequest patchRequest;
  // Planned against the cached copy; after a 409 the caller plans it again
  // against the copy it reads fresh.
  PatchPlan patch;

  PatchRequest request(std::string resourceVersion) const {
    PatchRequest copy = patchRequest;
    copy.desired = &scheduling;
    copy.resourceVersion = std::move(resourceVersion);
    return copy;
  }
};

// A Job Kueue queues is never written: its placement is handed to Kueue's
// admission, as the answer of the operator's admission check on its
// Workload (core/plan/admission_answer.h), which Kueue merges into the
// Job when it admits it.
struct KueueHandOff {
  std::optional<Scheduling> scheduling;  // none: not placed (unplaced says why)
  std::vector<std::string> podSets;      // Kueue's pod set names the scheduling is for
  std::string unplaced;
  // The flavor Kueue had reserved when it was decided (empty: none yet):
  // the check is answered only for that reservation.
  std::string flavor{};

  bool operator==(const KueueHandOff&) const = default;
};

// Step one: the target writes. The rest of the struct carries what step
// two needs and is not meant for callers.
struct WorkloadPlan {
  // Take this workload's fields off these targets (same namespace) first.
  std::vector<TargetRef> release;
  std::optional<TargetWrite> write;
  RolloutStep rollout = RolloutStep::None;
  // Set for a Job Kueue queues: what its admission check answers with.
  std::optional<KueueHandOff> kueue;

  // ---- carried to recordWorkload ----
  bool deletion = false;
  std::vector<Condition> conditions;
  std::vector<Event> events;
  StatusView view;
  std::optional<Decision> decision;
  Gate gate;
  Placement wanted;
  NextReconcile next;
};

WorkloadPlan planWorkload(const WorkloadInput& input);

// What became of plan.write.
struct TargetOutcome {
  enum class Kind {
    Written,    // patched; `state` is the target the server answered with
    Unchanged,  // it already carried the placement; `state` as it is
    Blocked,    // the team's fields (or a missing container) stand in the way
    NotFound,   // the target is gone
    Forbidden,  // the server refused the operator the write (403); `error` says which
    // The server refused to change a suspended Job's pod resources (a
    // server before Kubernetes 1.36, or KEP-5440's gate off): nothing was
    // written; `error` has the server's words.
    JobResourcesImmutable,
  };
  Kind kind = Kind::Unchanged;
  TargetState state;
  std::vector<std::string> conflicts;  // Blocked
  std::string error;                   // Blocked without conflicts, Forbidden
  // Written: the last writer of the pod template other than the operator,
  // from the answer's managedFields ("kustomize-controller (Apply)").
  std::string templateWriter{};
};

// The outcome when plan.write needs no request: its patch is empty or blocked.
std::optional<TargetOutcome> outcomeWithoutWrite(const TargetWrite& write,
                                                 const TargetState& state);

// Step two: everything to record once the target writes are done.
struct WorkloadRecord {
  std::optional<std::vector<std::string>> finalizers;  // to write, when they change
  std::optional<nlohmann::json> status;  // to write, when it differs from the stored one
  std::uint64_t statusDigest = 0;        // statusDigest(*status), when there is one
  std::vector<Event> events;
  std::optional<Placement> inForce;     // what runs now, for the cost gauges (not an ended Job)
  std::optional<Placement> placedNow;   // written by this reconcile
  std::optional<double> monthlySaving;  // of a re-placement written by this reconcile
  bool releaseSlot = false;             // the target's rollout slot may go to the next workload
  NextReconcile next;
};

// `outcome` is null when the plan wrote no target (plan.write is empty).
WorkloadRecord recordWorkload(const WorkloadInput& input, WorkloadPlan plan,
                              const TargetOutcome* outcome);

// "g5.xlarge (1x A10G) spot": a placement in one phrase, for Events.
std::string describePlacement(const Placement& placement);

}  // namespace gpuplacement::core
