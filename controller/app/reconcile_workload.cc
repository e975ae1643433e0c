// Reconciling one GpuWorkload: validate, decide, gate, patch the Deployment,
// write status. Level-based: it reads the cached world and converges it;
// it is never told why it runs, and a run that changes nothing writes
// nothing.
#include <set>

#include "app/operator.h"
#include "base/decimal.h"
#include "base/json_access.h"
#include "base/time_format.h"
#include "core/render.h"
#include "core/status.h"

namespace gpuplacement::app {

namespace {

using runtime::ReconcileResult;

std::pair<std::string, std::string> splitWorkloadKey(const std::string& key) {
  const auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

std::string joined(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : "; ") + item;
  }
  return text;
}

std::string shape(const core::Placement& placement) {
  return placement.instanceType +
         (placement.accelerator.empty() ? " (CPU)"
                                        : " (" + std::to_string(placement.acceleratorCount) + "x " +
                                              placement.accelerator + ")") +
         (placement.capacityType == core::CapacityType::Spot ? " spot" : "");
}

// The placement in force, described with today's prices.
core::Placement placementInForce(const core::AppliedRecord& applied,
                                 const core::Assessment& current, const core::Decision& decision,
                                 const core::PlacementEngine& engine, int replicas,
                                 double hoursPerMonth) {
  core::Placement placement;
  placement.tier = applied.tier;
  placement.accelerator = applied.accelerator;
  placement.instanceType = applied.instanceType;
  placement.acceleratorCount = applied.acceleratorCount;
  placement.capacityType = applied.capacityType;
  if (const auto* instance = engine.catalog().find(applied.instanceType)) {
    placement.acceleratorsPerInstance = instance->acceleratorCount;
    if (const auto* accelerator = engine.catalog().acceleratorOf(*instance)) {
      placement.availableMemoryGiB = accelerator->memoryGiB * applied.acceleratorCount;
    }
  }
  placement.hourlyCost = current.hourlyCost;
  placement.monthlyCost = current.hourlyCost * hoursPerMonth;
  placement.replicas = replicas;
  placement.totalHourlyCost = current.hourlyCost * replicas;
  placement.totalMonthlyCost = placement.monthlyCost * replicas;
  placement.requiredMemoryGiB = decision.memory.requiredGiB;
  placement.performance = current.performance;
  return placement;
}

}  // namespace

asio::awaitable<ReconcileResult> Operator::reconcileWorkload(const std::string& key) {
  // (No structured bindings: g++ 12 mishandles them across co_await.)
  const auto names = splitWorkloadKey(key);
  const std::string ns = names.first;
  const std::string name = names.second;
  const auto cached = workload(key);
  if (!cached) {
    inForce_.erase(key);
    // Deleted. Normally the finalizer has cleaned up already; a Deployment
    // still recording fields of this workload lost them to a deletion that
    // bypassed it, and gets them back here.
    const std::vector<std::string> orphans = ownedBy_.of(key);
    for (const auto& deploymentKey : orphans) {
      const std::string target = splitWorkloadKey(deploymentKey).second;
      std::vector<std::string> conflicts;
      const auto outcome = co_await patchDeployment(ns, target, nullptr, {}, name, conflicts);
      if (!outcome.error.empty() && !outcome.notFound) {
        co_return ReconcileResult::error("removing the placement of a deleted GpuWorkload from " +
                                         target + ": " + outcome.error);
      }
      for (const auto& waiting : rollouts_.finish(deploymentKey)) {
        asyncQueue_.add("w:" + waiting);
      }
      log_.info("placement of a deleted GpuWorkload removed",
                {{"namespace", ns}, {"name", name}, {"deployment", target}});
    }
    co_return ReconcileResult::done();
  }
  const WorkloadObject wl = *cached;  // the store may change while we wait on the server
  const std::string now = timestamp();
  // Our last write has not reached the cache yet: acting on the older copy
  // would repeat it (and its Event).
  constexpr auto kCacheLag = std::chrono::milliseconds(100);
  if (awaitingStatus(key, wl)) {
    co_return ReconcileResult::requeue(kCacheLag);
  }

  // ---- deletion: remove exactly what we added, then let go ---------------
  if (wl.deleting) {
    if (!wl.hasFinalizer() || released_.count(key)) {
      co_return ReconcileResult::done();
    }
    std::set<std::string> targets;
    if (wl.status.applied) {
      targets.insert(wl.status.applied->deployment);
    }
    if (!wl.targetName.empty()) {
      targets.insert(wl.targetName);
    }
    for (const auto& target : targets) {
      std::vector<std::string> conflicts;
      const auto outcome = co_await patchDeployment(ns, target, nullptr, {}, name, conflicts);
      if (!outcome.error.empty() && !outcome.notFound) {
        co_return ReconcileResult::error("removing the placement from " + target + ": " +
                                         outcome.error);
      }
      for (const auto& waiting : rollouts_.finish(ns + "/" + target)) {
        asyncQueue_.add("w:" + waiting);
      }
    }
    if (auto error = co_await setFinalizer(ns, name, wl, false); !error.empty()) {
      co_return ReconcileResult::error(error);
    }
    released_.insert(key);
    log_.info("placement removed; finalizer released", {{"namespace", ns}, {"name", name}});
    co_return ReconcileResult::done();
  }

  std::vector<core::Condition> conditions = wl.status.conditions;
  struct PendingEvent {
    std::string type, reason, message;
  };
  std::vector<PendingEvent> events;
  const auto set = [&](const std::string& type, const std::string& status,
                       const std::string& reason, const std::string& message) {
    core::setCondition(conditions, {type, status, reason, message, "", wl.generation}, now);
  };
  // An event for a condition that has just become this reason: not again
  // on every resync.
  const auto onTransition = [&](const std::string& type, const std::string& reason,
                                const std::string& eventType, const std::string& message) {
    const auto* before = core::findCondition(wl.status.conditions, type);
    if (!before || before->reason != reason) {
      events.push_back({eventType, reason, message});
    }
  };

  core::StatusView view;
  view.observedGeneration = wl.generation;
  view.mode = wl.spec && wl.spec->mode == core::PlacementMode::Recommend ? "Recommend" : "Apply";
  view.applied = wl.status.applied;
  view.lastReplacement = wl.status.lastReplacement;
  view.policyName = wl.policyName;

  std::optional<core::Decision> decision;
  std::chrono::nanoseconds requeueAfter{0};
  ReconcileResult result = ReconcileResult::done();

  // Writes status (when it changed) and the events, then returns `result`:
  // the end of every path. (It takes no parameters: g++ 12 mishandles
  // by-value parameters of coroutine lambdas.)
  const auto finish = [&]() -> asio::awaitable<ReconcileResult> {
    view.conditions = conditions;
    if (view.applied && view.placement) {
      inForce_[key] = InForce{view.placement->tier, view.placement->instanceType,
                              view.placement->totalHourlyCost};
    } else {
      inForce_.erase(key);
    }
    view.decision = decision ? &*decision : nullptr;
    const auto status = core::statusToJson(view);
    if (statusDigest(status) != wl.statusHash) {
      if (auto error = co_await writeWorkloadStatus(ns, name, status); !error.empty()) {
        co_return ReconcileResult::error(error);
      }
    }
    for (const auto& event : events) {
      log_.info(event.message, {{"namespace", ns}, {"name", name}, {"reason", event.reason}});
      co_await recordEvent(ns, name, wl, event.type, event.reason, event.message);
    }
    co_return result;
  };

  // ---- the spec -------------------------------------------------------------
  if (!wl.spec) {
    const std::string message = wl.specError.describe();
    set("Valid", "False", "InvalidSpec", message);
    set("Placed", "Unknown", "InvalidSpec", "the spec must be fixed first");
    set("Ready", "False", "InvalidSpec", "the spec must be fixed first");
    onTransition("Valid", "InvalidSpec", "Warning", "invalid spec: " + message);
    // The Deployment is left exactly as it is.
    result = ReconcileResult::terminal(message);
    co_return co_await finish();
  }
  const core::GpuWorkloadSpec& spec = *wl.spec;
  set("Valid", "True", "Valid", "");

  // ---- the policy -------------------------------------------------------------
  std::string problem;
  const PolicyEngine* policyEngine = engineFor(wl.policyName, problem);
  if (!policyEngine) {
    const std::string reason =
        policies_->store().get(wl.policyName) ? "PolicyInvalid" : "PolicyNotFound";
    set("Placed", "False", reason, problem);
    set("Ready", "False", reason, problem);
    onTransition("Placed", reason, "Warning", problem);
    co_return co_await finish();
  }
  const core::PlacementEngine& engine = *policyEngine->engine;
  view.policyGeneration = policyEngine->generation;
  const auto& settings = engine.policy().replacement;

  // ---- the target -------------------------------------------------------------
  const std::string target = spec.targetRef.name;
  const std::string deploymentKey = ns + "/" + target;
  if (view.applied && view.applied->deployment != target) {
    // The target changed: take our fields off the old one first.
    std::vector<std::string> conflicts;
    const auto outcome =
        co_await patchDeployment(ns, view.applied->deployment, nullptr, {}, name, conflicts);
    if (!outcome.error.empty() && !outcome.notFound) {
      co_return ReconcileResult::error("removing the placement from " + view.applied->deployment +
                                       ": " + outcome.error);
    }
    for (const auto& waiting : rollouts_.finish(ns + "/" + view.applied->deployment)) {
      asyncQueue_.add("w:" + waiting);
    }
    view.applied.reset();
  }
  const auto cachedTarget = deployment(deploymentKey);
  if (awaitingDeployment(deploymentKey, cachedDeployment(deploymentKey))) {
    co_return ReconcileResult::requeue(kCacheLag);
  }

  // ---- the decision ---------------------------------------------------------
  core::WorkloadIntent intent = spec.intent;
  intent.replicas = cachedTarget ? cachedTarget->replicas : 1;
  decision = engine.decide(intent);
  if (!decision->placement) {
    set("Placed", "False", "CannotPlace", decision->cannotPlace);
    onTransition("Placed", "CannotPlace", "Warning", "cannot place: " + decision->cannotPlace);
    if (view.applied && cachedTarget) {
      // What runs keeps running; nothing better exists to move it to.
      const auto current =
          engine.assess(intent, view.applied->instanceType, view.applied->acceleratorCount,
                        view.applied->capacityType);
      view.placement = placementInForce(*view.applied, current, *decision, engine, intent.replicas,
                                        engine.policy().hoursPerMonth);
    }
    set("Ready", "False", "CannotPlace", decision->cannotPlace);
    co_return co_await finish();
  }
  set("Placed", "True", "Placed", decision->reason);

  // ---- Recommend mode: report, and take back anything applied -----------------
  if (spec.mode == core::PlacementMode::Recommend) {
    if (cachedTarget) {
      std::vector<std::string> conflicts;
      const auto outcome = co_await patchDeployment(ns, target, nullptr, {}, name, conflicts);
      if (!outcome.error.empty() && !outcome.notFound) {
        co_return ReconcileResult::error("removing the placement: " + outcome.error);
      }
    }
    view.applied.reset();
    view.placement = decision->placement;
    set("Applied", "False", "RecommendOnly", "mode is Recommend: the Deployment is not changed");
    set("Ready", "True", "Recommended", decision->reason);
    co_return co_await finish();
  }

  if (!cachedTarget) {
    const std::string message = "Deployment " + target + " does not exist in " + ns +
                                "; it is placed as soon as it appears";
    view.applied.reset();
    view.placement = decision->placement;
    set("Applied", "False", "TargetNotFound", message);
    set("Ready", "False", "TargetNotFound", message);
    onTransition("Applied", "TargetNotFound", "Warning", message);
    co_return co_await finish();
  }

  // ---- should it move? ------------------------------------------------------
  const core::AppliedRecord* applied = view.applied ? &*view.applied : nullptr;
  core::Assessment current;
  if (applied) {
    current = engine.assess(intent, applied->instanceType, applied->acceleratorCount,
                            applied->capacityType);
  }
  core::GateInput gateInput;
  gateInput.wanted = &*decision->placement;
  gateInput.applied = applied;
  gateInput.current = applied ? &current : nullptr;
  gateInput.specChanged = applied && applied->specGeneration != wl.generation;
  gateInput.objective = intent.objective;
  gateInput.settings = settings;
  gateInput.now = clock_.systemNow();
  if (applied) {
    if (auto time = base::parseRfc3339(applied->time); time) {
      gateInput.lastMove = *time;
    }
  }
  gateInput.rolloutSlotFree =
      rollouts_.holds(deploymentKey) ||
      rollouts_.inFlight(wl.policyName) < static_cast<std::size_t>(settings.maxConcurrentRollouts);
  gateInput.hoursPerMonth = engine.policy().hoursPerMonth;
  gateInput.replicas = intent.replicas;
  const auto gate = core::gateReplacement(gateInput);

  core::Placement wanted = *decision->placement;
  bool moving = false;
  bool reservedSlot = false;
  switch (gate.verdict) {
    case core::GateVerdict::Apply:
      moving = true;
      if (gate.replacement && !rollouts_.holds(deploymentKey)) {
        // Taken before the patch: other workers run while this one waits
        // on the API server, and must see the slot as used.
        rollouts_.start(wl.policyName, deploymentKey);
        reservedSlot = true;
      }
      break;
    case core::GateVerdict::Keep:
      break;
    case core::GateVerdict::Hold:
    case core::GateVerdict::Cooldown:
    case core::GateVerdict::WaitForRollout:
      // The placement in force stays; the better one is shown, with why not.
      wanted = placementInForce(*applied, current, *decision, engine, intent.replicas,
                                engine.policy().hoursPerMonth);
      view.recommendation = decision->placement;
      view.recommendationNote = gate.message;
      if (gate.verdict == core::GateVerdict::Cooldown) {
        requeueAfter = gate.wait;
      } else if (gate.verdict == core::GateVerdict::WaitForRollout) {
        rollouts_.wait(wl.policyName, key);
      }
      break;
  }

  // ---- the Deployment -------------------------------------------------------
  const auto scheduling = core::renderScheduling(wanted, engine.catalog(), engine.policy());
  std::vector<std::string> conflicts;
  const auto outcome =
      co_await patchDeployment(ns, target, &scheduling, spec.containers, name, conflicts);
  if (reservedSlot && !outcome.patched) {
    for (const auto& waiting : rollouts_.finish(deploymentKey)) {
      asyncQueue_.add("w:" + waiting);
    }
  }
  if (outcome.notFound) {
    const std::string message = "Deployment " + target + " does not exist in " + ns;
    view.applied.reset();
    view.placement = decision->placement;
    set("Applied", "False", "TargetNotFound", message);
    set("Ready", "False", "TargetNotFound", message);
    onTransition("Applied", "TargetNotFound", "Warning", message);
    co_return co_await finish();
  }
  if (outcome.conflict) {
    co_return ReconcileResult::error(outcome.error);
  }
  if (!outcome.error.empty() || !conflicts.empty()) {
    // The user's own fields (or another GpuWorkload) stand in the way; the
    // Deployment is not touched until they are resolved.
    const std::string reason = conflicts.empty() ? "InvalidTarget" : "Conflict";
    const std::string message = conflicts.empty() ? outcome.error : joined(conflicts);
    view.placement = decision->placement;
    set("Applied", "False", reason, message);
    set("Ready", "False", reason, message);
    onTransition("Applied", reason, "Warning", message);
    co_return co_await finish();
  }

  if (!wl.hasFinalizer()) {
    // Right after the first patch, not before it: the placement reaches
    // the Deployment one round trip sooner, and a deletion in between is
    // caught by the ownership record (see the top of this function).
    if (auto error = co_await setFinalizer(ns, name, wl, true); !error.empty()) {
      co_return ReconcileResult::error(error);
    }
  }

  const core::DeploymentState& state = outcome.state;
  if (moving || !view.applied) {
    core::AppliedRecord record{target,           wanted.instanceType,     wanted.accelerator,
                               wanted.tier,      wanted.acceleratorCount, wanted.capacityType,
                               state.generation, wl.generation,           now,
                               gate.replacement};
    placementsTotal_.inc({std::string(core::nameOf(wanted.tier)), wanted.instanceType});
    if (gate.replacement && applied) {
      view.lastReplacement =
          core::ReplacementRecord{applied->instanceType, wanted.instanceType,
                                  base::decimalString(gate.monthlySaving, 2), now, gate.message};
      replacementsTotal_.inc({wl.policyName});
      replacementSavings_.inc({wl.policyName}, gate.monthlySaving);
      events.push_back(
          {"Normal", "Replaced",
           "moved from " + applied->instanceType + " to " + shape(wanted) +
               (gate.monthlySaving >= 0
                    ? ", saving " + base::formatMoney(gate.monthlySaving)
                    : ", costing " + base::formatMoney(-gate.monthlySaving) + " more") +
               "/month: " + gate.message});
    } else {
      events.push_back({"Normal", "Placed",
                        "placed on " + shape(wanted) + " at " +
                            base::formatMoney(wanted.hourlyCost) + "/h (" +
                            base::formatMoney(wanted.totalMonthlyCost) +
                            "/month for all replicas): " + decision->reason});
    }
    view.applied = record;
  } else if (outcome.patched) {
    view.applied->deploymentGeneration = state.generation;
    events.push_back({"Normal", "Restored",
                      "put back the placement fields someone removed from Deployment " + target});
  }
  if (view.applied->specGeneration != wl.generation) {
    view.applied->specGeneration = wl.generation;  // the new spec wants the same placement
  }
  view.placement = wanted;
  set("Applied", "True", "Applied",
      "Deployment " + target + " carries the placement (generation " +
          std::to_string(view.applied->deploymentGeneration) + ")");

  // ---- the rollout ----------------------------------------------------------
  const bool rolledOut = state.rolledOut();
  if (rolledOut || state.progressDeadlineExceeded) {
    for (const auto& waiting : rollouts_.finish(deploymentKey)) {
      asyncQueue_.add("w:" + waiting);
    }
  }
  if (rolledOut) {
    set("Ready", "True", "RolloutComplete",
        std::to_string(state.availableReplicas) + " of " + std::to_string(state.replicas) +
            " replicas updated and available");
  } else if (state.progressDeadlineExceeded) {
    const std::string message = "the rollout of Deployment " + target +
                                " exceeded its progress deadline; is there capacity for " +
                                wanted.instanceType + "?";
    set("Ready", "False", "ProgressDeadlineExceeded", message);
    onTransition("Ready", "ProgressDeadlineExceeded", "Warning", message);
  } else {
    set("Ready", "False", "RolloutInProgress",
        std::to_string(state.updatedReplicas) + " of " + std::to_string(state.replicas) +
            " replicas updated, " + std::to_string(state.availableReplicas) + " available");
  }
  if (requeueAfter > std::chrono::nanoseconds(0)) {
    result = ReconcileResult::requeue(requeueAfter);
  }
  co_return co_await finish();
}

}  // namespace gpuplacement::app
