#include "app/caches.h"

#include "app/resource_paths.h"

namespace gpuplacement::app {
namespace {

// The target a GpuWorkload's spec names.
std::optional<TargetKey> specTarget(const std::string& key, const CachedWorkload& workload) {
  return TargetKey{workload.targetKind, {namespaceOf(key), workload.targetName}};
}

std::optional<std::string> policyName(const std::string&, const CachedWorkload& workload) {
  return workload.policyName;
}

// The GpuWorkload a target's ownership record names, "ns/name".
std::optional<std::string> recordedOwner(const std::string& target, const CachedTarget& cached) {
  if (cached.owner.empty()) {
    return std::nullopt;
  }
  return runtime::ObjectKey{namespaceOf(target), cached.owner}.str();
}

// The pod's owner, while the pod cannot be scheduled.
std::optional<TargetKey> pendingTarget(const std::string& pod, const core::PodView& view) {
  if (view.unschedulable.empty() || view.owner.empty()) {
    return std::nullopt;
  }
  return TargetKey{view.ownerKind, {namespaceOf(pod), view.owner}};
}

// The pod's owner, while the pod holds room on a node.
std::optional<TargetKey> boundTarget(const std::string& pod, const core::PodView& view) {
  if (!view.holdsDevices() || view.owner.empty()) {
    return std::nullopt;
  }
  return TargetKey{view.ownerKind, {namespaceOf(pod), view.owner}};
}

}  // namespace

ObjectCaches::ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
                           const core::Catalog& catalog, const core::RuleSet& rules,
                           CacheOptions options, Logger& log, const runtime::Clock& clock)
    : caches_(std::move(executor), client,
              {options.namespaces, options.watchTimeout, options.pageSize}, clock,
              [&log](const std::string& message) { log.warn(message); }),
      regionFlag_(std::move(options.region)) {
  policies_ = &caches_.add<PolicyObject>(
      {"placementpolicies", [](const std::string&) { return policiesPath(); }, false},
      [&catalog, &rules](const nlohmann::json& object) {
        return projectPolicy(object, catalog, rules);
      });
  workloads_ = &caches_.add<CachedWorkload>(
      {"gpuworkloads", workloadsPath},
      [&catalog](const nlohmann::json& object) { return packWorkload(object, catalog); });
  workloadsByTarget_ = &workloads_->index<TargetKey>(specTarget);
  workloadsByPolicy_ = &workloads_->tally<std::string>(policyName);
  for (const auto kind : core::kTargetKinds) {
    addTargets(kind);
  }
  addClusterView();
  addAutoscalers();
}

void ObjectCaches::addTargets(core::TargetKind kind) {
  // The operator cannot work without Deployments; the other kinds it places
  // without, and says so (a ClusterRole from before them refuses them, a
  // cluster without a custom kind's CRD does not serve it).
  auto& targets =
      caches_.add<CachedTarget>({std::string(core::resourceOf(kind)),
                                 [kind](const std::string& ns) { return targetsPath(kind, ns); },
                                 true, kind == core::TargetKind::Deployment},
                                [kind](const nlohmann::json& object) {
                                  return packTarget(core::targetFromJson(kind, object));
                                });
  targetsByOwner_[static_cast<std::size_t>(kind)] = &targets.index<std::string>(recordedOwner);
  targets.addHandler([this, kind](const std::string& key, const CachedTarget* previous,
                                  const CachedTarget* current) {
    targetChanges_.notify({kind, runtime::ObjectKey::parse(key)}, previous, current);
  });
  targets_[static_cast<std::size_t>(kind)] = &targets;
}

void ObjectCaches::addClusterView() {
  nodes_ = &caches_.add<core::NodeView>(
      {"nodes", [](const std::string&) { return nodesPath(); }, false, false}, core::nodeFromJson);
  nodes_->addHandler(
      [this](const std::string&, const core::NodeView* previous, const core::NodeView* current) {
        // What its pods hold stays until they go (the pod garbage collector
        // deletes them after the node): their deletions subtract it.
        if (previous && current && *previous == *current) {
          return;  // a heartbeat or a field no decision reads
        }
        ++clusterGeneration_;
      });
  pods_ = &caches_.add<core::PodView>(
      {"pods", [](const std::string&) { return unfinishedPodsPath(); }, false, false},
      core::podFromJson);
  pendingPodsByTarget_ = &pods_->index<TargetKey>(pendingTarget);
  boundPodsByTarget_ = &pods_->index<TargetKey>(boundTarget);
  pods_->addHandler(
      [this](const std::string& key, const core::PodView* previous, const core::PodView* current) {
        const auto sharesKept = [this](const std::string& node) {
          return !node.empty() && offersShares(node) && holdsDevices(room_.usedOn(node).devices);
        };
        const std::string node = current && !current->node.empty() ? current->node
                                 : previous                        ? previous->node
                                                                   : "";
        const bool keptBefore = sharesKept(node);
        room_.podChanged(previous, current);
        if (keptBefore != sharesKept(node)) {
          sharesKeptChanged_.notify();  // its idle shares now cost nothing more, or the node
        }
        const auto before = previous ? pendingTarget(key, *previous) : std::nullopt;
        const auto after = current ? pendingTarget(key, *current) : std::nullopt;
        if (before == after && (!before || previous->unschedulable == current->unschedulable)) {
          return;
        }
        for (const auto& target : {before, after}) {
          if (target) {
            pendingPodsChanged_.notify(*target);
          }
        }
      });
}

bool ObjectCaches::offersShares(const std::string& name) const {
  const core::NodeView* node = nodes_->get(name);
  if (node && (!node->allocatable.mig.empty() || node->allocatable.sharedGpus > 0)) {
    return true;
  }
  const auto* dra = draRoom_.on(name);
  return dra && !dra->offered.mig.empty();
}

bool ObjectCaches::holdsDevices(const core::Devices& devices) {
  return devices.gpus > 0 || devices.neuronDevices > 0 || devices.sharedGpus > 0 ||
         !devices.mig.empty();
}

void ObjectCaches::enableNodePools() {
  nodePools_ = &caches_.add<core::NodePoolView>(
      {"nodepools", [](const std::string&) { return nodePoolsPath(); }, false, false},
      core::nodePoolFromJson);
  nodePools_->addHandler([this](const std::string&, const core::NodePoolView* previous,
                                const core::NodePoolView* current) {
    if (previous && current && *previous == *current) {
      return;  // its status: nothing the cluster view reads
    }
    ++clusterGeneration_;
    nodePoolsChanged_.notify();
  });
}

void ObjectCaches::enableNodeOverlays() {
  nodeOverlays_ = &caches_.add<core::NodeOverlay>(
      {"nodeoverlays", [](const std::string&) { return nodeOverlaysPath(); }, false, false},
      core::nodeOverlayFromJson);
  nodeOverlays_->addHandler([this](const std::string&, const core::NodeOverlay* previous,
                                   const core::NodeOverlay* current) {
    if (!previous || !current || !(*previous == *current)) {
      nodeOverlaysChanged_.notify();
    }
  });
}

void ObjectCaches::enableEC2NodeClasses() {
  nodeClasses_ = &caches_.add<core::ReservationEnds>(
      {"ec2nodeclasses", [](const std::string&) { return ec2NodeClassesPath(); }, false, false},
      core::reservationEndsFromJson);
  nodeClasses_->addHandler([this](const std::string&, const core::ReservationEnds* previous,
                                  const core::ReservationEnds* current) {
    if (previous && current && *previous == *current) {
      return;  // the rest of its status: nothing the cluster view reads
    }
    reservationEnds_.clear();
    nodeClasses_->forEach([&](const std::string&, const core::ReservationEnds& reservations) {
      for (const auto& [id, end] : reservations.ends) {
        reservationEnds_[id] = end;
      }
    });
    ++clusterGeneration_;
  });
}

std::vector<core::NodeOverlay> ObjectCaches::nodeOverlays() const {
  std::vector<core::NodeOverlay> overlays;
  if (nodeOverlays_) {
    nodeOverlays_->forEach(
        [&](const std::string&, const core::NodeOverlay& overlay) { overlays.push_back(overlay); });
  }
  return overlays;
}

asio::awaitable<void> ObjectCaches::run() {
  caches_.start();
  co_return;
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
    // Summed per resource over its informers (one per namespace with
    // --namespaces).
    caches_.forEach([&](const runtime::WatchedResource& cache) {
      const auto counts = cache.counts();
      const auto& resource = cache.spec().resource;
      lists.set({resource}, counts.lists);
      relists.set({resource}, counts.relists);
      events.set({resource}, counts.events);
      objects.set({resource}, counts.objects);
    });
  });
}

}  // namespace gpuplacement::app
