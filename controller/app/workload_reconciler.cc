#include "app/workload_reconciler.h"

#include <cstdio>
#include <map>
#include <string_view>
#include <utility>

#include "app/target_reads.h"
#include "core/plan/pod_sets_patch.h"
#include "runtime/controller_builder.h"

namespace gpuplacement::app {
namespace {

using runtime::ReconcileResult;

// How long a reconcile waits for the cache to show our own write.
constexpr auto kCacheLag = std::chrono::milliseconds(100);
// A target that keeps changing between our read and our patch.
constexpr int kPatchAttempts = 4;

// A patch the server will refuse again until someone changes something:
// 403 (RBAC) or 422 (the result would be invalid, e.g. annotations over
// 256 KiB). Said on the GpuWorkload, not retried in silence.
std::optional<core::TargetOutcome> refused(const kube::ApiError& error,
                                           const core::TargetState& state,
                                           const core::TargetRef& target) {
  using Kind = core::TargetOutcome::Kind;
  if (!error.forbidden() && error.status != 422) {
    return std::nullopt;
  }
  return core::TargetOutcome{error.forbidden() ? Kind::Forbidden : Kind::Blocked,
                             state,
                             {},
                             "the API server refused the patch of " + core::describeTarget(target) +
                                 ": " + error.describe()};
}

// A suspended Job's pod resources refused as immutable: a server before
// Kubernetes 1.36, or one with KEP-5440's gate off.
bool resourcesRefused(const kube::ApiError& error, const core::TargetState& state,
                      const core::PatchPlan& plan) {
  return error.status == 422 &&
         core::traitsOf(state.kind).resources == core::ResourcesWritable::From136 &&
         plan.resourcesChanged && error.describe().find("spec.template") != std::string::npos &&
         error.describe().find("immutable") != std::string::npos;
}

// One sample per placed workload, keyed "namespace/name".
template <typename InForceMap, typename ValueOf>
void writePerWorkload(const InForceMap& inForce, const SampleSink& sample, ValueOf valueOf) {
  for (const auto& [key, entry] : inForce) {
    const std::string_view id(key);
    const auto slash = id.find('/');
    sample({id.substr(0, slash), id.substr(slash + 1), core::nameOf(entry.tier), entry.instanceType,
            core::nameOf(entry.capacityType)},
           valueOf(entry));
  }
}

// Our own status writes change nothing the reconcile reads from the spec:
// like controller-runtime's GenerationChangedPredicate, they need no
// reconcile (the resync covers edits of status by others).
bool specChanged(const CachedWorkload* previous, const CachedWorkload* current) {
  return !previous || !current || previous->generation != current->generation ||
         previous->deleting != current->deleting ||
         previous->finalizersDigest != current->finalizersDigest;
}

ReconcileResult resultOf(const core::NextReconcile& next) {
  switch (next.kind) {
    case core::NextReconcile::Kind::After:
      return ReconcileResult::requeue(next.after);
    case core::NextReconcile::Kind::Terminal:
      return ReconcileResult::terminal(next.message);
    case core::NextReconcile::Kind::AwaitChange:
      break;
  }
  return ReconcileResult::done();
}

}  // namespace

WorkloadReconciler::WorkloadReconciler(runtime::ControllerSet& controllers, ObjectCaches& caches,
                                       const PolicyEngines& engines, ApiWrites& writes,
                                       EventRecorder& events, WorkloadReconcilerOptions options,
                                       Logger& log, MetricsRegistry& metrics,
                                       const runtime::Clock& clock)
    : caches_(caches),
      engines_(engines),
      writes_(writes),
      events_(events),
      log_(log),
      clock_(clock),
      useFinalizer_(options.finalizer),
      expectations_(clock),
      controller_(
          runtime::ControllerBuilder(controllers, "gpuworkload")
              .forKind(caches.workloads(), specChanged)
              .watches(caches.targetChanges(),
                       [this](const TargetKey& target, const CachedTarget* previous,
                              const CachedTarget* current) {
                         return workloadsOfTarget(target, previous, current);
                       })
              .watches(caches.pendingPodsChanged(),
                       [this](const TargetKey& target) {
                         auto workloads = caches_.workloadsByTarget().of(target);
                         if (const auto run = runOfPods(caches_, target)) {
                           const auto more = caches_.workloadsByTarget().of(*run);
                           workloads.insert(workloads.end(), more.begin(), more.end());
                         }
                         return workloads;
                       })
              // Kueue made (or dropped) the Workload of a Job it queues,
              // its checks changed (the status names them), or the flavor
              // it reserved did (the decision is made within it).
              .watches(
                  caches.kueueWorkloads(),
                  [this](const std::string& key, const core::KueueWorkload* previous,
                         const core::KueueWorkload* current) {
                    const auto* workload = current ? current : previous;
                    std::vector<std::string> keys;
                    if (workload->ownerKind == "Job" &&
                        (!previous || !current ||
                         previous->checks.size() != current->checks.size() ||
                         previous->reservedFlavor("main") != current->reservedFlavor("main"))) {
                      keys = caches_.workloadsByTarget().of(
                          {core::TargetKind::Job, {namespaceOf(key), workload->ownerName}});
                    }
                    return keys;
                  })
              .watches(caches.autoscalersChanged(),
                       [this](const TargetKey& target) {
                         return caches_.workloadsByTarget().of(target);
                       })
              // What the NodePools may launch decides what every workload
              // may be placed on: a limit raised brings back a type passed
              // over at it.
              .watches(caches.clusterView().nodePoolsChanged(), [this] { return allWorkloads(); })
              // So do the devices DRA drivers publish.
              .watches(caches.clusterView().deviceSlicesChanged(),
                       [this] { return allWorkloads(); })
              // And a shared node kept up, or let go: its idle slices
              // cost nothing more, or a whole node (rare: the first or
              // last pod holding devices on a node cut so).
              .watches(caches.clusterView().sharesKeptChanged(), [this] { return allWorkloads(); })
              .workers(options.workers)
              .complete([this](const runtime::ObjectKey& key) { return reconcile(key); })),
      statuses_(writes, log, metrics, clock, options.statuses,
                [this](const std::string& key, std::uint64_t writtenDigest,
                       const std::string& writtenText, const nlohmann::json& stored) {
                  statusStored(key, writtenDigest, writtenText, stored);
                }),
      placementsTotal_(metrics.counter("gpu_placement_placements_total",
                                       "Placements written to targets (Deployments, StatefulSets, "
                                       "Jobs), by tier and instance type",
                                       {"tier", "instance_type"})),
      replacementsTotal_(metrics.counter("gpu_placement_replacements_total",
                                         "Workloads moved by a price or rule change", {"policy"})),
      replacementSavings_(metrics.counter(
          "gpu_placement_replacement_monthly_savings_dollars_total",
          "Sum of the monthly savings of re-placements (negative when a move costs more)",
          {"policy"})),
      fallbacksTotal_(metrics.counter(
          "gpu_placement_fallbacks_total",
          "Placements left because their pods stayed unschedulable (Event FellBack), by the "
          "instance type and capacity type left",
          {"instance_type", "capacity_type"})) {
  registerGauges(metrics, options.perWorkloadMetrics);
  // What our own writes are waiting to see.
  caches_.workloads().addHandler(
      [this](const std::string& key, const CachedWorkload*, const CachedWorkload* current) {
        expectations_.observeWorkload(key, current);
      });
  caches_.targetChanges().addHandler(
      [this](const TargetKey& target, const CachedTarget*, const CachedTarget* current) {
        expectations_.observeTarget(target, current);
      });
}

asio::awaitable<void> WorkloadReconciler::writeStatuses() {
  writingStatuses_ = true;
  try {
    co_await statuses_.run();
  } catch (const std::exception& e) {
    log_.error("the status writer stopped", {{"error", e.what()}});
  }
  writingStatuses_ = false;
  statusesWritten_.notifyAll();
}

asio::awaitable<void> WorkloadReconciler::finishStatuses() {
  statuses_.stop();
  while (writingStatuses_) {
    co_await statusesWritten_.wait();
  }
}

std::vector<std::string> WorkloadReconciler::allWorkloads() const {
  std::vector<std::string> keys;
  keys.reserve(caches_.workloads().size());
  caches_.workloads().forEach(
      [&keys](const std::string& key, const CachedWorkload&) { keys.push_back(key); });
  return keys;
}

void WorkloadReconciler::enqueueAll() {
  caches_.workloads().forEach(
      [this](const std::string& key, const CachedWorkload&) { enqueue(key); });
}

void WorkloadReconciler::enqueueWorkloadsOf(const std::string& policy) {
  caches_.workloads().forEach([&](const std::string& key, const CachedWorkload& workload) {
    if (workload.policyName == policy) {
      enqueue(key);
    }
  });
}

void WorkloadReconciler::recoverRollouts() {
  caches_.workloads().forEach([this](const std::string& key, const CachedWorkload& cached) {
    if (!cached.movedByReplacement) {
      return;  // only moves hold rollout slots
    }
    const auto workload = cached.unpack();
    const auto& applied = workload.status.applied;
    if (!applied || !applied->replacement || !core::traitsOf(applied->targetKind).rollsOut) {
      return;  // placed before it runs (a Job): nothing rolls out
    }
    const TargetKey targetKey{applied->targetKind, {namespaceOf(key), applied->targetName}};
    const auto* target = caches_.targets(targetKey.kind).get(targetKey.object.str());
    if (!target) {
      return;
    }
    const auto state = target->unpack();
    if (state.generation == applied->targetGeneration && !state.rolledOut() &&
        !state.progressDeadlineExceeded) {
      rollouts_.start(workload.policyName, targetKey);
    }
  });
}

asio::awaitable<ReconcileResult> WorkloadReconciler::reconcile(const runtime::ObjectKey& key) {
  if (auto lag = cacheLag(key.str())) {
    co_return *lag;
  }
  Snapshot snapshot;
  read(key, snapshot);
  compareWithWhatWasWritten(key.str(), snapshot);
  readPendingStatus(key.str(), snapshot);
  core::WorkloadPlan plan = core::planWorkload(snapshot.input);
  if (kueue_ && snapshot.workload) {
    const TargetKey target{snapshot.workload->targetKind, {key.ns, snapshot.workload->targetName}};
    if (plan.kueue) {
      kueue_->set(target, *plan.kueue);
    } else {
      kueue_->erase(target);
    }
  }
  // The plan holds what it read of the cluster view, and nothing after it
  // reads the view: let it go before the writes, so that a recount while
  // this reconcile waits on the API server need not copy it.
  snapshot.input.cluster = nullptr;
  snapshot.cluster.reset();
  for (const auto& target : plan.release) {
    auto released = co_await release(key.ns, target, key.name);
    if (!released) {
      co_return ReconcileResult::error("removing the placement from " +
                                       core::describeTarget(target) + ": " + released.error());
    }
  }
  std::optional<core::TargetOutcome> outcome;
  if (plan.write) {
    auto written = co_await writeTarget(key, snapshot, plan);
    if (!written) {
      co_return ReconcileResult::error(written.error());
    }
    outcome = std::move(written).value();
  }
  const bool forbidden = outcome && outcome->kind == core::TargetOutcome::Kind::Forbidden;
  auto record =
      core::recordWorkload(snapshot.input, std::move(plan), outcome ? &*outcome : nullptr);
  auto result = co_await apply(key, snapshot, std::move(record));
  if (forbidden && result.outcome != ReconcileResult::Outcome::Error) {
    // Permissions change without an event we watch: try again, backing off.
    co_return ReconcileResult::error(outcome->error);
  }
  co_return result;
}

std::optional<ReconcileResult> WorkloadReconciler::cacheLag(const std::string& key) {
  const auto* cached = caches_.workloads().get(key);
  if (!cached) {
    return std::nullopt;
  }
  if (cached->deleting && expectations_.awaitingDeletion(key)) {
    return ReconcileResult::done();  // our finalizer is off; the deletion follows
  }
  const TargetKey target{cached->targetKind, {namespaceOf(key), cached->targetName}};
  if (expectations_.awaitingStatus(key, *cached) ||
      expectations_.awaitingTarget(target, caches_.targets(target.kind).get(target.object.str()))) {
    return ReconcileResult::requeue(kCacheLag);
  }
  return std::nullopt;
}

void WorkloadReconciler::read(const runtime::ObjectKey& key, Snapshot& snapshot) const {
  const std::string id = key.str();
  auto& input = snapshot.input;
  input.ns = key.ns;
  input.name = key.name;
  input.now = clock_.systemNow();
  input.useFinalizer = useFinalizer_;
  input.podsPlaceable = caches_.pods().synced();
  input.jobResourcesMutable = server_.jobResourcesMutable;
  input.serverVersion = server_.version;
  const auto* cached = caches_.workloads().get(id);
  if (!cached) {
    input.orphans = targetsOwnedBy(caches_, id);
    return;
  }
  snapshot.workload = cached->unpack();
  snapshot.workloadResourceVersion = caches_.workloads().resourceVersion(id);
  input.workload = &*snapshot.workload;
  const TargetKey target{snapshot.workload->targetKind, {key.ns, snapshot.workload->targetName}};
  const auto& targets = caches_.targets(target.kind);
  if (const auto* cachedTarget = targets.get(target.object.str())) {
    snapshot.target = cachedTarget->unpack();
    input.target = &*snapshot.target;
    input.targetResourceVersion = targets.resourceVersion(target.object.str());
    const auto pods = podsKeyOf(target, *snapshot.target);
    input.pending = pendingPodsOf(caches_.pods(), caches_.pendingPodsByTarget().of(pods));
    input.ownPods =
        boundPodsOf(caches_.pods(), caches_.nodes(), caches_.boundPodsByTarget().of(pods));
    input.autoscaler =
        autoscalerOf(caches_.autoscalers(), caches_.autoscalersByTarget().of(target));
    if (snapshot.target->job.queuedByKueue) {
      for (const auto& name : caches_.kueueWorkloadsByTarget().of(target)) {
        if (const auto* queued = caches_.kueueWorkloads().get(name)) {
          input.kueue = {queued->name, ourCheckOn(caches_, *queued), queued->reservedFlavor("main"),
                         std::nullopt};
          if (const auto* flavor = input.kueue.flavor.empty()
                                       ? nullptr
                                       : caches_.flavors().get(input.kueue.flavor)) {
            input.kueue.flavorView = *flavor;
          }
        }
      }
    }
  } else {
    input.targetUnreadable = targetsUnreadable(targets, target.kind);
  }
  const auto& policy = snapshot.workload->policyName;
  input.policy = engines_.view(policy, caches_.policies().get(policy));
  snapshot.engine = engines_.engine(policy);
  snapshot.cluster = engines_.clusterView(policy, input.policy, caches_.clusterView());
  input.cluster = snapshot.cluster.get();
  input.rollouts.holdsSlot = rollouts_.holds(target);
  input.rollouts.inFlight = rollouts_.inFlight(policy);
}

asio::awaitable<base::Result<base::Ok, std::string>> WorkloadReconciler::release(
    std::string ns, core::TargetRef target, std::string workload) {
  const TargetKey key{target.kind, {ns, target.name}};
  const auto& targets = caches_.targets(key.kind);
  const auto* cached = targets.get(key.object.str());
  if (!cached) {
    finishRollout(key);
    co_return base::Ok{};  // gone: nothing of ours is left on it
  }
  const auto state = cached->unpack();
  const auto resourceVersion = targets.resourceVersion(key.object.str());
  const PatchPlanner remove = [workload](const core::TargetState& live,
                                         const std::string& version) {
    core::PatchRequest request;
    request.workload = workload;
    request.resourceVersion = version;
    return core::planPodSetsPatch(live, request);
  };
  auto outcome =
      co_await converge(ns, target, state, resourceVersion, remove(state, resourceVersion), remove);
  if (!outcome) {
    co_return outcome.error();
  }
  if ((outcome->kind == core::TargetOutcome::Kind::Blocked && !outcome->error.empty()) ||
      outcome->kind == core::TargetOutcome::Kind::Forbidden ||
      outcome->kind == core::TargetOutcome::Kind::JobResourcesImmutable) {
    co_return outcome->error;  // a record that cannot be read, or a refused patch
  }
  finishRollout(key);
  if (outcome->kind == core::TargetOutcome::Kind::Written) {
    co_await dropClaimTemplate(ns, state.ownership.fields.claimTemplate, "");
    log_.info("placement removed", {{"namespace", ns},
                                    {"name", workload},
                                    {"kind", std::string(base::nameOf(target.kind))},
                                    {"target", target.name}});
  }
  co_return base::Ok{};
}

asio::awaitable<WorkloadReconciler::Outcome> WorkloadReconciler::writeTarget(
    const runtime::ObjectKey& key, const Snapshot& snapshot, const core::WorkloadPlan& plan) {
  const auto& write = *plan.write;
  const TargetKey target{write.target.kind, {key.ns, write.target.name}};
  const std::string& policy = snapshot.workload->policyName;
  if (plan.rollout == core::RolloutStep::Reserve) {
    // Taken before the patch: other workers run while this one waits on
    // the API server, and must see the slot as used.
    rollouts_.start(policy, target);
  } else if (plan.rollout == core::RolloutStep::Wait) {
    rollouts_.wait(policy, key.str());
  }
  if (auto settled = core::outcomeWithoutWrite(write, *snapshot.target)) {
    co_return *settled;
  }
  if (const auto& claim = write.scheduling.claim; claim && !write.patch.blocked()) {
    // Before the pod template names it: a pod created from the template
    // finds its claim's template there.
    const auto& workload = write.patchRequest.workload;
    auto created = co_await writes_.createClaimTemplate(
        core::claimTemplateObject(key.ns, core::claimTemplateName(workload, *claim), workload,
                                  snapshot.workload->uid, *claim));
    if (!created) {
      co_return "creating the ResourceClaimTemplate of " + key.str() + ": " +
          created.error().describe();
    }
  }
  const PatchPlanner place = [&write](const core::TargetState& live, const std::string& version) {
    return core::planPodSetsPatch(live, write.request(version));
  };
  auto outcome = co_await converge(key.ns, write.target, *snapshot.target,
                                   snapshot.input.targetResourceVersion, write.patch, place);
  if (outcome && outcome->kind == core::TargetOutcome::Kind::Written) {
    co_await dropClaimTemplate(key.ns, snapshot.target->ownership.fields.claimTemplate,
                               outcome->state.ownership.fields.claimTemplate);
  }
  co_return outcome;
}

asio::awaitable<void> WorkloadReconciler::dropClaimTemplate(std::string ns, std::string old,
                                                            std::string kept) {
  if (old.empty() || old == kept) {
    co_return;
  }
  // The pods that name it have their claims already; a new pod names the
  // new one. Left behind on an error, it goes with the GpuWorkload (its
  // owner).
  if (auto dropped = co_await writes_.deleteClaimTemplate(ns, old); !dropped) {
    log_.warn("could not delete a ResourceClaimTemplate the placement no longer names",
              {{"namespace", ns}, {"name", old}, {"error", dropped.error().describe()}});
  }
}

asio::awaitable<WorkloadReconciler::Outcome> WorkloadReconciler::converge(
    std::string ns, core::TargetRef target, core::TargetState state, std::string resourceVersion,
    core::PatchPlan plan, PatchPlanner replan) {
  using Kind = core::TargetOutcome::Kind;
  const TargetKey key{target.kind, {std::move(ns), target.name}};
  // The cache can lag behind the server; on a 409 read the target fresh
  // and plan again (optimistic concurrency), a few times at most.
  for (int attempt = 0; attempt < kPatchAttempts; ++attempt) {
    if (attempt > 0) {
      plan = replan(state, resourceVersion);
    }
    if (plan.blocked()) {
      co_return core::TargetOutcome{Kind::Blocked, state, plan.conflicts, plan.error};
    }
    if (!plan.patch) {
      co_return core::TargetOutcome{Kind::Unchanged, state, {}, ""};
    }
    const auto sent = clock_.monotonicNow();
    auto patched = co_await writes_.patchTarget(key, *plan.patch);
    statuses_.placementAnswered(clock_.monotonicNow() - sent);
    if (patched) {
      const auto& written = patched->state;
      expectations_.expectTarget(key, written.generation, written.ownership.digest);
      co_return core::TargetOutcome{Kind::Written, written, {}, "", patched->templateWriter};
    }
    if (patched.error().notFound()) {
      co_return core::TargetOutcome{Kind::NotFound, {}, {}, ""};
    }
    if (resourcesRefused(patched.error(), state, plan)) {
      if (server_.jobResourcesMutable) {
        server_.jobResourcesMutable = false;  // learnt: every Job from now on is planned so
        log_.warn(
            "the API server refuses to change a suspended Job's pod resources (KEP-5440 is "
            "off or absent); Jobs are placed only where their own requests already match",
            {{"version", server_.version}, {"error", patched.error().describe()}});
      }
      co_return core::TargetOutcome{
          Kind::JobResourcesImmutable, state, {}, patched.error().describe()};
    }
    if (auto refusal = refused(patched.error(), state, target)) {
      co_return *refusal;
    }
    const std::string what = core::describeTarget(target);
    if (!patched.error().conflict()) {
      co_return "patching " + what + ": " + patched.error().describe();
    }
    auto fresh = co_await writes_.readTarget(key);
    if (!fresh) {
      if (fresh.error().notFound()) {
        co_return core::TargetOutcome{Kind::NotFound, {}, {}, ""};
      }
      co_return "reading " + what + ": " + fresh.error().describe();
    }
    state = fresh->state;
    resourceVersion = fresh->resourceVersion;
  }
  co_return core::describeTarget(target) + " kept changing under us (409 Conflict); will retry";
}

asio::awaitable<ReconcileResult> WorkloadReconciler::apply(const runtime::ObjectKey& key,
                                                           const Snapshot& snapshot,
                                                           core::WorkloadRecord record) {
  const std::string id = key.str();
  if (record.inForce) {
    const auto& placement = *record.inForce;
    inForce_[id] = InForce{placement.tier, placement.capacityType, placement.instanceType,
                           placement.totalHourlyCost, placement.idleAccelerators};
  } else {
    inForce_.erase(id);
  }
  if (!snapshot.workload) {
    co_return ReconcileResult::done();
  }
  const auto& workload = *snapshot.workload;
  if (record.releaseSlot && workload.spec) {
    const auto& target = workload.spec->targetRef;
    finishRollout({target.kind, {key.ns, target.name}});
  }
  auto written = co_await writeRecord(key, snapshot, record);
  if (!written) {
    co_return ReconcileResult::error(written.error());
  }
  count(record, workload);
  for (auto& event : record.events) {
    events_.record(key.ns, key.name, workload.uid, std::move(event));
  }
  co_return resultOf(record.next);
}

asio::awaitable<base::Result<base::Ok, std::string>> WorkloadReconciler::writeRecord(
    const runtime::ObjectKey& key, const Snapshot& snapshot, const core::WorkloadRecord& record) {
  if (record.finalizers) {
    auto set = co_await writes_.setFinalizers(key.ns, key.name, snapshot.workloadResourceVersion,
                                              *record.finalizers);
    if (!set && !set.error().notFound()) {
      co_return "updating finalizers: " + set.error().describe();
    }
    if (snapshot.workload->deleting) {
      expectations_.expectDeletion(key.str());
      log_.info("placement removed; finalizer released",
                {{"namespace", key.ns}, {"name", key.name}});
    }
  }
  const std::string uid = snapshot.workload ? snapshot.workload->uid : std::string();
  if (record.status && !statuses_.submit(key.str(), uid, *record.status, record.statusDigest)) {
    // The writer is full (a burst larger than its queue): write it here.
    std::string text = record.status->dump();
    auto stored = co_await writes_.replaceWorkloadStatusText(key.ns, key.name, uid, text);
    if (!stored && !stored.error().notFound()) {
      co_return "writing status: " + stored.error().describe();
    }
    if (stored) {
      statusStored(key.str(), record.statusDigest, text, *stored);
    }
  }
  co_return base::Ok{};
}

void WorkloadReconciler::statusStored(const std::string& key, std::uint64_t writtenDigest,
                                      const std::string& writtenText,
                                      const nlohmann::json& stored) {
  const auto storedDigest = core::statusDigest(stored);
  expectations_.expectStatus(key, storedDigest);
  noteStoredStatus(key, writtenDigest, writtenText, stored, storedDigest);
}

void WorkloadReconciler::readPendingStatus(const std::string& key, Snapshot& snapshot) const {
  if (!snapshot.workload) {
    return;
  }
  const auto held = statuses_.pending(key, snapshot.workload->uid);
  if (!held) {
    return;
  }
  snapshot.workload->status = core::workloadStatusFromJson(held->status);
  snapshot.workload->statusHash = held->digest;
}

void WorkloadReconciler::noteStoredStatus(const std::string& key, std::uint64_t writtenDigest,
                                          const std::string& writtenText,
                                          const nlohmann::json& stored,
                                          std::uint64_t storedDigest) {
  if (writtenDigest == storedDigest) {
    rewritten_.erase(key);
    return;
  }
  rewritten_[key] = Rewritten{writtenDigest, storedDigest};
  if (!warnedRewritten_) {
    warnedRewritten_ = true;
    std::string changed;
    const auto written = nlohmann::json::parse(writtenText, nullptr, /*allow_exceptions=*/false);
    for (const auto& operation : nlohmann::json::diff(written, stored)) {
      changed += (changed.empty() ? "" : ", ") + base::stringMember(operation, "op") + " " +
                 base::stringMember(operation, "path");
    }
    log_.warn(
        "the API server stores a GpuWorkload status other than the one written (is the CRD "
        "older than the operator? apply this version's crds/); compared with what it stores "
        "from now on, so it is not written again",
        {{"namespace", runtime::ObjectKey::parse(key).ns},
         {"name", runtime::ObjectKey::parse(key).name},
         {"changed", changed}});
  }
}

void WorkloadReconciler::compareWithWhatWasWritten(const std::string& key, Snapshot& snapshot) {
  const auto it = rewritten_.find(key);
  if (it == rewritten_.end()) {
    return;
  }
  if (!snapshot.workload || snapshot.workload->statusHash != it->second.stored) {
    rewritten_.erase(it);  // changed since (or gone): compare as usual
    return;
  }
  // Still what the server made of our last write: compare with that write.
  snapshot.workload->statusHash = it->second.written;
}

void WorkloadReconciler::count(const core::WorkloadRecord& record,
                               const core::WorkloadObject& workload) {
  if (record.placedNow) {
    placementsTotal_.inc(
        {std::string(core::nameOf(record.placedNow->tier)), record.placedNow->instanceType});
  }
  if (record.monthlySaving) {
    replacementsTotal_.inc({workload.policyName});
    replacementSavings_.inc({workload.policyName}, *record.monthlySaving);
  }
  // Counted here rather than from the Events written: those fold identical
  // ones together and drop some when their queue is full. The type left is
  // the placement in force the reconcile started from.
  const auto& left = workload.status.applied;
  for (const auto& event : record.events) {
    if (event.reason == "FellBack" && left) {
      fallbacksTotal_.inc({left->instanceType, std::string(core::nameOf(left->capacityType))});
    }
  }
}

void WorkloadReconciler::finishRollout(const TargetKey& target) {
  for (const auto& waiting : rollouts_.finish(target)) {
    enqueue(waiting);
  }
}

std::vector<std::string> WorkloadReconciler::workloadsOfTarget(const TargetKey& target,
                                                               const CachedTarget* previous,
                                                               const CachedTarget* current) const {
  if (previous && current && *previous == *current) {
    return {};
  }
  auto workloads = caches_.workloadsByTarget().of(target);
  if (current && !current->owner.empty()) {
    auto owner = runtime::ObjectKey{target.object.ns, current->owner}.str();
    if (!caches_.workloads().get(owner)) {
      // Fields of a GpuWorkload that no longer exists (deleted while no
      // operator ran, or its finalizer removed by hand): take them back.
      workloads.push_back(std::move(owner));
    }
  }
  return workloads;
}

ServerCapabilities capabilitiesOf(const std::string& gitVersion) {
  ServerCapabilities server;
  server.version = gitVersion;
  // "v1.36.3-eks-1a2b3c": the minor is what decides.
  unsigned major = 0;
  unsigned minor = 0;
  if (std::sscanf(gitVersion.c_str(), "v%u.%u", &major, &minor) == 2) {
    server.jobResourcesMutable = major > 1 || minor >= 36;
  }
  return server;
}

void WorkloadReconciler::registerGauges(MetricsRegistry& metrics, bool perWorkload) {
  auto& placed = metrics.gauge("gpu_placement_placed_workloads",
                               "GpuWorkloads with a placement in force, by tier and instance type",
                               {"tier", "instance_type"});
  auto& cost = metrics.gauge("gpu_placement_estimated_hourly_cost_dollars",
                             "Estimated USD per hour of the placements in force, all replicas",
                             {"tier", "namespace"});
  metrics.onCollect([this, &placed, &cost] {
    // Summed over views first: a few series from 10,000 workloads, so the
    // families' own maps see each series once.
    std::map<std::pair<core::Tier, std::string_view>, double> placedBy;
    std::map<std::pair<core::Tier, std::string_view>, double> costBy;
    for (const auto& [key, entry] : inForce_) {
      placedBy[{entry.tier, entry.instanceType}] += 1;
      const std::string_view id(key);
      costBy[{entry.tier, id.substr(0, id.find('/'))}] += entry.totalHourlyCost;
    }
    placed.clear();
    cost.clear();
    for (const auto& [series, count] : placedBy) {
      placed.set({std::string(core::nameOf(series.first)), std::string(series.second)}, count);
    }
    for (const auto& [series, dollars] : costBy) {
      cost.set({std::string(core::nameOf(series.first)), std::string(series.second)}, dollars);
    }
  });
  if (!perWorkload) {
    return;
  }
  // One series per placed GpuWorkload, written from inForce_ at each
  // scrape: a series goes with its workload's placement, and a move shows
  // as the old labels gone and the new ones there.
  const std::vector<std::string> labels = {"namespace", "name", "tier", "instance_type",
                                           "capacity_type"};
  metrics.gaugeFrom("gpu_placement_workload_hourly_cost_dollars",
                    "Estimated USD per hour of one GpuWorkload's placement in force, all replicas "
                    "(status.placement.hourlyCost x replicas)",
                    labels, [this](const SampleSink& sample) {
                      writePerWorkload(inForce_, sample,
                                       [](const auto& entry) { return entry.totalHourlyCost; });
                    });
  metrics.gaugeFrom(
      "gpu_placement_workload_idle_accelerators",
      "Accelerators paid for and left idle on the nodes behind one GpuWorkload's price "
      "(status.placement.idleAccelerators)",
      labels, [this](const SampleSink& sample) {
        writePerWorkload(inForce_, sample, [](const auto& entry) {
          return static_cast<double>(entry.idleAccelerators);
        });
      });
}

}  // namespace gpuplacement::app
