#pragma once

#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/cached_objects.h"
#include "app/cluster_room.h"
#include "app/dra_room.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/target_key.h"
#include "core/catalog/catalog.h"
#include "core/catalog/rules.h"
#include "core/cluster/capacity.h"
#include "core/cluster/cluster.h"
#include "core/cluster/dra.h"
#include "core/cluster/node_overlays.h"
#include "core/kinds/autoscaler.h"
#include "core/plan/workload_plan.h"
#include "runtime/cache_set.h"
#include "runtime/event_source.h"
#include "runtime/list_watch.h"

namespace gpuplacement::app {

using PolicyCache = runtime::Cache<PolicyObject>;
using WorkloadCache = runtime::Cache<CachedWorkload>;
using TargetCache = runtime::Cache<CachedTarget>;
using PodCache = runtime::Cache<core::PodView>;
using NodeCache = runtime::Cache<core::NodeView>;
using AutoscalerCache = runtime::Cache<core::AutoscalerView>;

struct CacheOptions {
  std::vector<std::string> namespaces;  // empty: all
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
  std::string region;  // --region: core::ClusterState::regionFlag
};

// The operator's caches (runtime::Cache, one per watched resource, made
// and judged together by a runtime::CacheSet) and the project's indexes
// between them, shared read-only by the reconcilers: PlacementPolicies,
// GpuWorkloads and their targets (one cache per kind), Pods and
// HorizontalPodAutoscalers. Keys are "namespace/name" (policies: "name");
// an index over targets is keyed by TargetKey. A new query is an index
// here, read through its cache: caches.workloadsByTarget().of(target),
// then caches.workloads().get(key).
//
// Beside them, the cluster view: Nodes, Pods (only the devices they hold
// and why they wait) and, when Karpenter is installed, NodePools, with the
// room the pods hold (ClusterRoom). These are optional: when the operator
// may not list them it places without them, and says so, rather than not
// at all.
class ObjectCaches {
 public:
  // A target of any kind changed: (target, old, new) as a cache tells it.
  using TargetChanges =
      runtime::EventSource<const TargetKey&, const CachedTarget*, const CachedTarget*>;

  ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
               const core::Catalog& catalog, const core::RuleSet& rules, CacheOptions options,
               Logger& log, const runtime::Clock& clock);

  // The typed caches; the mutable ones are what a controller watches
  // (ControllerBuilder's forKind and watches).
  PolicyCache& policies() { return *policies_; }
  const PolicyCache& policies() const { return *policies_; }
  WorkloadCache& workloads() { return *workloads_; }
  const WorkloadCache& workloads() const { return *workloads_; }
  const TargetCache& targets(core::TargetKind kind) const {
    return *targets_[static_cast<std::size_t>(kind)];
  }
  PodCache& pods() { return *pods_; }
  const PodCache& pods() const { return *pods_; }
  const NodeCache& nodes() const { return *nodes_; }
  const AutoscalerCache& autoscalers() const { return *autoscalers_; }

  // The project's indexes: each gives the keys of the objects filed under
  // a key, read through their cache.
  // Target -> the GpuWorkloads whose spec targets it.
  const WorkloadCache::Index<TargetKey>& workloadsByTarget() const { return *workloadsByTarget_; }
  // PlacementPolicy -> how many GpuWorkloads name it (a tally: the
  // policies' statuses only say how many).
  const WorkloadCache::Tally<std::string>& workloadsByPolicy() const { return *workloadsByPolicy_; }
  // GpuWorkload ("ns/name") -> the targets of the kind whose ownership
  // record names it.
  const TargetCache::Index<std::string>& targetsByOwner(core::TargetKind kind) const {
    return *targetsByOwner_[static_cast<std::size_t>(kind)];
  }
  // Target -> its pods the scheduler cannot place.
  const PodCache::Index<TargetKey>& pendingPodsByTarget() const { return *pendingPodsByTarget_; }
  // Target -> its pods bound to a node, holding devices there.
  const PodCache::Index<TargetKey>& boundPodsByTarget() const { return *boundPodsByTarget_; }
  // Target -> the HorizontalPodAutoscalers that scale it.
  const AutoscalerCache::Index<TargetKey>& autoscalersByTarget() const {
    return *autoscalersByTarget_;
  }

  TargetChanges& targetChanges() { return targetChanges_; }
  // The target whose pods the scheduler cannot place changed.
  runtime::EventSource<const TargetKey&>& pendingPodsChanged() { return pendingPodsChanged_; }
  // What a NodePool may launch changed: one added or deleted, its
  // requirements, taints, template labels or limits edited (not its status,
  // which Karpenter rewrites with every node it launches).
  runtime::EventSource<>& nodePoolsChanged() { return nodePoolsChanged_; }
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
  // A ResourceSlice was added, edited or deleted: the devices a node offers
  // through DRA changed.
  runtime::EventSource<>& deviceSlicesChanged() { return deviceSlicesChanged_; }
  // A node whose GPUs are shared (MIG slices, time-sliced replicas) got its
  // first pod holding devices, or lost its last: its idle shares now cost
  // the cluster nothing more, or the whole node again.
  runtime::EventSource<>& sharesKeptChanged() { return sharesKeptChanged_; }
  // A NodeOverlay was added, edited or deleted, or Karpenter's verdict on
  // one moved.
  runtime::EventSource<>& nodeOverlaysChanged() { return nodeOverlaysChanged_; }
  // NodeOverlays are served and listed.
  bool nodeOverlaysKnown() const { return nodeOverlays_ && nodeOverlays_->synced(); }
  // The NodeOverlays as cached (none before enableNodeOverlays()).
  std::vector<core::NodeOverlay> nodeOverlays() const;
  asio::awaitable<void> run();  // starts the informers; they run until stop()
  asio::awaitable<void> waitForSync() { return caches_.waitForSync(); }
  void stop() { caches_.stop(); }
  bool synced() const { return caches_.synced(); }
  bool healthy() const { return caches_.healthy(); }
  void registerMetrics(MetricsRegistry& metrics);

  // The cluster view as it is now. Its pointers are into the caches: use
  // it before the next co_await.
  core::ClusterState clusterState() const;
  // What is computed from clusterState() is good while this stays equal.
  // `generation` moves on every change of a Node or a NodePool that the
  // view reads, `room` on every change of what the pods bound to a node
  // hold of it.
  struct ClusterStamp {
    std::uint64_t generation = 0;
    std::uint64_t room = 0;
    bool nodesKnown = false;
    bool nodePoolsInstalled = false;
    bool operator==(const ClusterStamp&) const = default;
    // Since `before`, only the room on some nodes moved: a view computed
    // then is brought up to date by recounting those nodes.
    bool onlyRoomMovedSince(const ClusterStamp& before) const {
      return generation == before.generation && nodesKnown == before.nodesKnown &&
             nodePoolsInstalled == before.nodePoolsInstalled;
    }
  };
  ClusterStamp clusterStamp() const;
  // The nodes whose room moved after stamp.room == `room`, each once;
  // nullopt when more moved than the caches remember (kRoomMovesKept).
  std::optional<std::vector<std::string>> nodesWithRoomMovedSince(std::uint64_t room) const {
    return room_.nodesMovedSince(room);
  }
  // One node as clusterState() gives it; nullopt when it is not cached.
  // Its pointer is into the caches: use it before the next co_await.
  std::optional<core::ClusterState::Node> clusterNode(const std::string& name) const;
  static constexpr std::size_t kRoomMovesKept = ClusterRoom::kMovesKept;

 private:
  using NodePoolCache = runtime::Cache<core::NodePoolView>;
  using NodeOverlayCache = runtime::Cache<core::NodeOverlay>;

  void addTargets(core::TargetKind kind);
  void addClusterView();
  void addAutoscalers();
  core::ClusterState::Node clusterNodeOf(const std::string& name, const core::NodeView& node) const;

  runtime::CacheSet caches_;
  std::string regionFlag_;  // CacheOptions::region
  PolicyCache* policies_ = nullptr;
  WorkloadCache* workloads_ = nullptr;
  std::array<TargetCache*, core::kTargetKinds.size()> targets_{};  // in kTargetKinds' order
  NodeCache* nodes_ = nullptr;
  PodCache* pods_ = nullptr;
  NodePoolCache* nodePools_ = nullptr;                            // only when the CRD is served
  NodeOverlayCache* nodeOverlays_ = nullptr;                      // only when the CRD is served
  runtime::Cache<core::ReservationEnds>* nodeClasses_ = nullptr;  // only when served
  // Reservation id -> when it ends, from every EC2NodeClass's status.
  std::unordered_map<std::string, core::Timestamp> reservationEnds_;
  runtime::Cache<core::ResourceSliceView>* slices_ = nullptr;  // only when served
  runtime::Cache<core::ClaimAllocation>* claims_ = nullptr;    // only when served
  // The devices DRA drivers publish for each node, and those claims hold.
  DraRoom draRoom_;
  void draMoved(const DraRoom::Moves& moves);
  AutoscalerCache* autoscalers_ = nullptr;
  // The project's indexes.
  const WorkloadCache::Index<TargetKey>* workloadsByTarget_ = nullptr;
  const WorkloadCache::Tally<std::string>* workloadsByPolicy_ = nullptr;
  std::array<const TargetCache::Index<std::string>*, core::kTargetKinds.size()> targetsByOwner_{};
  const PodCache::Index<TargetKey>* pendingPodsByTarget_ = nullptr;
  const PodCache::Index<TargetKey>* boundPodsByTarget_ = nullptr;
  const AutoscalerCache::Index<TargetKey>* autoscalersByTarget_ = nullptr;
  TargetChanges targetChanges_;
  runtime::EventSource<const TargetKey&> pendingPodsChanged_;
  runtime::EventSource<const TargetKey&> autoscalersChanged_;
  runtime::EventSource<> nodePoolsChanged_;
  runtime::EventSource<> nodeOverlaysChanged_;
  runtime::EventSource<> deviceSlicesChanged_;
  runtime::EventSource<> sharesKeptChanged_;
  bool offersShares(const std::string& node) const;
  static bool holdsDevices(const core::Devices& devices);
  ClusterRoom room_;
  std::uint64_t clusterGeneration_ = 0;  // Nodes and NodePools the view reads
};

// "ns/name" -> "ns".
inline std::string namespaceOf(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash);
}

}  // namespace gpuplacement::app
