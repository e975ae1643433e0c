#include "app/caches.h"

namespace gpuplacement::app {
namespace {

constexpr const char* kGroupVersion = "/apis/gpuplacement.io/v1alpha1";
// An informer that has failed this many times in a row is not making
// progress; a restart (what a failing liveness probe causes) is the cheap fix.
constexpr int kTooManyFailures = 20;

}  // namespace

ObjectCaches::ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
                           const core::Catalog& catalog, const core::RuleSet& rules,
                           CacheOptions options, Logger& log, const runtime::Clock& clock)
    : executor_(std::move(executor)) {
  const auto logInformer = [&log](const std::string& message) { log.warn(message); };
  runtime::InformerOptions base;
  base.pageSize = options.pageSize;
  base.minWatchTimeout = options.watchTimeout;

  auto policyOptions = base;
  policyOptions.resource = "placementpolicies";
  policyOptions.path = std::string(kGroupVersion) + "/placementpolicies";
  policies_ = std::make_unique<PolicyInformer>(
      executor_, client, policyOptions,
      [&catalog, &rules](const nlohmann::json& object) {
        return projectPolicy(object, catalog, rules);
      },
      clock);
  policies_->setLogger(logInformer);

  std::vector<std::string> scopes = options.namespaces;
  if (scopes.empty()) {
    scopes.push_back("");
  }
  for (const auto& ns : scopes) {
    const std::string nsPath = ns.empty() ? "" : "/namespaces/" + ns;
    const std::string suffix = ns.empty() ? "" : " in " + ns;
    auto workloadOptions = base;
    workloadOptions.resource = "gpuworkloads" + suffix;
    workloadOptions.path = std::string(kGroupVersion) + nsPath + "/gpuworkloads";
    auto& workloads = workloads_.emplace_back(std::make_unique<WorkloadInformer>(
        executor_, client, workloadOptions,
        [&catalog](const nlohmann::json& object) { return packWorkload(object, catalog); }, clock));
    workloads->addHandler([this](const std::string& key, const CachedWorkload* previous,
                                 const CachedWorkload* current) {
      indexWorkload(key, previous, current);
      for (const auto& handler : workloadHandlers_) {
        handler(key, previous, current);
      }
    });
    workloads->setLogger(logInformer);

    auto deploymentOptions = base;
    deploymentOptions.resource = "deployments" + suffix;
    deploymentOptions.path = "/apis/apps/v1" + nsPath + "/deployments";
    auto& deployments = deployments_.emplace_back(std::make_unique<DeploymentInformer>(
        executor_, client, deploymentOptions,
        [](const nlohmann::json& object) {
          return packDeployment(core::deploymentFromJson(object));
        },
        clock));
    deployments->addHandler([this](const std::string& key, const CachedDeployment* previous,
                                   const CachedDeployment* current) {
      indexDeployment(key, previous, current);
      for (const auto& handler : deploymentHandlers_) {
        handler(key, previous, current);
      }
    });
    deployments->setLogger(logInformer);
  }
}

ObjectCaches::~ObjectCaches() = default;

void ObjectCaches::onWorkload(Handler<CachedWorkload> handler) {
  workloadHandlers_.push_back(std::move(handler));
}

void ObjectCaches::onDeployment(Handler<CachedDeployment> handler) {
  deploymentHandlers_.push_back(std::move(handler));
}

void ObjectCaches::onPolicy(Handler<PolicyObject> handler) {
  policies_->addHandler(std::move(handler));
}

template <typename F>
void ObjectCaches::forEachInformer(F&& visit) const {
  visit(*policies_);
  for (const auto& informer : workloads_) {
    visit(*informer);
  }
  for (const auto& informer : deployments_) {
    visit(*informer);
  }
}

asio::awaitable<void> ObjectCaches::run() {
  forEachInformer(
      [this](auto& informer) { asio::co_spawn(executor_, informer.run(), asio::detached); });
  co_return;
}

asio::awaitable<void> ObjectCaches::waitForSync() {
  co_await policies_->waitForSync();
  for (auto& informer : workloads_) {
    co_await informer->waitForSync();
  }
  for (auto& informer : deployments_) {
    co_await informer->waitForSync();
  }
}

void ObjectCaches::stop() {
  forEachInformer([](auto& informer) { informer.stop(); });
}

bool ObjectCaches::synced() const {
  bool synced = true;
  forEachInformer([&](const auto& informer) { synced = synced && informer.synced(); });
  return synced;
}

bool ObjectCaches::healthy() const {
  bool healthy = true;
  forEachInformer([&](const auto& informer) {
    healthy = healthy && informer.state().consecutiveFailures() <= kTooManyFailures;
  });
  return healthy;
}

void ObjectCaches::registerMetrics(MetricsRegistry& metrics) {
  auto& lists = metrics.counter(
      "gpu_placement_informer_lists_total",
      "Full lists per watched resource (1 at start, then one per 410 Gone)", {"resource"});
  auto& relists =
      metrics.counter("gpu_placement_informer_relists_total",
                      "Lists after the first: watches that expired (410 Gone)", {"resource"});
  metrics.onCollect([this, &lists, &relists] {
    forEachInformer([&](const auto& informer) {
      const auto& resource = informer.options().resource;
      lists.set({resource}, informer.state().lists());
      relists.set({resource}, std::max(0, informer.state().lists() - 1));
    });
  });
}

const CachedWorkload* ObjectCaches::workload(const std::string& key) const {
  for (const auto& informer : workloads_) {
    if (const auto* found = informer->store().get(key)) {
      return found;
    }
  }
  return nullptr;
}

std::string ObjectCaches::workloadResourceVersion(const std::string& key) const {
  for (const auto& informer : workloads_) {
    if (const auto* entry = informer->store().entry(key)) {
      return entry->resourceVersion;
    }
  }
  return "";
}

const CachedDeployment* ObjectCaches::deployment(const std::string& key) const {
  for (const auto& informer : deployments_) {
    if (const auto* found = informer->store().get(key)) {
      return found;
    }
  }
  return nullptr;
}

std::string ObjectCaches::deploymentResourceVersion(const std::string& key) const {
  for (const auto& informer : deployments_) {
    if (const auto* entry = informer->store().entry(key)) {
      return entry->resourceVersion;
    }
  }
  return "";
}

const PolicyObject* ObjectCaches::policy(const std::string& name) const {
  return policies_->store().get(name);
}

std::size_t ObjectCaches::policyCount() const {
  return policies_->store().size();
}

void ObjectCaches::forEachWorkload(
    const std::function<void(const std::string&, const CachedWorkload&)>& visit) const {
  for (const auto& informer : workloads_) {
    informer->store().forEach(visit);
  }
}

void ObjectCaches::forEachPolicy(const std::function<void(const std::string&)>& visit) const {
  policies_->store().forEach([&](const std::string& name, const PolicyObject&) { visit(name); });
}

std::size_t ObjectCaches::workloadsOfPolicy(const std::string& policy) const {
  const auto it = workloadsOfPolicy_.find(policy);
  return it == workloadsOfPolicy_.end() ? 0 : it->second;
}

void ObjectCaches::indexWorkload(const std::string& key, const CachedWorkload* previous,
                                 const CachedWorkload* current) {
  const std::string ns = namespaceOf(key);
  if (previous) {
    byTarget_.remove(ns + "/" + previous->targetName, key);
    if (--workloadsOfPolicy_[previous->policyName] == 0) {
      workloadsOfPolicy_.erase(previous->policyName);
    }
  }
  if (current) {
    byTarget_.add(ns + "/" + current->targetName, key);
    ++workloadsOfPolicy_[current->policyName];
  }
}

void ObjectCaches::indexDeployment(const std::string& key, const CachedDeployment* previous,
                                   const CachedDeployment* current) {
  const std::string ns = namespaceOf(key);
  if (previous && !previous->owner.empty()) {
    ownedBy_.remove(ns + "/" + previous->owner, key);
  }
  if (current && !current->owner.empty()) {
    ownedBy_.add(ns + "/" + current->owner, key);
  }
}

}  // namespace gpuplacement::app
