#include "app/caches.h"

#include "app/resource_paths.h"

namespace gpuplacement::app {
namespace {

// What the indexes file each object under.

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

// The target a HorizontalPodAutoscaler scales.
std::optional<TargetKey> scaledTarget(const std::string& key, const core::AutoscalerView& view) {
  if (!view.targetKind || view.targetName.empty()) {
    return std::nullopt;
  }
  return TargetKey{*view.targetKind, {namespaceOf(key), view.targetName}};
}

// The target a Kueue Workload stands for: its controlling owner (a
// batch/v1 Job, the one kind placed through Kueue's admission so far).
std::optional<TargetKey> kueueTarget(const std::string& key, const core::KueueWorkload& workload) {
  if (workload.ownerKind != "Job" || workload.ownerName.empty()) {
    return std::nullopt;
  }
  return TargetKey{core::TargetKind::Job, {namespaceOf(key), workload.ownerName}};
}

runtime::ResourceSpec clusterScoped(std::string resource, std::string (*path)()) {
  return {std::move(resource), [path](const std::string&) { return path(); }, false, false};
}

}  // namespace

ObjectCaches::ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
                           const core::Catalog& catalog, const core::RuleSet& rules,
                           CacheOptions options, Logger& log, const runtime::Clock& clock)
    : caches_(std::move(executor), client,
              {options.namespaces, options.watchTimeout, options.pageSize}, clock,
              [&log](const std::string& message) { log.warn(message); }),
      policies_(caches_.add<PolicyObject>(
          {"placementpolicies", [](const std::string&) { return policiesPath(); }, false},
          [&catalog, &rules](const nlohmann::json& object) {
            return projectPolicy(object, catalog, rules);
          })),
      workloads_(caches_.add<CachedWorkload>(
          {"gpuworkloads", workloadsPath},
          [&catalog](const nlohmann::json& object) { return packWorkload(object, catalog); })),
      targets_(addTargets(caches_)),
      nodes_(caches_.add<core::NodeView>(clusterScoped("nodes", nodesPath), core::nodeFromJson)),
      pods_(
          caches_.add<core::PodView>(clusterScoped("pods", unfinishedPodsPath), core::podFromJson)),
      // Optional: without RBAC on them, the status says what spec.replicas
      // carry.
      autoscalers_(caches_.add<core::AutoscalerView>(
          {"horizontalpodautoscalers", autoscalersPath, true, false}, core::autoscalerFromJson)),
      kueueWorkloads_(caches_.add<core::KueueWorkload>(
          {"workloads.kueue.x-k8s.io", kueueWorkloadsPath, true, false},
          core::kueueWorkloadFromJson)),
      flavors_(caches_.add<core::ResourceFlavorView>(
          {"resourceflavors", [](const std::string&) { return resourceFlavorsPath(); }, false,
           false},
          core::resourceFlavorFromJson)),
      admissionChecks_(caches_.add<core::AdmissionCheckView>(
          {"admissionchecks", [](const std::string&) { return admissionChecksPath(); }, false,
           false},
          core::admissionCheckFromJson)),
      workloadsByTarget_(workloads_.index<TargetKey>(specTarget)),
      workloadsByPolicy_(workloads_.tally<std::string>(policyName)),
      pendingPodsByTarget_(pods_.index<TargetKey>(pendingTarget)),
      boundPodsByTarget_(pods_.index<TargetKey>(boundTarget)),
      autoscalersByTarget_(autoscalers_.index<TargetKey>(scaledTarget)),
      kueueWorkloadsByTarget_(kueueWorkloads_.index<TargetKey>(kueueTarget)),
      clusterView_(nodes_, pods_, std::move(options.region)) {
  for (const auto kind : core::kTargetKinds) {
    auto& targets = *targets_[static_cast<std::size_t>(kind)];
    targetsByOwner_[static_cast<std::size_t>(kind)] = &targets.index<std::string>(recordedOwner);
    targets.addHandler([this, kind](const std::string& key, const CachedTarget* previous,
                                    const CachedTarget* current) {
      targetChanges_.notify({kind, runtime::ObjectKey::parse(key)}, previous, current);
    });
  }
  pods_.addHandler(
      [this](const std::string& key, const core::PodView* previous, const core::PodView* current) {
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
  autoscalers_.addHandler([this](const std::string& key, const core::AutoscalerView* previous,
                                 const core::AutoscalerView* current) {
    if (previous && current && *previous == *current) {
      return;  // its status: the replicas it wants now, which nothing here reads
    }
    const auto before = previous ? scaledTarget(key, *previous) : std::nullopt;
    const auto after = current ? scaledTarget(key, *current) : std::nullopt;
    if (before) {
      autoscalersChanged_.notify(*before);
    }
    if (after && after != before) {
      autoscalersChanged_.notify(*after);
    }
  });
}

ObjectCaches::TargetCaches ObjectCaches::addTargets(runtime::CacheSet& caches) {
  TargetCaches targets{};
  for (const auto kind : core::kTargetKinds) {
    // The operator cannot work without Deployments; the other kinds it
    // places without, and says so (a ClusterRole from before them refuses
    // them, a cluster without a custom kind's CRD does not serve it).
    targets[static_cast<std::size_t>(kind)] =
        &caches.add<CachedTarget>({std::string(core::resourceOf(kind)),
                                   [kind](const std::string& ns) { return targetsPath(kind, ns); },
                                   true, kind == core::TargetKind::Deployment},
                                  [kind](const nlohmann::json& object) {
                                    return packTarget(core::targetFromJson(kind, object));
                                  });
  }
  return targets;
}

void ObjectCaches::enableNodePools() {
  clusterView_.readNodePools(caches_.add<core::NodePoolView>(
      clusterScoped("nodepools", nodePoolsPath), core::nodePoolFromJson));
}

void ObjectCaches::enableNodeOverlays() {
  clusterView_.readNodeOverlays(caches_.add<core::NodeOverlay>(
      clusterScoped("nodeoverlays", nodeOverlaysPath), core::nodeOverlayFromJson));
}

void ObjectCaches::enableEC2NodeClasses() {
  clusterView_.readReservations(caches_.add<core::ReservationEnds>(
      clusterScoped("ec2nodeclasses", ec2NodeClassesPath), core::reservationEndsFromJson));
}

void ObjectCaches::enableDynamicResources() {
  auto& slices = caches_.add<core::ResourceSliceView>(
      clusterScoped("resourceslices", resourceSlicesPath), core::resourceSliceFromJson);
  auto& claims = caches_.add<core::ClaimAllocation>(
      clusterScoped("resourceclaims", resourceClaimsPath), core::claimAllocationFromJson);
  clusterView_.readDynamicResources(slices, claims);
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
