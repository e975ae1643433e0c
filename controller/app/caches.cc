#include "app/caches.h"

#include <map>
#include <string_view>
#include <unordered_set>

#include "app/resource_paths.h"
#include "runtime/signal.h"

namespace gpuplacement::app {
namespace {

// An informer that has failed this many times in a row is not making
// progress; a restart (what a failing liveness probe causes) is the cheap fix.
constexpr int kTooManyFailures = 20;
constexpr auto kOptionalSyncTimeout = std::chrono::minutes(2);

std::size_t indexOf(core::TargetKind kind) {
  return static_cast<std::size_t>(kind);
}

}  // namespace

ObjectCaches::ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
                           const core::Catalog& catalog, const core::RuleSet& rules,
                           CacheOptions options, Logger& log, const runtime::Clock& clock)
    : executor_(std::move(executor)), client_(client), clock_(clock) {
  logInformer_ = [&log](const std::string& message) { log.warn(message); };
  const auto& logInformer = logInformer_;
  auto& base = base_;
  base.pageSize = options.pageSize;
  base.minWatchTimeout = options.watchTimeout;

  auto policyOptions = base;
  policyOptions.resource = "placementpolicies";
  policyOptions.path = policiesPath();
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
    const std::string suffix = ns.empty() ? "" : " in " + ns;
    auto workloadOptions = base;
    workloadOptions.resource = "gpuworkloads" + suffix;
    workloadOptions.path = workloadsPath(ns);
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

    for (const auto kind : core::kTargetKinds) {
      auto targetOptions = base;
      const std::string resource(core::resourceOf(kind));
      targetOptions.resource = resource + suffix;
      targetOptions.path = targetsPath(kind, ns);
      auto& targets = targets_[indexOf(kind)].emplace_back(std::make_unique<TargetInformer>(
          executor_, client, targetOptions,
          [kind](const nlohmann::json& object) {
            return packTarget(core::targetFromJson(kind, object));
          },
          clock));
      targets->addHandler([this, kind](const std::string& key, const CachedTarget* previous,
                                       const CachedTarget* current) {
        const TargetKey target{kind, runtime::ObjectKey::parse(key)};
        indexTarget(target, previous, current);
        for (const auto& handler : targetHandlers_) {
          handler(target, previous, current);
        }
      });
      targets->setLogger(logInformer);
    }
  }

  auto nodeOptions = base;
  nodeOptions.resource = "nodes";
  nodeOptions.path = nodesPath();
  nodes_ =
      std::make_unique<NodeInformer>(executor_, client, nodeOptions, core::nodeFromJson, clock);
  nodes_->addHandler(
      [this](const std::string&, const core::NodeView* previous, const core::NodeView* current) {
        // What its pods hold stays until they go (the pod garbage collector
        // deletes them after the node): their deletions subtract it.
        if (previous && current && *previous == *current) {
          return;  // a heartbeat or a field no decision reads
        }
        ++clusterGeneration_;
      });
  nodes_->setLogger(logInformer);
  auto podOptions = base;
  podOptions.resource = "pods";
  podOptions.path = unfinishedPodsPath();
  pods_ = std::make_unique<PodInformer>(executor_, client, podOptions, core::podFromJson, clock);
  pods_->addHandler(
      [this](const std::string& key, const core::PodView* previous, const core::PodView* current) {
        countPod(previous, current);
        indexPending(key, previous, current);
        indexBound(key, previous, current);
        if (current && current->gated) {
          for (const auto& handler : gatedHandlers_) {
            handler(key);
          }
        }
      });
  pods_->setLogger(logInformer);
}

void ObjectCaches::enableNodePools() {
  auto options = base_;
  options.resource = "nodepools";
  options.path = nodePoolsPath();
  nodePools_ = std::make_unique<NodePoolInformer>(executor_, client_, options,
                                                  core::nodePoolFromJson, clock_);
  nodePools_->addHandler([this](const std::string&, const core::NodePoolView* previous,
                                const core::NodePoolView* current) {
    if (previous && current && *previous == *current) {
      return;  // its status: nothing the cluster view reads
    }
    ++clusterGeneration_;
    for (const auto& handler : nodePoolHandlers_) {
      handler();
    }
  });
  nodePools_->setLogger(logInformer_);
  if (running_) {
    asio::co_spawn(executor_, nodePools_->run(), asio::detached);
  }
}

namespace {

TargetKey ownerOf(const std::string& pod, const core::PodView& view) {
  return {view.ownerKind, {namespaceOf(pod), view.owner}};
}

// The pod's owner, while the pod cannot be scheduled.
std::optional<TargetKey> pendingTarget(const std::string& pod, const core::PodView* view) {
  if (!view || view->unschedulable.empty() || view->owner.empty()) {
    return std::nullopt;
  }
  return ownerOf(pod, *view);
}

// The pod's owner, while the pod holds room on a node.
std::optional<TargetKey> boundTarget(const std::string& pod, const core::PodView* view) {
  if (!view || !view->holdsDevices() || view->owner.empty()) {
    return std::nullopt;
  }
  return ownerOf(pod, *view);
}

}  // namespace

void ObjectCaches::indexBound(const std::string& pod, const core::PodView* previous,
                              const core::PodView* current) {
  const auto before = boundTarget(pod, previous);
  const auto after = boundTarget(pod, current);
  if (before == after) {
    return;
  }
  if (before) {
    boundOf_.remove(*before, pod);
  }
  if (after) {
    boundOf_.add(*after, pod);
  }
}

std::vector<core::OwnPod> ObjectCaches::boundPodsOf(const TargetKey& target) const {
  std::vector<core::OwnPod> bound;
  for (const auto& key : boundOf_.of(target)) {
    const auto* pod = pods_->store().get(key);
    const auto* node = pod ? nodes_->store().get(pod->node) : nullptr;
    if (node) {
      bound.push_back({pod->node, node->instanceType, node->capacityType,
                       pod->devices.gpus + pod->devices.neuronDevices, pod->milliCpu,
                       pod->memoryBytes});
    }
  }
  return bound;
}

void ObjectCaches::onPendingPods(std::function<void(const TargetKey&)> handler) {
  pendingHandlers_.push_back(std::move(handler));
}

void ObjectCaches::indexPending(const std::string& pod, const core::PodView* previous,
                                const core::PodView* current) {
  const auto before = pendingTarget(pod, previous);
  const auto after = pendingTarget(pod, current);
  if (before == after && (!before || previous->unschedulable == current->unschedulable)) {
    return;
  }
  if (before) {
    pendingOf_.remove(*before, pod);
  }
  if (after) {
    pendingOf_.add(*after, pod);
  }
  for (const auto& target : {before, after}) {
    if (target) {
      for (const auto& handler : pendingHandlers_) {
        handler(*target);
      }
    }
  }
}

void ObjectCaches::onGatedPod(std::function<void(const std::string&)> handler) {
  gatedHandlers_.push_back(std::move(handler));
}

void ObjectCaches::onNodePoolsChanged(std::function<void()> handler) {
  nodePoolHandlers_.push_back(std::move(handler));
}

const core::GatedPod* ObjectCaches::gatedPod(const std::string& key) const {
  const auto* pod = pods_->store().get(key);
  return pod ? pod->gated.get() : nullptr;
}

bool ObjectCaches::podsKnown() const {
  return pods_->synced();
}

core::PendingPods ObjectCaches::pendingPodsOf(const TargetKey& target) const {
  core::PendingPods pending;
  for (const auto& key : pendingOf_.of(target)) {
    const auto* pod = pods_->store().get(key);
    if (!pod) {
      continue;
    }
    ++pending.count;
    const auto since = base::parseRfc3339(pod->unschedulableSince);
    if (pending.message.empty() || (since && pending.since && *since < *pending.since)) {
      pending.message = pod->unschedulable;
      pending.since = since ? std::optional<base::Timestamp>(*since) : std::nullopt;
    }
  }
  return pending;
}

void ObjectCaches::countPod(const core::PodView* previous, const core::PodView* current) {
  const bool held = previous && previous->holdsDevices();
  const bool holds = current && current->holdsDevices();
  if (held && holds && previous->node == current->node && previous->devices == current->devices &&
      previous->milliCpu == current->milliCpu && previous->memoryBytes == current->memoryBytes) {
    return;  // nothing a decision reads has changed
  }
  if (held) {
    auto& used = usedOnNode_[previous->node];
    used.subtract(*previous);
    if (used == core::NodeUse{}) {
      usedOnNode_.erase(previous->node);
    }
    roomMoved(previous->node);
  }
  if (holds) {
    usedOnNode_[current->node].add(*current);
    if (!held || previous->node != current->node) {
      roomMoved(current->node);
    }
  }
}

void ObjectCaches::roomMoved(const std::string& node) {
  roomMoves_.emplace_back(++roomGeneration_, node);
  if (roomMoves_.size() > kRoomMovesKept) {
    roomMoves_.pop_front();
  }
}

std::optional<std::vector<std::string>> ObjectCaches::nodesWithRoomMovedSince(
    std::uint64_t room) const {
  std::vector<std::string> nodes;
  if (room >= roomGeneration_) {
    return nodes;
  }
  if (roomMoves_.empty() || roomMoves_.front().first > room + 1) {
    return std::nullopt;  // some of the moves since have been forgotten
  }
  std::unordered_set<std::string_view> seen;
  for (auto it = roomMoves_.rbegin(); it != roomMoves_.rend() && it->first > room; ++it) {
    if (seen.insert(it->second).second) {
      nodes.push_back(it->second);
    }
  }
  return nodes;
}

std::optional<core::ClusterState::Node> ObjectCaches::clusterNode(const std::string& name) const {
  const core::NodeView* node = nodes_->store().get(name);
  if (!node) {
    return std::nullopt;
  }
  return clusterNodeOf(name, *node);
}

core::ClusterState::Node ObjectCaches::clusterNodeOf(const std::string& name,
                                                     const core::NodeView& node) const {
  const auto found = usedOnNode_.find(name);
  const core::NodeUse used = found == usedOnNode_.end() ? core::NodeUse{} : found->second;
  return {name, &node, used.devices, used.milliCpu, used.memoryBytes, used.pods};
}

ObjectCaches::~ObjectCaches() = default;

void ObjectCaches::onWorkload(Handler<CachedWorkload> handler) {
  workloadHandlers_.push_back(std::move(handler));
}

void ObjectCaches::onTarget(TargetHandler handler) {
  targetHandlers_.push_back(std::move(handler));
}

void ObjectCaches::onPolicy(Handler<PolicyObject> handler) {
  policies_->addHandler(std::move(handler));
}

// The caches the operator cannot work without: its own resources and
// Deployments.
template <typename F>
void ObjectCaches::forEachInformer(F&& visit) const {
  visit(*policies_);
  for (const auto& informer : workloads_) {
    visit(*informer);
  }
  for (const auto& informer : targets_[indexOf(core::TargetKind::Deployment)]) {
    visit(*informer);
  }
}

// The caches it places without, and says so: the other target kinds (a
// ClusterRole from before them refuses them, and Deployments are placed
// all the same) and the cluster view.
template <typename F>
void ObjectCaches::forEachOptional(F&& visit) const {
  for (const auto kind : core::kTargetKinds) {
    if (kind != core::TargetKind::Deployment) {
      for (const auto& informer : targets_[indexOf(kind)]) {
        visit(*informer);
      }
    }
  }
  visit(*nodes_);
  visit(*pods_);
  if (nodePools_) {
    visit(*nodePools_);
  }
}

namespace {

// Refused (401, 403) or not served (404): retrying will not change that
// soon, and placement goes on without this cache.
template <typename I>
bool refused(const I& informer) {
  const auto failure = informer.state().lastFailure();
  return !informer.synced() && failure && (*failure == 401 || *failure == 403 || *failure == 404);
}

}  // namespace

asio::awaitable<void> ObjectCaches::run() {
  const auto start = [this](auto& informer) {
    asio::co_spawn(executor_, informer.run(), asio::detached);
  };
  forEachInformer(start);
  forEachOptional(start);
  running_ = true;
  co_return;
}

asio::awaitable<void> ObjectCaches::waitForSync() {
  co_await policies_->waitForSync();
  for (auto& informer : workloads_) {
    co_await informer->waitForSync();
  }
  for (auto& informer : targets_[indexOf(core::TargetKind::Deployment)]) {
    co_await informer->waitForSync();
  }
  // StatefulSets, Jobs and the cluster view: full, or known to be refused (checked as its first
  // attempts come back; start-up only), or, like controller-runtime's
  // cache-sync timeout, given up on after two minutes: placement then goes
  // on without it until it fills.
  runtime::Signal poll;
  const auto deadline = std::chrono::steady_clock::now() + kOptionalSyncTimeout;
  while (running_ && std::chrono::steady_clock::now() < deadline) {
    bool waiting = false;
    forEachOptional([&](const auto& informer) {
      waiting = waiting || (!informer.synced() && !refused(informer) &&
                            informer.state().consecutiveFailures() <= kTooManyFailures);
    });
    if (!waiting) {
      break;
    }
    co_await poll.waitFor(std::chrono::milliseconds(50));
  }
}

void ObjectCaches::stop() {
  running_ = false;
  const auto stop = [](auto& informer) { informer.stop(); };
  forEachInformer(stop);
  forEachOptional(stop);
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
  forEachOptional([&](const auto& informer) {
    healthy = healthy &&
              (informer.state().consecutiveFailures() <= kTooManyFailures || refused(informer));
  });
  return healthy;
}

ObjectCaches::ClusterStamp ObjectCaches::clusterStamp() const {
  return {clusterGeneration_, roomGeneration_, nodes_->synced() && pods_->synced(),
          nodePools_ && nodePools_->synced()};
}

core::ClusterState ObjectCaches::clusterState() const {
  core::ClusterState cluster;
  cluster.nodesKnown = nodes_->synced() && pods_->synced();
  if (!cluster.nodesKnown) {
    const auto problem = [](const auto& informer) -> std::string {
      const auto failure = informer.state().lastFailure();
      return "cannot list " + informer.options().resource +
             (failure ? " (HTTP " + std::to_string(*failure) + ")" : std::string(" yet"));
    };
    cluster.nodesProblem = !nodes_->synced() ? problem(*nodes_) : problem(*pods_);
    return cluster;
  }
  cluster.nodes.reserve(nodes_->store().size());
  nodes_->store().forEach([&](const std::string& name, const core::NodeView& node) {
    cluster.nodes.push_back(clusterNodeOf(name, node));
  });
  cluster.nodePoolsInstalled = nodePools_ && nodePools_->synced();
  if (cluster.nodePoolsInstalled) {
    nodePools_->store().forEach([&](const std::string& name, const core::NodePoolView& pool) {
      cluster.nodePools.emplace_back(name, &pool);
    });
  }
  return cluster;
}

void ObjectCaches::registerMetrics(MetricsRegistry& metrics) {
  auto& lists = metrics.counter(
      "gpu_placement_informer_lists_total",
      "Full lists per watched resource (1 at start, then one per 410 Gone)", {"resource"});
  auto& relists =
      metrics.counter("gpu_placement_informer_relists_total",
                      "Lists after the first: watches that expired (410 Gone)", {"resource"});
  auto& events = metrics.counter("gpu_placement_informer_events_total",
                                 "Watch events read per watched resource", {"resource"});
  auto& objects =
      metrics.gauge("gpu_placement_informer_objects", "Objects cached per resource", {"resource"});
  metrics.onCollect([this, &lists, &relists, &events, &objects] {
    // Summed per resource: with --namespaces, one informer per namespace.
    struct Sums {
      double lists = 0, relists = 0, events = 0, objects = 0;
    };
    std::map<std::string, Sums> sums;
    const auto record = [&](const auto& informer) {
      auto& sum = sums[informer.options().resource];
      sum.lists += informer.state().lists();
      sum.relists += std::max(0, informer.state().lists() - 1);
      sum.events += static_cast<double>(informer.events());
      sum.objects += static_cast<double>(informer.store().size());
    };
    forEachInformer(record);
    forEachOptional(record);
    for (const auto& [resource, sum] : sums) {
      lists.set({resource}, sum.lists);
      relists.set({resource}, sum.relists);
      events.set({resource}, sum.events);
      objects.set({resource}, sum.objects);
    }
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

const CachedTarget* ObjectCaches::target(const TargetKey& target) const {
  const std::string key = target.object.str();
  for (const auto& informer : targets_[indexOf(target.kind)]) {
    if (const auto* found = informer->store().get(key)) {
      return found;
    }
  }
  return nullptr;
}

std::string ObjectCaches::targetResourceVersion(const TargetKey& target) const {
  const std::string key = target.object.str();
  for (const auto& informer : targets_[indexOf(target.kind)]) {
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
    byTarget_.remove({previous->targetKind, {ns, previous->targetName}}, key);
    if (--workloadsOfPolicy_[previous->policyName] == 0) {
      workloadsOfPolicy_.erase(previous->policyName);
    }
  }
  if (current) {
    byTarget_.add({current->targetKind, {ns, current->targetName}}, key);
    ++workloadsOfPolicy_[current->policyName];
  }
}

void ObjectCaches::indexTarget(const TargetKey& target, const CachedTarget* previous,
                               const CachedTarget* current) {
  const std::string& ns = target.object.ns;
  if (previous && !previous->owner.empty()) {
    ownedBy_.remove(runtime::ObjectKey{ns, previous->owner}.str(), target);
  }
  if (current && !current->owner.empty()) {
    ownedBy_.add(runtime::ObjectKey{ns, current->owner}.str(), target);
  }
}

std::string ObjectCaches::targetsUnreadable(core::TargetKind kind) const {
  for (const auto& informer : targets_[indexOf(kind)]) {
    if (!informer->synced()) {
      const auto failure = informer->state().lastFailure();
      return "the operator cannot list " + informer->options().resource +
             (failure ? " (HTTP " + std::to_string(*failure) + ")" : std::string(" yet")) +
             (failure && *failure == 403
                  ? ": give its ClusterRole get, list, watch and patch on " +
                        std::string(core::resourceOf(kind)) + " (the chart's has them)"
                  : std::string());
    }
  }
  return "";
}

std::vector<core::TargetRef> ObjectCaches::targetsOwnedBy(const std::string& workloadKey) const {
  std::vector<core::TargetRef> targets;
  for (const auto& target : ownedBy_.of(workloadKey)) {
    targets.push_back({target.kind, target.object.name});
  }
  return targets;
}

}  // namespace gpuplacement::app
