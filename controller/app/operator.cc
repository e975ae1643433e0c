#include "app/operator.h"

#include <algorithm>

#include "app/memory.h"
#include "base/json_access.h"
#include "base/time_format.h"

namespace gpuplacement::app {

namespace {

constexpr const char* kGroupVersion = "/apis/gpuplacement.io/v1alpha1";
constexpr const char* kWorkloadPrefix = "w:";
constexpr const char* kPolicyPrefix = "p:";
constexpr auto kPolicyCountInterval = std::chrono::seconds(10);

std::pair<std::string, std::string> splitKey(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? std::pair{std::string(), key}
                                    : std::pair{key.substr(0, slash), key.substr(slash + 1)};
}

// JSON Patch "add" of /status replaces the whole status, so fields the new
// one lacks do not linger as they would with a merge patch.
nlohmann::json replaceStatus(const nlohmann::json& status) {
  return nlohmann::json::array({{{"op", "add"}, {"path", "/status"}, {"value", status}}});
}

}  // namespace

std::size_t RolloutTracker::inFlight(const std::string& policy) const {
  return static_cast<std::size_t>(
      std::count_if(policyOf_.begin(), policyOf_.end(),
                    [&](const auto& entry) { return entry.second == policy; }));
}

void RolloutTracker::start(const std::string& policy, const std::string& deployment) {
  policyOf_[deployment] = policy;
}

std::vector<std::string> RolloutTracker::finish(const std::string& deployment) {
  const auto it = policyOf_.find(deployment);
  if (it == policyOf_.end()) {
    return {};
  }
  const std::string policy = it->second;
  policyOf_.erase(it);
  auto& waiting = waiting_[policy];
  std::vector<std::string> wake(waiting.begin(), waiting.end());
  waiting.clear();
  return wake;
}

Operator::Operator(asio::any_io_executor executor, kube::KubeClient& client,
                   std::shared_ptr<const core::Catalog> catalog,
                   std::shared_ptr<const core::RuleSet> rules, OperatorOptions options,
                   Logger& logger, MetricsRegistry& metrics, const runtime::Clock& clock)
    : executor_(executor),
      client_(client),
      listWatch_(client),
      catalog_(std::move(catalog)),
      rules_(std::move(rules)),
      options_(std::move(options)),
      log_(logger),
      metrics_(metrics),
      clock_(clock),
      queue_(clock),
      asyncQueue_(executor, queue_),
      controller_(
          executor, asyncQueue_, options_.workers,
          [this](const std::string& key) { return reconcile(key); }, clock),
      reconcileTotal_(metrics.counter("controller_runtime_reconcile_total",
                                      "Total number of reconciliations per controller",
                                      {"controller", "result"})),
      reconcileErrors_(metrics.counter("controller_runtime_reconcile_errors_total",
                                       "Total number of reconciliation errors per controller",
                                       {"controller"})),
      reconcileTime_(metrics.histogram("controller_runtime_reconcile_time_seconds",
                                       "Length of time per reconciliation per controller",
                                       {"controller"}, reconcileBuckets())),
      placementsTotal_(
          metrics.counter("gpu_placement_placements_total",
                          "Placements written to Deployments, by tier and instance type",
                          {"tier", "instance_type"})),
      replacementsTotal_(metrics.counter("gpu_placement_replacements_total",
                                         "Workloads moved by a price or rule change", {"policy"})),
      replacementSavings_(metrics.counter(
          "gpu_placement_replacement_monthly_savings_dollars_total",
          "Sum of the monthly savings of re-placements (negative when a move costs more)",
          {"policy"})) {
  auto engine = core::PlacementEngine::create(catalog_, rules_, core::Policy{});
  builtin_ = PolicyEngine{0, *engine};  // the catalog and rules were checked at start-up

  const auto logInformer = [this](const std::string& message) { log_.warn(message); };
  runtime::InformerOptions base;
  base.pageSize = options_.pageSize;
  base.minWatchTimeout = options_.watchTimeout;

  auto policyOptions = base;
  policyOptions.resource = "placementpolicies";
  policyOptions.path = std::string(kGroupVersion) + "/placementpolicies";
  policies_ = std::make_unique<PolicyInformer>(
      executor_, listWatch_, policyOptions,
      [this](const nlohmann::json& object) { return projectPolicy(object, *catalog_, *rules_); },
      clock_);
  policies_->addHandler([this](const std::string& key, const PolicyObject* previous,
                               const PolicyObject* current) { onPolicy(key, previous, current); });
  policies_->setLogger(logInformer);

  std::vector<std::string> scopes = options_.namespaces;
  if (scopes.empty()) {
    scopes.push_back("");
  }
  for (const auto& ns : scopes) {
    const std::string nsPath = ns.empty() ? "" : "/namespaces/" + ns;
    auto workloadOptions = base;
    workloadOptions.resource = "gpuworkloads" + (ns.empty() ? "" : " in " + ns);
    workloadOptions.path = std::string(kGroupVersion) + nsPath + "/gpuworkloads";
    auto workloads = std::make_unique<WorkloadInformer>(
        executor_, listWatch_, workloadOptions,
        [](const nlohmann::json& object) { return packWorkload(object); }, clock_);
    workloads->addHandler(
        [this](const std::string& key, const CachedWorkload* previous,
               const CachedWorkload* current) { onWorkload(key, previous, current); });
    workloads->setLogger(logInformer);
    workloadInformers_.push_back(std::move(workloads));

    auto deploymentOptions = base;
    deploymentOptions.resource = "deployments" + (ns.empty() ? "" : " in " + ns);
    deploymentOptions.path = "/apis/apps/v1" + nsPath + "/deployments";
    auto deployments = std::make_unique<DeploymentInformer>(
        executor_, listWatch_, deploymentOptions,
        [](const nlohmann::json& object) {
          return packDeployment(core::deploymentFromJson(object));
        },
        clock_);
    deployments->addHandler(
        [this](const std::string& key, const CachedDeployment* previous,
               const CachedDeployment* current) { onDeployment(key, previous, current); });
    deployments->setLogger(logInformer);
    deploymentInformers_.push_back(std::move(deployments));
  }

  auto& lists = metrics.counter(
      "gpu_placement_informer_lists_total",
      "Full lists per watched resource (1 at start, then one per 410 Gone)", {"resource"});
  auto& relists =
      metrics.counter("gpu_placement_informer_relists_total",
                      "Lists after the first: watches that expired (410 Gone)", {"resource"});
  metrics.onCollect([this, &lists, &relists] {
    const auto record = [&](const std::string& resource, const runtime::WatchState& state) {
      lists.set({resource}, state.lists());
      relists.set({resource}, std::max(0, state.lists() - 1));
    };
    record(policies_->options().resource, policies_->state());
    for (const auto& informer : workloadInformers_) {
      record(informer->options().resource, informer->state());
    }
    for (const auto& informer : deploymentInformers_) {
      record(informer->options().resource, informer->state());
    }
  });

  registerGauges();
  auto& queueWait =
      metrics.histogram("workqueue_queue_duration_seconds",
                        "How long in seconds an item stays in workqueue before being requested",
                        {"name"}, latencyBuckets());
  auto& workDuration = metrics.histogram(
      "workqueue_work_duration_seconds",
      "How long in seconds processing an item from workqueue takes", {"name"}, latencyBuckets());
  auto& retries = metrics.counter("workqueue_retries_total",
                                  "Total number of retries handled by workqueue", {"name"});
  retries.inc({"gpuworkload"}, 0);  // a series from the start, so rate() has a baseline
  controller_.setObserver([this, &queueWait, &workDuration,
                           &retries](const runtime::ReconcileRecord& record) {
    queueWait.observe({"gpuworkload"}, std::chrono::duration<double>(record.queueWait).count());
    workDuration.observe({"gpuworkload"}, std::chrono::duration<double>(record.duration).count());
    if (record.outcome == runtime::ReconcileResult::Outcome::Error) {
      retries.inc({"gpuworkload"});
    }
    const std::string controller =
        record.key.rfind(kPolicyPrefix, 0) == 0 ? "placementpolicy" : "gpuworkload";
    const char* result = "success";
    switch (record.outcome) {
      case runtime::ReconcileResult::Outcome::Done:
        break;
      case runtime::ReconcileResult::Outcome::Requeue:
        result = "requeue_after";
        break;
      case runtime::ReconcileResult::Outcome::Error:
      case runtime::ReconcileResult::Outcome::Terminal:
        result = "error";
        reconcileErrors_.inc({controller});
        break;
    }
    reconcileTotal_.inc({controller, result});
    reconcileTime_.observe({controller}, std::chrono::duration<double>(record.duration).count());
  });
}

Operator::~Operator() = default;

void Operator::registerGauges() {
  auto& depth = metrics_.gauge("workqueue_depth", "Current depth of workqueue", {"name"});
  auto& adds = metrics_.counter("workqueue_adds_total", "Total number of adds handled by workqueue",
                                {"name"});
  auto& placed = metrics_.gauge("gpu_placement_placed_workloads",
                                "GpuWorkloads with a placement in force, by tier and instance type",
                                {"tier", "instance_type"});
  auto& cost = metrics_.gauge("gpu_placement_estimated_hourly_cost_dollars",
                              "Estimated USD per hour of the placements in force, all replicas",
                              {"tier", "namespace"});
  auto& generation =
      metrics_.gauge("gpu_placement_policy_generation",
                     "Generation of the PlacementPolicy in force (0: built-in)", {"policy"});
  auto& leader = metrics_.gauge("leader_election_master_status",
                                "1 while this replica reconciles (the leader, or alone)", {"name"});
  metrics_.onCollect([this, &depth, &adds, &placed, &cost, &generation, &leader] {
    depth.set({"gpuworkload"}, static_cast<double>(queue_.depth()));
    adds.set({"gpuworkload"}, static_cast<double>(queue_.adds()));
    placed.clear();
    cost.clear();
    for (const auto& [key, entry] : inForce_) {
      const std::string tier(core::nameOf(entry.tier));
      placed.inc({tier, entry.instanceType});
      cost.inc({tier, splitKey(key).first}, entry.totalHourlyCost);
    }
    generation.clear();
    generation.set({"default"}, 0);
    for (const auto& [name, engine] : engines_) {
      generation.set({name}, static_cast<double>(engine.generation));
    }
    leader.set({"gpu-placement-operator"}, !leaderOnly_ || leader_ ? 1 : 0);
  });
}

bool Operator::synced() const {
  if (!policies_->synced()) {
    return false;
  }
  for (const auto& informer : workloadInformers_) {
    if (!informer->synced()) {
      return false;
    }
  }
  for (const auto& informer : deploymentInformers_) {
    if (!informer->synced()) {
      return false;
    }
  }
  return true;
}

bool Operator::healthy() const {
  // An informer that has failed many times in a row is not making progress;
  // a restart (what a failing liveness probe causes) is the cheap fix.
  constexpr int kTooManyFailures = 20;
  if (policies_->state().consecutiveFailures() > kTooManyFailures) {
    return false;
  }
  for (const auto& informer : workloadInformers_) {
    if (informer->state().consecutiveFailures() > kTooManyFailures) {
      return false;
    }
  }
  for (const auto& informer : deploymentInformers_) {
    if (informer->state().consecutiveFailures() > kTooManyFailures) {
      return false;
    }
  }
  return true;
}

asio::awaitable<void> Operator::run() {
  asio::co_spawn(executor_, policies_->run(), asio::detached);
  for (auto& informer : workloadInformers_) {
    asio::co_spawn(executor_, informer->run(), asio::detached);
  }
  for (auto& informer : deploymentInformers_) {
    asio::co_spawn(executor_, informer->run(), asio::detached);
  }
  // Workers start once every cache is full, as in controller-runtime, so
  // no reconcile sees a half-listed world.
  co_await policies_->waitForSync();
  for (auto& informer : workloadInformers_) {
    co_await informer->waitForSync();
  }
  for (auto& informer : deploymentInformers_) {
    co_await informer->waitForSync();
  }
  if (!stopped_) {
    returnFreedMemory();  // the list pages are gone; their pages need not stay resident
    log_.info("caches synced", {{"policies", std::to_string(policies_->store().size())}});
  }
  while (leaderOnly_ && !leader_ && !stopped_) {
    asio::steady_timer wait(executor_, runtime::MonotonicTime::max());
    leaderWait_ = &wait;
    boost::system::error_code ignored;
    co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
    leaderWait_ = nullptr;
  }
  if (!stopped_) {
    recoverRollouts();
    asio::co_spawn(executor_, resyncLoop(), asio::detached);
    co_await controller_.run();
  }
}

void Operator::becomeLeader() {
  leader_ = true;
  if (leaderWait_) {
    leaderWait_->cancel();
  }
  // Everything the standby watched is now this replica's to reconcile.
  for (const auto& informer : workloadInformers_) {
    informer->store().forEach(
        [this](const std::string& key, const CachedWorkload&) { asyncQueue_.add("w:" + key); });
  }
}

void Operator::stop() {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  if (leaderWait_) {
    leaderWait_->cancel();
  }
  asyncQueue_.shutDown();
  if (resyncTimer_) {
    resyncTimer_->cancel();
  }
  policies_->stop();
  for (auto& informer : workloadInformers_) {
    informer->stop();
  }
  for (auto& informer : deploymentInformers_) {
    informer->stop();
  }
}

asio::awaitable<void> Operator::resyncLoop() {
  asio::steady_timer timer(executor_);
  resyncTimer_ = &timer;
  while (!stopped_) {
    timer.expires_after(options_.resync);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) {
      break;
    }
    // A safety net: level-based reconciles of everything, which write
    // nothing when nothing changed.
    for (const auto& informer : workloadInformers_) {
      informer->store().forEach([this](const std::string& key, const CachedWorkload&) {
        asyncQueue_.add(kWorkloadPrefix + key);
      });
    }
    policies_->store().forEach([this](const std::string& name, const PolicyObject&) {
      asyncQueue_.add(kPolicyPrefix + name);
    });
  }
  resyncTimer_ = nullptr;
}

void Operator::recoverRollouts() {
  // After a restart: rollouts this operator started and that are still
  // running hold their slots again.
  for (const auto& informer : workloadInformers_) {
    informer->store().forEach([this](const std::string& key, const CachedWorkload& cached) {
      if (!cached.movedByReplacement) {
        return;  // only moves hold rollout slots
      }
      const auto workload = cached.unpack(*catalog_);
      const auto& applied = workload.status.applied;
      if (!applied || !applied->replacement) {
        return;
      }
      const std::string deploymentKey = splitKey(key).first + "/" + applied->deployment;
      const auto state = deployment(deploymentKey);
      if (state && state->generation == applied->deploymentGeneration && !state->rolledOut() &&
          !state->progressDeadlineExceeded) {
        rollouts_.start(workload.policyName, deploymentKey);
      }
    });
  }
}

const CachedWorkload* Operator::cachedWorkload(const std::string& key) const {
  for (const auto& informer : workloadInformers_) {
    if (const auto* found = informer->store().get(key)) {
      return found;
    }
  }
  return nullptr;
}

const CachedDeployment* Operator::cachedDeployment(const std::string& key) const {
  for (const auto& informer : deploymentInformers_) {
    if (const auto* found = informer->store().get(key)) {
      return found;
    }
  }
  return nullptr;
}

std::optional<WorkloadObject> Operator::workload(const std::string& key) const {
  if (const auto* cached = cachedWorkload(key)) {
    return cached->unpack(*catalog_);
  }
  return std::nullopt;
}

std::optional<core::DeploymentState> Operator::deployment(const std::string& key) const {
  if (const auto* cached = cachedDeployment(key)) {
    return cached->unpack();
  }
  return std::nullopt;
}

std::string Operator::deploymentResourceVersion(const std::string& key) const {
  for (const auto& informer : deploymentInformers_) {
    if (const auto* entry = informer->store().entry(key)) {
      return entry->resourceVersion;
    }
  }
  return "";
}

void Operator::onWorkload(const std::string& key, const CachedWorkload* previous,
                          const CachedWorkload* current) {
  const std::string ns = splitKey(key).first;
  if (!current) {
    released_.erase(key);
    statusExpected_.erase(key);
  } else if (const auto expected = statusExpected_.find(key);
             expected != statusExpected_.end() &&
             expected->second.statusHash == current->statusHash) {
    statusExpected_.erase(expected);
  }
  if (previous) {
    byDeployment_.remove(ns + "/" + previous->targetName, key);
    if (--workloadsOfPolicy_[previous->policyName] == 0) {
      workloadsOfPolicy_.erase(previous->policyName);
    }
  }
  if (current) {
    byDeployment_.add(ns + "/" + current->targetName, key);
    ++workloadsOfPolicy_[current->policyName];
  }
  if (!previous || !current || previous->policyName != current->policyName) {
    // The policy's workload count changed.
    if (previous) {
      asyncQueue_.add(kPolicyPrefix + previous->policyName);
    }
    if (current) {
      asyncQueue_.add(kPolicyPrefix + current->policyName);
    }
  }
  // Our own status writes change nothing the reconcile reads from the spec:
  // like controller-runtime's GenerationChangedPredicate, they need no
  // reconcile (the resync covers edits of status by others).
  if (previous && current && previous->generation == current->generation &&
      previous->deleting == current->deleting &&
      previous->finalizersDigest == current->finalizersDigest) {
    return;
  }
  asyncQueue_.add(kWorkloadPrefix + key);
}

void Operator::onDeployment(const std::string& key, const CachedDeployment* previous,
                            const CachedDeployment* current) {
  if (const auto expected = deploymentExpected_.find(key);
      expected != deploymentExpected_.end() && caughtUp(expected->second, current)) {
    deploymentExpected_.erase(expected);
  }
  if (previous && current && *previous == *current) {
    return;
  }
  const std::string ns = splitKey(key).first;
  if (previous && !previous->owner.empty()) {
    ownedBy_.remove(ns + "/" + previous->owner, key);
  }
  if (current && !current->owner.empty()) {
    const std::string ownerKey = ns + "/" + current->owner;
    ownedBy_.add(ownerKey, key);
    if (!cachedWorkload(ownerKey)) {
      // Fields of a GpuWorkload that no longer exists (deleted while no
      // operator ran, or its finalizer removed by hand): take them back.
      asyncQueue_.add(kWorkloadPrefix + ownerKey);
    }
  }
  for (const auto& workloadKey : byDeployment_.of(key)) {
    asyncQueue_.add(kWorkloadPrefix + workloadKey);
  }
}

void Operator::onPolicy(const std::string& name, const PolicyObject*, const PolicyObject* current) {
  asyncQueue_.add(kPolicyPrefix + name);
  if (!current) {
    engines_.erase(name);
    log_.info("placement policy deleted", {{"name", name}});
    enqueueWorkloadsOfPolicy(name);
    return;
  }
  if (!current->policy) {
    // The last good version stays in force.
    log_.warn("placement policy rejected", {{"name", name}, {"error", current->error.describe()}});
    return;
  }
  const auto existing = engines_.find(name);
  if (existing != engines_.end() && existing->second.generation == current->generation) {
    return;
  }
  auto engine = core::PlacementEngine::create(catalog_, rules_, *current->policy);
  if (!engine) {
    log_.error("cannot build the placement engine",
               {{"name", name}, {"error", engine.error().describe()}});
    return;
  }
  engines_[name] = PolicyEngine{current->generation, *engine};
  log_.info("placement policy in force",
            {{"name", name}, {"generation", std::to_string(current->generation)}});
  enqueueWorkloadsOfPolicy(name);
}

void Operator::enqueueWorkloadsOfPolicy(const std::string& policy) {
  for (const auto& informer : workloadInformers_) {
    informer->store().forEach([&](const std::string& key, const CachedWorkload& workload) {
      if (workload.policyName == policy) {
        asyncQueue_.add(kWorkloadPrefix + key);
      }
    });
  }
}

const Operator::PolicyEngine* Operator::engineFor(const std::string& policy,
                                                  std::string& problem) const {
  if (const auto it = engines_.find(policy); it != engines_.end()) {
    return &it->second;
  }
  // "default" falls back to the built-in policy: what was in force before
  // anyone wrote one.
  if (policy == "default") {
    return &builtin_;
  }
  const auto* object = policies_->store().get(policy);
  problem = object ? "PlacementPolicy " + policy + " is invalid (" + object->error.describe() +
                         ") and no earlier version of it was accepted"
                   : "PlacementPolicy " + policy + " does not exist";
  return nullptr;
}

asio::awaitable<runtime::ReconcileResult> Operator::reconcile(const std::string& key) {
  // The name outlives the co_await as a local, not as a temporary.
  const std::string name = key.substr(2);
  if (key.rfind(kPolicyPrefix, 0) == 0) {
    co_return co_await reconcilePolicy(name);
  }
  co_return co_await reconcileWorkload(name);
}

asio::awaitable<runtime::ReconcileResult> Operator::reconcilePolicy(const std::string& name) {
  const auto* object = policies_->store().get(name);
  if (!object) {
    co_return runtime::ReconcileResult::done();
  }
  std::vector<core::Condition> conditions = object->conditions;
  const auto engine = engines_.find(name);
  core::Condition accepted{"Accepted", "True", "Valid", "", "", object->generation};
  if (object->policy) {
    accepted.message = "generation " + std::to_string(object->generation) + " is in force";
  } else {
    accepted.status = "False";
    accepted.reason = "Invalid";
    accepted.message =
        object->error.describe() + "; " +
        (engine != engines_.end()
             ? "generation " + std::to_string(engine->second.generation) + " stays in force"
             : std::string("no version of this policy is in force"));
  }
  core::setCondition(conditions, accepted, timestamp());
  const auto count = workloadsOfPolicy_.count(name) ? workloadsOfPolicy_.at(name) : 0;
  nlohmann::json conditionList = nlohmann::json::array();
  for (const auto& condition : conditions) {
    conditionList.push_back({{"type", condition.type},
                             {"status", condition.status},
                             {"reason", condition.reason},
                             {"message", condition.message},
                             {"lastTransitionTime", condition.lastTransitionTime},
                             {"observedGeneration", condition.observedGeneration}});
  }
  const nlohmann::json status = {{"observedGeneration", object->generation},
                                 {"workloads", count},
                                 {"conditions", std::move(conditionList)}};
  if (statusDigest(status) == object->statusHash) {
    co_return runtime::ReconcileResult::done();
  }
  auto storedCount = status;
  storedCount["workloads"] = object->workloadCount;
  if (statusDigest(storedCount) == object->statusHash) {
    // Only the count moved: batch it.
    const auto now = clock_.monotonicNow();
    const auto last = policyCountWritten_.find(name);
    if (last != policyCountWritten_.end() && now - last->second < kPolicyCountInterval) {
      co_return runtime::ReconcileResult::requeue(kPolicyCountInterval - (now - last->second));
    }
  }
  policyCountWritten_[name] = clock_.monotonicNow();
  // (Built before co_await: g++ 12 miscompiles brace-initialised
  // temporaries inside a co_await expression.)
  const std::string path = std::string(kGroupVersion) + "/placementpolicies/" + name + "/status";
  const auto patch = replaceStatus(status);
  auto written = co_await client_.patch(path, patch, kube::PatchType::Json);
  if (!written && !written.error().notFound()) {
    co_return runtime::ReconcileResult::error("writing the policy status: " +
                                              written.error().describe());
  }
  co_return runtime::ReconcileResult::done();
}

namespace {
// Long enough for a watch event under load; short enough that a status or
// Deployment edited by someone else right after our write is not ignored
// for long.
constexpr auto kExpectationTimeout = std::chrono::seconds(10);
}  // namespace

bool Operator::awaitingStatus(const std::string& key, const WorkloadObject& workload) {
  const auto it = statusExpected_.find(key);
  if (it == statusExpected_.end()) {
    return false;
  }
  if (workload.statusHash == it->second.statusHash || clock_.monotonicNow() >= it->second.until) {
    statusExpected_.erase(it);
    return false;
  }
  return true;
}

bool Operator::caughtUp(const DeploymentExpectation& expected, const CachedDeployment* cached) {
  return !cached || cached->generation > expected.generation ||
         (cached->generation == expected.generation && cached->ownedDigest == expected.ownedDigest);
}

bool Operator::awaitingDeployment(const std::string& key, const CachedDeployment* cached) {
  const auto it = deploymentExpected_.find(key);
  if (it == deploymentExpected_.end()) {
    return false;
  }
  if (caughtUp(it->second, cached) || clock_.monotonicNow() >= it->second.until) {
    deploymentExpected_.erase(it);
    return false;
  }
  return true;
}

std::string Operator::workloadPath(const std::string& ns, const std::string& name) const {
  return std::string(kGroupVersion) + "/namespaces/" + ns + "/gpuworkloads/" + name;
}

std::string Operator::deploymentPath(const std::string& ns, const std::string& name) const {
  return "/apis/apps/v1/namespaces/" + ns + "/deployments/" + name;
}

std::string Operator::timestamp() const {
  return base::formatRfc3339(clock_.systemNow());
}

asio::awaitable<Operator::PatchOutcome> Operator::patchDeployment(
    const std::string& ns, const std::string& name, const core::Scheduling* desired,
    const std::vector<std::string>& containers, const std::string& workloadName,
    std::vector<std::string>& conflicts) {
  PatchOutcome outcome;
  const std::string key = ns + "/" + name;
  const auto cached = deployment(key);
  if (!cached) {
    outcome.notFound = true;
    co_return outcome;
  }
  core::DeploymentState state = *cached;
  std::string resourceVersion = deploymentResourceVersion(key);
  // The cache can lag behind the server; on a 409 read the Deployment fresh
  // and plan again (optimistic concurrency), a few times at most.
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto plan =
        core::planDeploymentPatch(state, desired, containers, workloadName, resourceVersion);
    conflicts = plan.conflicts;
    if (!plan.error.empty()) {
      outcome.error = plan.error;
      co_return outcome;
    }
    if (plan.blocked() || !plan.patch) {
      outcome.state = state;
      outcome.resourceVersion = resourceVersion;
      co_return outcome;
    }
    auto result =
        co_await client_.patch(deploymentPath(ns, name), *plan.patch, kube::PatchType::Strategic);
    if (result) {
      outcome.patched = true;
      outcome.state = core::deploymentFromJson(*result);
      deploymentExpected_[key] = DeploymentExpectation{outcome.state.generation,
                                                       ownedFieldsDigest(outcome.state.ownedFields),
                                                       clock_.monotonicNow() + kExpectationTimeout};
      outcome.resourceVersion =
          base::stringMember(base::memberOf(*result, "metadata"), "resourceVersion");
      co_return outcome;
    }
    if (result.error().notFound()) {
      outcome.notFound = true;
      co_return outcome;
    }
    if (!result.error().conflict()) {
      outcome.error = "patching the Deployment: " + result.error().describe();
      co_return outcome;
    }
    auto fresh = co_await client_.get(deploymentPath(ns, name));
    if (!fresh) {
      outcome.notFound = fresh.error().notFound();
      outcome.error = outcome.notFound ? "" : "reading the Deployment: " + fresh.error().describe();
      co_return outcome;
    }
    state = core::deploymentFromJson(*fresh);
    resourceVersion = base::stringMember(base::memberOf(*fresh, "metadata"), "resourceVersion");
  }
  outcome.conflict = true;
  outcome.error = "the Deployment kept changing under us (409 Conflict); will retry";
  co_return outcome;
}

asio::awaitable<std::string> Operator::writeWorkloadStatus(const std::string& ns,
                                                           const std::string& name,
                                                           const nlohmann::json& status) {
  const std::string path = workloadPath(ns, name) + "/status";
  const auto patch = replaceStatus(status);
  auto result = co_await client_.patch(path, patch, kube::PatchType::Json);
  if (!result && !result.error().notFound()) {
    co_return "writing status: " + result.error().describe();
  }
  if (result) {
    statusExpected_[ns + "/" + name] =
        StatusExpectation{statusDigest(base::memberOf(*result, "status")),
                          clock_.monotonicNow() + kExpectationTimeout};
  }
  co_return "";
}

asio::awaitable<std::string> Operator::setFinalizer(const std::string& ns, const std::string& name,
                                                    const WorkloadObject& workload, bool present) {
  std::vector<std::string> finalizers;
  for (const auto& finalizer : workload.finalizers) {
    if (finalizer != kFinalizer) {
      finalizers.push_back(finalizer);
    }
  }
  if (present) {
    finalizers.push_back(kFinalizer);
  }
  std::string resourceVersion;
  for (const auto& informer : workloadInformers_) {
    if (const auto* entry = informer->store().entry(ns + "/" + name)) {
      resourceVersion = entry->resourceVersion;
    }
  }
  const std::string path = workloadPath(ns, name);
  const nlohmann::json patch = {
      {"metadata", {{"resourceVersion", resourceVersion}, {"finalizers", finalizers}}}};
  auto result = co_await client_.patch(path, patch, kube::PatchType::Merge);
  if (!result && !result.error().notFound()) {
    co_return "updating finalizers: " + result.error().describe();
  }
  co_return "";
}

asio::awaitable<void> Operator::recordEvent(const std::string& ns, const std::string& name,
                                            const WorkloadObject& workload, const std::string& type,
                                            const std::string& reason, const std::string& message) {
  const std::string now = timestamp();
  const nlohmann::json event = {{"apiVersion", "v1"},
                                {"kind", "Event"},
                                {"metadata", {{"generateName", name + "."}, {"namespace", ns}}},
                                {"involvedObject",
                                 {{"apiVersion", "gpuplacement.io/v1alpha1"},
                                  {"kind", "GpuWorkload"},
                                  {"namespace", ns},
                                  {"name", name},
                                  {"uid", workload.uid}}},
                                {"reason", reason},
                                {"message", message.substr(0, 1024)},
                                {"type", type},
                                {"source", {{"component", "gpu-placement-operator"}}},
                                {"reportingComponent", "gpuplacement.io/operator"},
                                {"reportingInstance", options_.instance},
                                {"firstTimestamp", now},
                                {"lastTimestamp", now},
                                {"count", 1}};
  const std::string path = "/api/v1/namespaces/" + ns + "/events";
  auto result = co_await client_.create(path, event);
  if (!result) {
    // Events are best effort: a lost one must not fail the reconcile.
    log_.warn("cannot record event", {{"namespace", ns},
                                      {"name", name},
                                      {"reason", reason},
                                      {"error", result.error().describe()}});
  }
}

}  // namespace gpuplacement::app
