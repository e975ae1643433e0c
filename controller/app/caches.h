#pragma once

#include <array>
#include <string>
#include <vector>

#include "app/cached_objects.h"
#include "app/cluster_view_caches.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/target_key.h"
#include "core/catalog/catalog.h"
#include "core/catalog/rules.h"
#include "core/cluster/kueue_flavors.h"
#include "core/kinds/autoscaler.h"
#include "core/kinds/kueue_workload.h"
#include "core/plan/admission_answer.h"
#include "runtime/cache_set.h"
#include "runtime/event_source.h"
#include "runtime/list_watch.h"

namespace gpuplacement::app {

struct CacheOptions {
  std::vector<std::string> namespaces;  // empty: all
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
  std::string region;  // --region: core::ClusterState::regionFlag
};

using PolicyCache = runtime::Cache<PolicyObject>;
using WorkloadCache = runtime::Cache<CachedWorkload>;
using TargetCache = runtime::Cache<CachedTarget>;
using AutoscalerCache = runtime::Cache<core::AutoscalerView>;
using KueueWorkloadCache = runtime::Cache<core::KueueWorkload>;
using FlavorCache = runtime::Cache<core::ResourceFlavorView>;
using AdmissionCheckCache = runtime::Cache<core::AdmissionCheckView>;

// The operator's caches (runtime::Cache, one per watched resource, made
// and judged together by a runtime::CacheSet), the project's indexes
// between them and the events the reconcilers watch, shared read-only by
// the reconcilers: PlacementPolicies, GpuWorkloads and their targets (one
// cache per kind), Pods (only the devices they hold and why they wait),
// HorizontalPodAutoscalers, and what the cluster view reads (Nodes and,
// when Karpenter or DRA is served, NodePools, NodeOverlays,
// EC2NodeClasses, ResourceSlices and ResourceClaims: ClusterViewCaches).
// Keys are "namespace/name" (cluster-scoped objects: "name"); an index
// over targets is keyed by TargetKey. A new query is an index here, read
// through its cache: caches.workloadsByTarget().of(target), then
// caches.workloads().get(key).
//
// All but PlacementPolicies, GpuWorkloads and Deployments are optional:
// when the operator may not list them it places without them, and says
// so, rather than not at all.
class ObjectCaches {
 public:
  // A target of any kind changed: (target, old, new) as a cache tells it.
  using TargetChanges =
      runtime::EventSource<const TargetKey&, const CachedTarget*, const CachedTarget*>;

  ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
               const core::Catalog& catalog, const core::RuleSet& rules, CacheOptions options,
               Logger& log, const runtime::Clock& clock);
  ObjectCaches(const ObjectCaches&) = delete;  // the caches' handlers point at it
  ObjectCaches& operator=(const ObjectCaches&) = delete;

  // The typed caches; the mutable ones are what a controller watches
  // (ControllerBuilder's forKind and watches).
  PolicyCache& policies() { return policies_; }
  const PolicyCache& policies() const { return policies_; }
  WorkloadCache& workloads() { return workloads_; }
  const WorkloadCache& workloads() const { return workloads_; }
  const TargetCache& targets(core::TargetKind kind) const {
    return *targets_[static_cast<std::size_t>(kind)];
  }
  PodCache& pods() { return pods_; }
  const PodCache& pods() const { return pods_; }
  const NodeCache& nodes() const { return nodes_; }
  const AutoscalerCache& autoscalers() const { return autoscalers_; }
  // Kueue's, where it is installed (optional: without its CRDs they stay
  // empty and the operator runs as without Kueue).
  KueueWorkloadCache& kueueWorkloads() { return kueueWorkloads_; }
  const KueueWorkloadCache& kueueWorkloads() const { return kueueWorkloads_; }
  FlavorCache& flavors() { return flavors_; }
  const FlavorCache& flavors() const { return flavors_; }
  AdmissionCheckCache& admissionChecks() { return admissionChecks_; }
  const AdmissionCheckCache& admissionChecks() const { return admissionChecks_; }

  // The project's indexes: each gives the keys of the objects filed under
  // a key, read through their cache.
  // Target -> the GpuWorkloads whose spec targets it.
  const WorkloadCache::Index<TargetKey>& workloadsByTarget() const { return workloadsByTarget_; }
  // PlacementPolicy -> how many GpuWorkloads name it (a tally: the
  // policies' statuses only say how many).
  const WorkloadCache::Tally<std::string>& workloadsByPolicy() const { return workloadsByPolicy_; }
  // GpuWorkload ("ns/name") -> the targets of the kind whose ownership
  // record names it.
  const TargetCache::Index<std::string>& targetsByOwner(core::TargetKind kind) const {
    return *targetsByOwner_[static_cast<std::size_t>(kind)];
  }
  // Target -> its pods the scheduler cannot place.
  const PodCache::Index<TargetKey>& pendingPodsByTarget() const { return pendingPodsByTarget_; }
  // Target -> its pods bound to a node, holding devices there.
  const PodCache::Index<TargetKey>& boundPodsByTarget() const { return boundPodsByTarget_; }
  // Target -> the Kueue Workloads it controls (its owner reference).
  const KueueWorkloadCache::Index<TargetKey>& kueueWorkloadsByTarget() const {
    return kueueWorkloadsByTarget_;
  }
  // Target -> the HorizontalPodAutoscalers that scale it.
  const AutoscalerCache::Index<TargetKey>& autoscalersByTarget() const {
    return autoscalersByTarget_;
  }

  // The cluster as the decisions read it, kept from these caches.
  ClusterViewCaches& clusterView() { return clusterView_; }
  const ClusterViewCaches& clusterView() const { return clusterView_; }

  TargetChanges& targetChanges() { return targetChanges_; }
  // The target whose pods the scheduler cannot place changed.
  runtime::EventSource<const TargetKey&>& pendingPodsChanged() { return pendingPodsChanged_; }
  // The HorizontalPodAutoscaler that scales a target changed, came or went.
  runtime::EventSource<const TargetKey&>& autoscalersChanged() { return autoscalersChanged_; }

  // Karpenter's NodePool CRD is served: watch NodePools too. Before or
  // after run(); once.
  void enableNodePools();
  // Karpenter's NodeOverlay CRD is served: watch NodeOverlays too. Before
  // or after run(); once.
  void enableNodeOverlays();
  // Karpenter's AWS provider's EC2NodeClass CRD is served: watch them for
  // when the capacity reservations they list end. Before or after run();
  // once.
  void enableEC2NodeClasses();
  // Dynamic Resource Allocation (resource.k8s.io/v1) is served: watch
  // ResourceSlices and ResourceClaims, whose devices the cluster view counts
  // beside the device plugins'. Before or after run(); once.
  void enableDynamicResources();

  asio::awaitable<void> run();  // starts the informers; they run until stop()
  asio::awaitable<void> waitForSync() { return caches_.waitForSync(); }
  void stop() { caches_.stop(); }
  bool synced() const { return caches_.synced(); }
  bool healthy() const { return caches_.healthy(); }
  void registerMetrics(MetricsRegistry& metrics);

 private:
  using TargetCaches = std::array<TargetCache*, core::kTargetKinds.size()>;  // kTargetKinds' order
  static TargetCaches addTargets(runtime::CacheSet& caches);

  runtime::CacheSet caches_;
  PolicyCache& policies_;
  WorkloadCache& workloads_;
  TargetCaches targets_;
  NodeCache& nodes_;
  PodCache& pods_;
  AutoscalerCache& autoscalers_;
  KueueWorkloadCache& kueueWorkloads_;
  FlavorCache& flavors_;
  AdmissionCheckCache& admissionChecks_;
  const WorkloadCache::Index<TargetKey>& workloadsByTarget_;
  const WorkloadCache::Tally<std::string>& workloadsByPolicy_;
  std::array<const TargetCache::Index<std::string>*, core::kTargetKinds.size()> targetsByOwner_{};
  const PodCache::Index<TargetKey>& pendingPodsByTarget_;
  const PodCache::Index<TargetKey>& boundPodsByTarget_;
  const AutoscalerCache::Index<TargetKey>& autoscalersByTarget_;
  const KueueWorkloadCache::Index<TargetKey>& kueueWorkloadsByTarget_;
  ClusterViewCaches clusterView_;
  TargetChanges targetChanges_;
  runtime::EventSource<const TargetKey&> pendingPodsChanged_;
  runtime::EventSource<const TargetKey&> autoscalersChanged_;
};

// "ns/name" -> "ns".
inline std::string namespaceOf(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash);
}

}  // namespace gpuplacement::app
