#include "app/workload_reconciler.h"

namespace gpuplacement::app {
namespace {

using runtime::ReconcileResult;

// How long a reconcile waits for the cache to show our own write.
constexpr auto kCacheLag = std::chrono::milliseconds(100);
// A Deployment that keeps changing between our read and our patch.
constexpr int kPatchAttempts = 4;

// A patch the server will refuse again until someone changes something:
// 403 (RBAC) or 422 (the result would be invalid, e.g. annotations over
// 256 KiB). Said on the GpuWorkload, not retried in silence.
std::optional<core::TargetOutcome> refused(const kube::ApiError& error,
                                           const core::DeploymentState& state,
                                           const std::string& name) {
  using Kind = core::TargetOutcome::Kind;
  if (!error.forbidden() && error.status != 422) {
    return std::nullopt;
  }
  return core::TargetOutcome{
      error.forbidden() ? Kind::Forbidden : Kind::Blocked,
      state,
      {},
      "the API server refused the patch of Deployment " + name + ": " + error.describe()};
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

WorkloadReconciler::WorkloadReconciler(asio::any_io_executor executor, ObjectCaches& caches,
                                       const PolicyEngines& engines, ApiWrites& writes,
                                       EventRecorder& events, WorkloadReconcilerOptions options,
                                       Logger& log, MetricsRegistry& metrics,
                                       ControllerMetrics& controllerMetrics,
                                       const runtime::Clock& clock)
    : caches_(caches),
      engines_(engines),
      writes_(writes),
      events_(events),
      log_(log),
      clock_(clock),
      useFinalizer_(options.finalizer),
      expectations_(clock),
      queue_(clock),
      asyncQueue_(queue_),
      controller_(
          executor, asyncQueue_, options.workers,
          [this](const runtime::ObjectKey& key) { return reconcile(key); }, clock),
      placementsTotal_(
          metrics.counter("gpu_placement_placements_total",
                          "Placements written to Deployments, by tier and instance type",
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
  controllerMetrics.attach("gpuworkload", controller_, queue_);
  registerGauges(metrics, options.perWorkloadMetrics);
  caches_.onWorkload([this](const std::string& key, const CachedWorkload* previous,
                            const CachedWorkload* current) { onWorkload(key, previous, current); });
  caches_.onPendingPods([this](const std::string& deployment) {
    for (const auto& workload : caches_.workloadsTargeting(deployment)) {
      enqueue(workload);
    }
  });
  caches_.onDeployment(
      [this](const std::string& key, const CachedDeployment* previous,
             const CachedDeployment* current) { onDeployment(key, previous, current); });
}

asio::awaitable<void> WorkloadReconciler::run() {
  co_await controller_.run();
}

void WorkloadReconciler::enqueueAll() {
  caches_.forEachWorkload([this](const std::string& key, const CachedWorkload&) { enqueue(key); });
}

void WorkloadReconciler::enqueueWorkloadsOf(const std::string& policy) {
  caches_.forEachWorkload([&](const std::string& key, const CachedWorkload& workload) {
    if (workload.policyName == policy) {
      enqueue(key);
    }
  });
}

void WorkloadReconciler::recoverRollouts() {
  caches_.forEachWorkload([this](const std::string& key, const CachedWorkload& cached) {
    if (!cached.movedByReplacement) {
      return;  // only moves hold rollout slots
    }
    const auto workload = cached.unpack();
    const auto& applied = workload.status.applied;
    if (!applied || !applied->replacement) {
      return;
    }
    const std::string deploymentKey = namespaceOf(key) + "/" + applied->deployment;
    const auto* deployment = caches_.deployment(deploymentKey);
    if (!deployment) {
      return;
    }
    const auto state = deployment->unpack();
    if (state.generation == applied->deploymentGeneration && !state.rolledOut() &&
        !state.progressDeadlineExceeded) {
      rollouts_.start(workload.policyName, deploymentKey);
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
  core::WorkloadPlan plan = core::planWorkload(snapshot.input);
  for (const auto& deployment : plan.release) {
    auto released = co_await release(key.ns, deployment, key.name);
    if (!released) {
      co_return ReconcileResult::error("removing the placement from " + deployment + ": " +
                                       released.error());
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
  const auto* cached = caches_.workload(key);
  if (!cached) {
    return std::nullopt;
  }
  if (cached->deleting && expectations_.awaitingDeletion(key)) {
    return ReconcileResult::done();  // our finalizer is off; the deletion follows
  }
  const std::string target = namespaceOf(key) + "/" + cached->targetName;
  if (expectations_.awaitingStatus(key, *cached) ||
      expectations_.awaitingDeployment(target, caches_.deployment(target))) {
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
  input.podsPlaceable = caches_.podsKnown();
  const auto* cached = caches_.workload(id);
  if (!cached) {
    input.orphans.clear();
    for (const auto& deployment : caches_.deploymentsOwnedBy(id)) {
      input.orphans.push_back(runtime::ObjectKey::parse(deployment).name);
    }
    return;
  }
  snapshot.workload = cached->unpack();
  snapshot.workloadResourceVersion = caches_.workloadResourceVersion(id);
  input.workload = &*snapshot.workload;
  const std::string target = key.ns + "/" + snapshot.workload->targetName;
  if (const auto* deployment = caches_.deployment(target)) {
    snapshot.target = deployment->unpack();
    input.target = &*snapshot.target;
    input.targetResourceVersion = caches_.deploymentResourceVersion(target);
    input.pending = caches_.pendingPodsOf(target);
  }
  const auto& policy = snapshot.workload->policyName;
  input.policy = engines_.view(policy, caches_.policy(policy));
  snapshot.cluster = engines_.clusterView(policy, input.policy, caches_);
  input.cluster = snapshot.cluster.get();
  input.rollouts.holdsSlot = rollouts_.holds(target);
  input.rollouts.inFlight = rollouts_.inFlight(policy);
}

asio::awaitable<base::Result<base::Ok, std::string>> WorkloadReconciler::release(
    std::string ns, std::string deployment, std::string workload) {
  const std::string deploymentKey = ns + "/" + deployment;
  const auto* cached = caches_.deployment(deploymentKey);
  if (!cached) {
    finishRollout(deploymentKey);
    co_return base::Ok{};  // gone: nothing of ours is left on it
  }
  const auto state = cached->unpack();
  const auto resourceVersion = caches_.deploymentResourceVersion(deploymentKey);
  const PatchPlanner remove = [workload](const core::DeploymentState& live,
                                         const std::string& version) {
    return core::planDeploymentPatch(live, nullptr, {}, workload, version);
  };
  auto outcome = co_await converge(ns, deployment, state, resourceVersion,
                                   remove(state, resourceVersion), remove);
  if (!outcome) {
    co_return outcome.error();
  }
  if ((outcome->kind == core::TargetOutcome::Kind::Blocked && !outcome->error.empty()) ||
      outcome->kind == core::TargetOutcome::Kind::Forbidden) {
    co_return outcome->error;  // a record that cannot be read, or a refused patch
  }
  finishRollout(deploymentKey);
  if (outcome->kind == core::TargetOutcome::Kind::Written) {
    log_.info("placement removed",
              {{"namespace", ns}, {"name", workload}, {"deployment", deployment}});
  }
  co_return base::Ok{};
}

asio::awaitable<WorkloadReconciler::Outcome> WorkloadReconciler::writeTarget(
    const runtime::ObjectKey& key, const Snapshot& snapshot, const core::WorkloadPlan& plan) {
  const auto& write = *plan.write;
  const std::string deploymentKey = key.ns + "/" + write.deployment;
  const std::string& policy = snapshot.workload->policyName;
  if (plan.rollout == core::RolloutStep::Reserve) {
    // Taken before the patch: other workers run while this one waits on
    // the API server, and must see the slot as used.
    rollouts_.start(policy, deploymentKey);
  } else if (plan.rollout == core::RolloutStep::Wait) {
    rollouts_.wait(policy, key.str());
  }
  if (auto settled = core::outcomeWithoutWrite(write, *snapshot.target)) {
    co_return *settled;
  }
  const PatchPlanner place = [&write, name = key.name](const core::DeploymentState& live,
                                                       const std::string& version) {
    return core::planDeploymentPatch(live, &write.scheduling, write.containers, name, version,
                                     write.placeAt);
  };
  co_return co_await converge(key.ns, write.deployment, *snapshot.target,
                              snapshot.input.targetResourceVersion, write.patch, place);
}

asio::awaitable<WorkloadReconciler::Outcome> WorkloadReconciler::converge(
    std::string ns, std::string name, core::DeploymentState state, std::string resourceVersion,
    core::PatchPlan plan, PatchPlanner replan) {
  using Kind = core::TargetOutcome::Kind;
  // The cache can lag behind the server; on a 409 read the Deployment fresh
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
    auto patched = co_await writes_.patchDeployment(ns, name, *plan.patch);
    if (patched) {
      const auto& written = patched->state;
      expectations_.expectDeployment(ns + "/" + name, written.generation, written.ownership.digest);
      co_return core::TargetOutcome{Kind::Written, written, {}, "", patched->templateWriter};
    }
    if (patched.error().notFound()) {
      co_return core::TargetOutcome{Kind::NotFound, {}, {}, ""};
    }
    if (auto refusal = refused(patched.error(), state, name)) {
      co_return *refusal;
    }
    if (!patched.error().conflict()) {
      co_return "patching the Deployment: " + patched.error().describe();
    }
    auto fresh = co_await writes_.readDeployment(ns, name);
    if (!fresh) {
      if (fresh.error().notFound()) {
        co_return core::TargetOutcome{Kind::NotFound, {}, {}, ""};
      }
      co_return "reading the Deployment: " + fresh.error().describe();
    }
    state = fresh->state;
    resourceVersion = fresh->resourceVersion;
  }
  co_return std::string("the Deployment kept changing under us (409 Conflict); will retry");
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
    finishRollout(key.ns + "/" + workload.spec->targetRef.name);
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
  if (record.status) {
    auto stored = co_await writes_.replaceWorkloadStatus(key.ns, key.name, *record.status);
    if (!stored && !stored.error().notFound()) {
      co_return "writing status: " + stored.error().describe();
    }
    if (stored) {
      const auto storedDigest = core::statusDigest(*stored);
      expectations_.expectStatus(key.str(), storedDigest);
      noteStoredStatus(key.str(), *record.status, *stored, storedDigest);
    }
  }
  co_return base::Ok{};
}

void WorkloadReconciler::noteStoredStatus(const std::string& key, const nlohmann::json& written,
                                          const nlohmann::json& stored,
                                          std::uint64_t storedDigest) {
  const auto writtenDigest = core::statusDigest(written);
  if (writtenDigest == storedDigest) {
    rewritten_.erase(key);
    return;
  }
  rewritten_[key] = Rewritten{writtenDigest, storedDigest};
  if (!warnedRewritten_) {
    warnedRewritten_ = true;
    std::string changed;
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

void WorkloadReconciler::finishRollout(const std::string& deploymentKey) {
  for (const auto& waiting : rollouts_.finish(deploymentKey)) {
    enqueue(waiting);
  }
}

void WorkloadReconciler::onWorkload(const std::string& key, const CachedWorkload* previous,
                                    const CachedWorkload* current) {
  expectations_.observeWorkload(key, current);
  // Our own status writes change nothing the reconcile reads from the spec:
  // like controller-runtime's GenerationChangedPredicate, they need no
  // reconcile (the resync covers edits of status by others).
  if (previous && current && previous->generation == current->generation &&
      previous->deleting == current->deleting &&
      previous->finalizersDigest == current->finalizersDigest) {
    return;
  }
  enqueue(key);
}

void WorkloadReconciler::onDeployment(const std::string& key, const CachedDeployment* previous,
                                      const CachedDeployment* current) {
  expectations_.observeDeployment(key, current);
  if (previous && current && *previous == *current) {
    return;
  }
  if (current && !current->owner.empty()) {
    const std::string owner = namespaceOf(key) + "/" + current->owner;
    if (!caches_.workload(owner)) {
      // Fields of a GpuWorkload that no longer exists (deleted while no
      // operator ran, or its finalizer removed by hand): take them back.
      enqueue(owner);
    }
  }
  for (const auto& workload : caches_.workloadsTargeting(key)) {
    enqueue(workload);
  }
}

void WorkloadReconciler::registerGauges(MetricsRegistry& metrics, bool perWorkload) {
  auto& placed = metrics.gauge("gpu_placement_placed_workloads",
                               "GpuWorkloads with a placement in force, by tier and instance type",
                               {"tier", "instance_type"});
  auto& cost = metrics.gauge("gpu_placement_estimated_hourly_cost_dollars",
                             "Estimated USD per hour of the placements in force, all replicas",
                             {"tier", "namespace"});
  metrics.onCollect([this, &placed, &cost] {
    placed.clear();
    cost.clear();
    for (const auto& [key, entry] : inForce_) {
      const std::string tier(core::nameOf(entry.tier));
      placed.inc({tier, entry.instanceType});
      cost.inc({tier, namespaceOf(key)}, entry.totalHourlyCost);
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
