#include "core/plan/workload_plan.h"

#include <algorithm>

#include "base/decimal.h"
#include "core/cluster/region.h"
#include "core/explain/explainer.h"
#include "core/kinds/pod_sets.h"
#include "core/plan/admission_answer.h"
#include "core/plan/fallback.h"
#include "core/plan/job_plan.h"
#include "core/plan/job_steps.h"
#include "core/plan/pod_sets_patch.h"
#include "core/plan/reverts.h"
#include "core/plan/rollout_room.h"
#include "core/plan/status_draft.h"

namespace gpuplacement::core {
namespace {

using reconcile::assessApplied;
using reconcile::placementInForce;
using reconcile::StatusDraft;
using reconcile::wakeAfter;

ClusterContext clusterContextFor(const WorkloadInput& input, const WorkloadPlan& plan,
                                 const PlacementEngine& engine) {
  ClusterContext context;
  context.view = input.cluster;
  if (input.cluster && plan.view.applied && input.target) {
    const auto& applied = *plan.view.applied;
    context.own.instance = engine.catalog().indexOf(applied.instanceType);
    context.own.capacity = applied.capacityType;
    context.own.devices = applied.acceleratorCount;
    context.own.migProfile = applied.migProfile;
    context.own.shared = applied.timeSlices > 0;
    // Its replicas bound to nodes of the type, not the target's replica
    // count: a replica with no pod yet holds no device, and counting it
    // would price a device other pods hold as its own.
    for (const auto& pod : input.ownPods) {
      context.own.replicas +=
          pod.instanceType == applied.instanceType && pod.devices == applied.acceleratorCount &&
          pod.migProfile == applied.migProfile && pod.shared == (applied.timeSlices > 0) &&
          (applied.capacityType == CapacityType::Mixed || pod.capacity == applied.capacityType);
    }
  }
  if (input.cluster) {
    context.ownPods = input.ownPods;
  }
  return context;
}

void planDeletion(const WorkloadObject& workload, WorkloadPlan& plan) {
  plan.deletion = true;
  if (!workload.hasFinalizer()) {
    return;  // another finalizer holds it; nothing of ours is left
  }
  if (workload.status.applied) {
    const auto& applied = *workload.status.applied;
    plan.release.push_back({applied.targetKind, applied.targetName});
  }
  const TargetRef target{workload.targetKind, workload.targetName};
  if (!target.name.empty() &&
      std::find(plan.release.begin(), plan.release.end(), target) == plan.release.end()) {
    plan.release.push_back(target);
  }
}

GateInput gateInputFor(const WorkloadInput& input, const WorkloadObject& workload,
                       const WorkloadIntent& intent, const PlacementEngine& engine,
                       const Placement& wanted, const Assessment* current) {
  const auto& settings = engine.policy().replacement;
  const AppliedRecord* applied = workload.status.applied ? &*workload.status.applied : nullptr;
  GateInput gate;
  gate.wanted = &wanted;
  gate.applied = applied;
  gate.current = current;
  gate.specChanged = applied && applied->specGeneration != workload.generation;
  gate.objective = intent.objective;
  gate.settings = settings;
  gate.now = input.now;
  if (applied) {
    if (auto time = base::parseRfc3339(applied->time); time) {
      gate.lastMove = *time;
    }
  }
  // A kind placed before it runs (a Job) rolls nothing out: no slot is taken.
  gate.rolloutSlotFree =
      input.rollouts.holdsSlot || (input.target && !traitsOf(input.target->kind).rollsOut) ||
      input.rollouts.inFlight < static_cast<std::size_t>(settings.maxConcurrentRollouts);
  gate.hoursPerMonth = engine.policy().hoursPerMonth;
  gate.replicas = intent.replicas;
  return gate;
}

// Whether the decision moves the workload now, and what the target should
// carry meanwhile.
void planMove(const WorkloadInput& input, const WorkloadObject& workload,
              const WorkloadIntent& intent, const PlacementEngine& engine,
              std::optional<Assessment> current, WorkloadPlan& plan) {
  const Placement& best = *plan.decision->placement;
  if (plan.view.applied) {
    const auto& applied = *plan.view.applied;
    for (const auto& entry : plan.view.unavailable) {
      if (entry.instanceType == applied.instanceType && current->feasible) {
        current->feasible = false;  // a forced move, within the rollout budget
        current->reason = "no capacity for " + entry.instanceType + ": " + entry.message;
      }
    }
  }
  plan.gate = gateReplacement(
      gateInputFor(input, workload, intent, engine, best, current ? &*current : nullptr));
  plan.wanted = best;
  switch (plan.gate.verdict) {
    case GateVerdict::Apply:
      if (plan.gate.replacement && !input.rollouts.holdsSlot &&
          traitsOf(input.target->kind).rollsOut) {
        plan.rollout = RolloutStep::Reserve;
      }
      break;
    case GateVerdict::Keep:
      break;
    case GateVerdict::Hold:
    case GateVerdict::Cooldown:
    case GateVerdict::WaitForRollout:
      // The placement in force stays; the better one is shown, with why not.
      plan.wanted = placementInForce(*plan.view.applied, *current, *plan.decision, engine, intent);
      plan.view.recommendation = best;
      plan.view.recommendationNote = plan.gate.message;
      if (plan.gate.verdict == GateVerdict::Cooldown) {
        wakeAfter(plan.next, plan.gate.wait);
      } else if (plan.gate.verdict == GateVerdict::WaitForRollout) {
        plan.rollout = RolloutStep::Wait;
      }
      break;
  }
}

// Where the node selector and tolerations go; nullopt when they cannot
// go where the policy says (at the pods, without pods to patch).
std::optional<PlaceAt> placeAtFor(const WorkloadInput& input, const Policy& policy,
                                  StatusDraft& draft, WorkloadPlan& plan) {
  if (!input.podsPlaceable) {
    const auto& ownership = input.target->ownership;
    if (policy.placeAt != PlaceAt::PodTemplate &&
        ownership.form == OwnershipRecord::Form::Readable && ownership.fields.pods) {
      // Placed at the pods, and the pods are not known yet (the cache is
      // still filling after a start): moving the placement back into the
      // template would roll the target twice for nothing. Wait.
      wakeAfter(plan.next, std::chrono::seconds(10));
      return std::nullopt;
    }
    if (policy.placeAt == PlaceAt::Pods) {
      draft.notApplied("CannotGatePods",
                       "the policy's placeAt: Pods needs the operator to watch and patch pods "
                       "(RBAC: list, watch and patch pods), which it cannot: nothing is written");
      return std::nullopt;
    }
    return PlaceAt::PodTemplate;
  }
  return resolvePlaceAt(policy.placeAt, *input.target);
}

// The condition message when the target's groups are not the size the
// placement needs and the operator does not write it: the field and the
// size, and why it is not written.
std::string groupSizeNeeded(const GpuWorkloadSpec& spec, const PodGroups& groups, int teamSize,
                            const Placement& wanted) {
  const int nodes = wanted.nodesPerReplica;
  const auto size = std::to_string(nodes);
  std::string message = "no single node holds a replica: it needs groups of " + size +
                        " pods, one on each of " + size + " " + wanted.instanceType +
                        " nodes, and " + groups.sizeField + " is " + std::to_string(teamSize);
  const bool askedToSet = spec.scaling.groupSize == GroupSizePolicy::Set;
  if (groups.sizeFixed) {
    return message + ": set it to " + size +
           " in the manifest and create it again (it cannot change once created" +
           (askedToSet ? ", so spec.scaling.groupSize: Set cannot set it in place" : "") +
           "); nothing is written";
  }
  if (!groups.sizeKeptBy.empty()) {
    return message + ", which " + groups.sizeKeptBy +
           " sets, not the operator: raise the group's minReplicas to " + size +
           " and the placement is written; nothing is written until then";
  }
  return message + ": set it to " + size +
         " (or set spec.scaling.groupSize: Set to let the operator write it) and the placement "
         "is written; nothing is written until then";
}

// The target write for plan.wanted, under the labels the cluster's nodes
// carry when there is a cluster view.
void planWrite(const WorkloadInput& input, const GpuWorkloadSpec& spec,
               const PlacementEngine& engine, StatusDraft& draft, WorkloadPlan& plan) {
  const auto placeAt = placeAtFor(input, engine.policy(), draft, plan);
  if (!placeAt) {
    return;
  }
  // A replica across nodes runs as a group of one pod a node: devices
  // written into groups of another size would split the model over pods
  // that cannot hold it. The size is the team's (GitOps re-applies it),
  // unless spec.scaling.groupSize lets the operator write it beside the
  // placement.
  const auto& groups = input.target->groups;
  const int nodes = plan.wanted.nodesPerReplica;
  const bool setsSize = spec.scaling.groupSize == GroupSizePolicy::Set &&
                        !groups.sizePointer.empty() && groups.sizeKeptBy.empty();
  if (const int teamSize = teamGroupSize(*input.target);
      nodes > 1 && teamSize != nodes && !setsSize) {
    plan.view.applied.reset();
    plan.view.placement = plan.wanted;
    draft.notApplied("GroupSizeNeeded", groupSizeNeeded(spec, groups, teamSize, plan.wanted));
    return;
  }
  TargetWrite write;
  write.target = spec.targetRef;
  write.scheduling =
      input.cluster
          ? renderScheduling(plan.wanted, engine.catalog(), engine.policy(), input.cluster->labels)
          : renderScheduling(plan.wanted, engine.catalog(), engine.policy());
  if (plan.wanted.nodesPerReplica > 1) {
    // The kind names the label its groups' pods share (empty where its
    // template cannot take the affinity; the reason says so).
    write.scheduling.zoneGroup = groups.labels;
  }
  const auto& kind = traitsOf(input.target->kind);
  const bool resourcesFixed =
      kind.resources == ResourcesWritable::Never ||
      (kind.resources == ResourcesWritable::From136 && !input.jobResourcesMutable);
  if (resourcesFixed) {
    // Such a server refuses the whole write when a suspended Job's
    // resources change: the devices are worth it, the host memory default
    // (a request the Job's own manifest may set) is not.
    write.scheduling.requestsOnly.clear();
  }
  write.patchRequest.containers = spec.containers;
  write.patchRequest.podSets = spec.podSets;
  write.patchRequest.workload = input.name;
  write.patchRequest.where = *placeAt;
  write.patchRequest.groupSize = nodes > 1 && setsSize ? nodes : 0;
  // Resumed only when it waits suspended for this GpuWorkload (its label):
  // a Job another controller queues (Kueue, spec.managedBy) is resumed by
  // it, and one suspended by a person stays so.
  const auto& job = input.target->job;
  write.patchRequest.start =
      kind.resumedByPlacement && !job.queuedElsewhere && job.waitsFor == input.name;
  write.patch = planPodSetsPatch(*input.target, write.request(input.targetResourceVersion));
  plan.write = std::move(write);
  const auto& patch = plan.write->patch;
  if (resourcesFixed && patch.resourcesChanged && !patch.blocked()) {
    // Refused whole by such a server, or by the kind's webhook: nothing is
    // sent, the target stays as it is.
    const auto container = deviceContainer(*input.target, spec.containers);
    const bool never = kind.resources == ResourcesWritable::Never;
    const auto message = never
                             ? resourcesFixedMessage(input.target->kind, spec.targetRef.name,
                                                     placedPodSetNames(*input.target, spec.podSets),
                                                     container, plan.write->scheduling)
                             : resourcesImmutableMessage(spec.targetRef.name, input.serverVersion,
                                                         container, plan.write->scheduling, "");
    plan.write.reset();
    plan.view.applied.reset();
    plan.view.placement = plan.wanted;
    draft.notApplied(never ? "ResourcesFixed" : "JobResourcesImmutable", message);
  }
}

// Fields of the placement in force taken back from the target: put
// them back, or, when someone keeps taking them, stop and say who.
void planReverts(const WorkloadInput& input, const WorkloadObject& workload, StatusDraft& draft,
                 WorkloadPlan& plan) {
  RevertInput reverts;
  reverts.previous = workload.status.reverts;
  reverts.specChanged =
      plan.view.applied && plan.view.applied->specGeneration != workload.generation;
  reverts.targetGeneration = input.target->generation;
  reverts.targetTemplate = input.target->templateDigest;
  reverts.now = input.now;
  if (plan.write) {
    const auto& patch = plan.write->patch;
    reverts.takenBack = plan.view.applied && plan.gate.verdict != GateVerdict::Apply &&
                        patch.patch.has_value() && !patch.blocked() && !patch.resumesOnly;
    reverts.fields = patch.fields;
  }
  auto step = nextRevertStep(reverts);
  plan.view.reverts = std::move(step.record);
  if (!step.write) {
    const TargetRef target = plan.write->target;  // a copy: the write goes
    plan.write.reset();
    plan.view.placement = plan.wanted;
    draft.notApplied("ManagerConflict", describeStop(*plan.view.reverts, target.kind, target.name));
  }
}

// A write that changes the pod template starts a rollout; where it could
// not finish on the room there is, it is not sent, and the status says why
// and what would let it through. What runs keeps running.
void holdStalledRollout(const WorkloadInput& input, const WorkloadIntent& intent,
                        const PlacementEngine& engine, StatusDraft& draft, WorkloadPlan& plan) {
  if (!plan.write || !plan.write->patch.patch || plan.write->patch.fields.empty() ||
      plan.write->patch.blocked()) {
    return;
  }
  RolloutRoomInput room;
  room.target = input.target;
  room.targetName = plan.write->target.name;
  room.wanted = &plan.wanted;
  room.view = input.cluster;
  room.catalog = &engine.catalog();
  room.podCpu = intent.podCpu;
  room.podMemoryGiB = intent.podMemoryGiB;
  const auto stall = rolloutStall(room);
  if (!stall) {
    return;
  }
  plan.write.reset();
  plan.rollout = RolloutStep::None;
  plan.view.placement = plan.wanted;
  draft.set("Applied", "False", "RolloutWouldStall", *stall);
  draft.report("Applied", "RolloutWouldStall", "Warning", *stall);
  // Room frees as other pods go; a node may be added.
  wakeAfter(plan.next, std::chrono::seconds(30));
}

// Under a Nodes view, a type left for lack of capacity is retried only once
// one of its nodes shows a device free; elsewhere only the retry time can
// tell (a NodePool's launches fail only on trying).
std::function<bool(const std::string&, CapacityType)> roomSeenIn(const ClusterView* view,
                                                                 const Catalog& catalog) {
  if (!view || view->capacity.source != CapacitySource::Nodes) {
    return nullptr;
  }
  return [view, &catalog](const std::string& type, CapacityType capacity) {
    const int index = catalog.indexOf(type);
    if (index >= 0 && catalog.instances[static_cast<std::size_t>(index)].acceleratorCount == 0) {
      return true;  // CPU: free room is not in the view
    }
    const Offer* offer = view->capacity.offer(index, capacity);
    return offer && offer->largestIdle > 0;
  };
}

// A fallback stays within the tiers of the types it left unless the policy
// allows crossing: a CPU model is not moved onto a GPU at several times
// the cost for lack of CPU room. Returns the tiers kept ("CPU"), or empty
// when nothing was left.
std::string keepFallbackTiers(const std::vector<UnavailableType>& unavailable,
                              const Catalog& catalog, WorkloadIntent& intent) {
  std::vector<Tier> left;
  for (const auto& entry : unavailable) {
    const int index = catalog.indexOf(entry.instanceType);
    if (index < 0) {
      continue;
    }
    const Tier tier = catalog.instances[static_cast<std::size_t>(index)].tier;
    if (std::find(left.begin(), left.end(), tier) == left.end()) {
      left.push_back(tier);
    }
  }
  if (left.empty()) {
    return "";
  }
  auto& tiers = intent.constraints.tiers;
  if (!tiers.empty()) {
    left.erase(std::remove_if(left.begin(), left.end(),
                              [&](Tier tier) {
                                return std::find(tiers.begin(), tiers.end(), tier) == tiers.end();
                              }),
               left.end());
  }
  std::sort(left.begin(), left.end());
  tiers = left;
  std::string names;
  for (const Tier tier : left) {
    names += (names.empty() ? "" : ", ") + std::string(base::nameOf(tier));
  }
  return names;
}

// Types whose pods stayed unschedulable too long are left for a while:
// excluded from the decision, recorded in status, reported once.
// Returns the tiers the fallback is kept to (keepFallbackTiers).
std::string planFallback(const WorkloadInput& input, const WorkloadObject& workload,
                         const PlacementEngine& engine, WorkloadPlan& plan,
                         WorkloadIntent& intent) {
  FallbackInput fallback;
  if (plan.view.applied && input.target) {
    const auto& applied = *plan.view.applied;
    fallback.instanceType = applied.instanceType;
    fallback.capacityType = applied.capacityType;
    if (auto time = base::parseRfc3339(applied.time); time) {
      fallback.placedAt = *time;
    }
  }
  fallback.pendingCount = input.pending.count;
  fallback.pendingMessage = input.pending.message;
  fallback.pendingSince = input.pending.since;
  fallback.unavailable = workload.status.unavailable;
  fallback.settings = engine.policy().capacity;
  fallback.now = input.now;
  fallback.roomFor = roomSeenIn(input.cluster, engine.catalog());
  auto step = fallbackStep(fallback);
  for (const auto& entry : step.unavailable) {
    intent.constraints.excludedInstanceTypes.push_back(entry.instanceType);
  }
  std::string keptTo;
  if (!engine.policy().capacity.fallbackAcrossTiers) {
    keptTo = keepFallbackTiers(step.unavailable, engine.catalog(), intent);
  }
  if (step.left) {
    plan.events.push_back(
        {"Warning", "FellBack",
         "pods of " + describeTarget(plan.view.applied->targetKind, plan.view.applied->targetName) +
             " could not be scheduled on " + step.left->instanceType + " for " +
             std::to_string(engine.policy().capacity.fallbackAfter.count()) + " s (" +
             step.left->message + "): it is left until " + step.left->until +
             "; placing on the next-best type"});
  }
  if (step.recheckAfter) {
    wakeAfter(plan.next, *step.recheckAfter);
  }
  plan.view.unavailable = std::move(step.unavailable);
  return keptTo;
}

// Nothing to place on: NoCapacity when types were left for lack of it.
void notPlaceable(const Decision& decision, const std::vector<UnavailableType>& unavailable,
                  const std::string& fallbackTiers, StatusDraft& draft) {
  if (unavailable.empty()) {
    draft.notPlaced("CannotPlace", decision.cannotPlace, "cannot place: " + decision.cannotPlace);
    return;
  }
  const std::string message =
      "no capacity: tried " + describeTried(unavailable) + "; " +
      (fallbackTiers.empty() ? ""
                             : "the fallback stays on " + fallbackTiers +
                                   " (the policy's capacity.fallbackAcrossTiers is false): ") +
      decision.cannotPlace;
  draft.notPlaced("NoCapacity", message, message);
}

// What Recommend mode says of the target it leaves alone.
std::string recommendOnlyMessage(const TargetRef& ref, const TargetState* target) {
  std::string message = "mode is Recommend: " + describeTarget(ref) + " is not changed";
  if (target && traitsOf(target->kind).resumedByPlacement && target->templateMutable() &&
      !target->job.queuedElsewhere) {
    message +=
        "; it stays suspended, since only a placement resumes it (set mode Apply, or "
        "resume it yourself)";
  }
  return message;
}

// A batch/v1 Job Kueue queues: Kueue decides when it runs and against
// which flavor's quota, and merges into it what the operator's admission
// check answers. Other kinds Kueue queues are still placed in their
// template (queuedElsewhere: the resume left to their queue).
bool throughKueue(const WorkloadInput& input) {
  return input.target && input.target->kind == TargetKind::Job && input.target->job.queuedByKueue;
}

// Where the placement of a Job Kueue queues is, in words: the check and
// the Workload that carry it.
std::string kueueCarrier(const KueueAdmissionView& kueue) {
  if (kueue.workload.empty()) {
    return "the operator's admission check on its Kueue Workload (not made yet)";
  }
  if (kueue.check.empty()) {
    return "no admission check of the operator's: none of Workload " + kueue.workload +
           "'s checks is an AdmissionCheck of controllerName " + kKueueCheckController +
           " (list one in the ClusterQueue's spec.admissionChecksStrategy: "
           "docs/operating/kueue.md), so Kueue admits it where its flavor says";
  }
  return "admission check " + kueue.check + " on Workload " + kueue.workload;
}

// The placement of a Job Kueue queues goes to its admission check, never
// into the Job: Kueue restores its own snapshot of the template on
// eviction and fails a Workload whose template disagrees with its flavor.
void planThroughKueue(const WorkloadInput& input, const TargetRef& target, const Decision& decision,
                      const PlacementEngine& engine, StatusDraft& draft, WorkloadPlan& plan) {
  if (plan.view.applied) {
    plan.release.push_back(target);  // written before Kueue queued it: taken back
    plan.view.applied.reset();
  }
  plan.view.placement = decision.placement;
  const auto job = describeTarget(target);
  const auto carrier = kueueCarrier(input.kueue);
  if (plan.kueue && !plan.kueue->scheduling) {
    // The flavor Kueue reserved is outside what the workload allows.
    const auto message = "Kueue reserved flavor " + input.kueue.flavor + " for " + job + ": " +
                         plan.kueue->unplaced + "; " + carrier +
                         " answers Retry, and Kueue tries again (another flavor, where the "
                         "ClusterQueue's flavorFungibility lets it)";
    draft.set("Applied", "False", "WaitingForKueue", message);
    draft.set("Ready", "False", "WaitingForKueue", message);
    return;
  }
  KueueHandOff handOff;
  handOff.scheduling =
      input.cluster ? renderScheduling(*decision.placement, engine.catalog(), engine.policy(),
                                       input.cluster->labels)
                    : renderScheduling(*decision.placement, engine.catalog(), engine.policy());
  handOff.podSets = {"main"};  // Kueue's one pod set of a batch/v1 Job
  handOff.flavor = input.kueue.flavor;
  plan.kueue = std::move(handOff);
  if (input.target->job.started()) {
    const auto message = "Kueue admitted " + job + " with the placement given through " + carrier +
                         "; the operator does not write the Job";
    draft.set("Applied", "True", "ThroughKueue", message);
    draft.set("Ready", "True", "ThroughKueue", message);
    return;
  }
  const auto within =
      input.kueue.flavor.empty() ? std::string() : ", decided within flavor " + input.kueue.flavor;
  const auto message = "Kueue queues " + job + ": the placement" + within + " goes to " + carrier +
                       ", which Kueue writes into the Job when it admits it; the operator "
                       "does not write the Job";
  draft.set("Applied", "False", "WaitingForKueue", message);
  draft.set("Ready", "False", "WaitingForKueue", message);
}

// A Job Kueue queues, once Kueue reserved a flavor for it: the intent
// narrowed to that flavor, where the catalog knows the nodes its labels
// name (a flavor keyed on labels it does not know, a NodePool's own, is
// answered as decided, and Kueue's merge judges it). Returns why the
// flavor cannot hold the work, or empty.
std::string narrowToReservedFlavor(const WorkloadInput& input, const PlacementEngine& engine,
                                   WorkloadIntent& intent) {
  std::string outside;
  if (!throughKueue(input) || !input.kueue.flavorView) {
    return outside;
  }
  const auto reach = flavorReach(*input.kueue.flavorView, engine.catalog(), ClusterState{});
  if (reach.empty()) {
    return outside;
  }
  if (auto within = intentWithinFlavor(intent, reach, input.kueue.flavor, outside)) {
    intent = std::move(*within);
  }
  return outside;
}

// From a valid spec and an engine to the target write (or the reason
// there is none).
void planPlacement(const WorkloadInput& input, const WorkloadObject& workload,
                   const PlacementEngine& engine, StatusDraft& draft, WorkloadPlan& plan) {
  const GpuWorkloadSpec& spec = *workload.spec;
  const TargetRef& target = spec.targetRef;
  if (plan.view.applied &&
      TargetRef{plan.view.applied->targetKind, plan.view.applied->targetName} != target) {
    // The target changed: take our fields off the old one first.
    plan.release.push_back({plan.view.applied->targetKind, plan.view.applied->targetName});
    plan.view.applied.reset();
  }
  forgetAnotherJob(input, plan);
  WorkloadIntent intent = intentOf(spec, input.target, input.jobResourcesMutable);
  const std::string outsideFlavor = narrowToReservedFlavor(input, engine, intent);
  // A Job that has started keeps its placement whatever the capacity: no
  // type is left for another while its pods wait.
  const bool jobPinned = input.target && traitsOf(input.target->kind).runsOnce &&
                         jobStep(*input.target, plan.view.applied.has_value()) != JobStep::Place;
  std::string fallbackTiers;
  if (!jobPinned) {
    fallbackTiers = planFallback(input, workload, engine, plan, intent);
  }
  const ClusterContext cluster = clusterContextFor(input, plan, engine);
  // The engine is entered twice: the decision, and what the placement in
  // force costs and whether it still runs.
  plan.decision = decide(engine, intent, cluster);
  const Decision& decision = *plan.decision;
  if (input.cluster) {
    const auto& prices = input.cluster->prices;
    draft.set("PricesForRegion", prices.status, prices.reason, prices.message);
    if (prices.status == "False") {
      draft.report("PricesForRegion", prices.reason, "Warning", prices.message);
    }
    if (const auto& karpenter = input.cluster->karpenterPrices) {
      draft.set("KarpenterPrices", karpenter->status, karpenter->reason, karpenter->message);
      if (karpenter->status == "False") {
        draft.report("KarpenterPrices", karpenter->reason, "Warning", karpenter->message);
      }
    }
  }
  std::optional<Assessment> current;
  if (plan.view.applied) {
    current = assessApplied(engine, intent, *plan.view.applied, cluster);
  }
  if (throughKueue(input) && !outsideFlavor.empty() && spec.mode == PlacementMode::Apply) {
    // Kueue tries another flavor after the check's Retry.
    plan.kueue = KueueHandOff{std::nullopt, {"main"}, outsideFlavor, input.kueue.flavor};
  }
  if (!decision.placement) {
    notPlaceable(decision, plan.view.unavailable, fallbackTiers, draft);
    if (throughKueue(input) && spec.mode == PlacementMode::Apply && !plan.kueue) {
      plan.kueue = KueueHandOff{
          std::nullopt, {"main"}, "cannot place: " + decision.cannotPlace, input.kueue.flavor};
    }
    if (jobPinned && plan.view.applied) {
      holdJob(input, intent, engine, current, draft, plan);  // it runs on, and ends, all the same
      return;
    }
    if (plan.view.applied && input.target) {
      // What runs keeps running; nothing better exists to move it to.
      plan.view.placement =
          placementInForce(*plan.view.applied, *current, decision, engine, intent);
    }
    return;
  }
  draft.set("Placed", "True", "Placed", decision.reason);
  if (spec.mode == PlacementMode::Recommend) {
    if (input.target) {
      plan.release.push_back(target);  // take back anything applied
    }
    if (throughKueue(input)) {
      // Admitted as its flavor places it.
      plan.kueue = KueueHandOff{Scheduling{}, {"main"}, "", input.kueue.flavor};
    }
    plan.view.applied.reset();
    plan.view.placement = decision.placement;
    draft.set("Applied", "False", "RecommendOnly", recommendOnlyMessage(target, input.target));
    draft.set("Ready", "True", "Recommended", decision.reason);
    return;
  }
  if (!input.target && !input.targetUnreadable.empty()) {
    plan.view.placement = decision.placement;  // the record stays: nothing is known to be gone
    draft.notApplied("TargetUnreadable", input.targetUnreadable);
    return;
  }
  if (!input.target && traitsOf(target.kind).runsOnce && plan.view.applied) {
    plan.view.placement = placementInForce(*plan.view.applied, *current, decision, engine, intent);
    recordJobGone(target, draft, plan);
    return;
  }
  if (!input.target) {
    plan.view.applied.reset();
    plan.view.placement = decision.placement;
    draft.notApplied("TargetNotFound", describeTarget(target) + " does not exist in " + input.ns +
                                           "; it is placed as soon as it appears");
    return;
  }
  if (!input.target->placedThrough.empty()) {
    // Placed through another object: nothing is written here.
    plan.view.applied.reset();
    plan.view.placement = decision.placement;
    draft.notApplied("PlacedThrough", input.target->placedThrough);
    return;
  }
  if (throughKueue(input)) {
    planThroughKueue(input, target, decision, engine, draft, plan);
    return;
  }
  if (jobCannotMove(input, intent, engine, current, draft, plan)) {
    return;
  }
  planMove(input, workload, intent, engine, std::move(current), plan);
  planWrite(input, spec, engine, draft, plan);
  planReverts(input, workload, draft, plan);
  holdStalledRollout(input, intent, engine, draft, plan);
}

StatusView initialView(const WorkloadObject& workload) {
  StatusView view;
  view.observedGeneration = workload.generation;
  view.mode =
      workload.spec && workload.spec->mode == PlacementMode::Recommend ? "Recommend" : "Apply";
  view.applied = workload.status.applied;
  view.lastReplacement = workload.status.lastReplacement;
  view.reverts = workload.status.reverts;
  view.run = workload.status.run;
  view.policyName = workload.policyName;
  return view;
}

// Ready, from the rollout of the target that carries the placement (a
// Job's run) and from its pods the scheduler cannot place.

}  // namespace

WorkloadPlan planWorkload(const WorkloadInput& input) {
  WorkloadPlan plan;
  if (!input.workload) {
    plan.deletion = true;
    plan.release = input.orphans;
    return plan;
  }
  const WorkloadObject& workload = *input.workload;
  if (workload.deleting) {
    planDeletion(workload, plan);
    return plan;
  }
  plan.conditions = workload.status.conditions;
  plan.view = initialView(workload);
  StatusDraft draft(workload, input, plan);
  if (!workload.spec) {
    const std::string message = workload.specError.describe();
    draft.set("Valid", "False", "InvalidSpec", message);
    draft.set("Placed", "Unknown", "InvalidSpec", "the spec must be fixed first");
    draft.set("Ready", "False", "InvalidSpec", "the spec must be fixed first");
    draft.report("Valid", "InvalidSpec", "Warning", "invalid spec: " + message);
    plan.next = {NextReconcile::Kind::Terminal, std::chrono::seconds(0), message};
    return plan;  // the target is left exactly as it is
  }
  draft.set("Valid", "True", "Valid", "");
  if (!input.policy.engine) {
    draft.notPlaced(input.policy.reason, input.policy.problem, input.policy.problem);
    return plan;
  }
  plan.view.policyGeneration = input.policy.generation;
  planPlacement(input, workload, *input.policy.engine, draft, plan);
  return plan;
}

}  // namespace gpuplacement::core
