#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/cached_objects.h"
#include "app/key_index.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/target_key.h"
#include "core/capacity.h"
#include "core/catalog.h"
#include "core/cluster.h"
#include "core/rules.h"
#include "core/workload_plan.h"
#include "runtime/informer.h"
#include "runtime/list_watch.h"

namespace gpuplacement::app {

struct CacheOptions {
  std::vector<std::string> namespaces;  // empty: all
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
};

// The informers' caches of PlacementPolicies, GpuWorkloads and their
// targets (Deployments, StatefulSets, Jobs), and the indexes between them,
// shared read-only by the reconcilers. Keys are "namespace/name" (policies:
// "name"), a target's a TargetKey. One informer per watched
// namespace and kind, or one per kind for all.
//
// Beside them, the cluster view: Nodes, Pods (only the devices they hold
// and why they wait) and, when Karpenter is installed, NodePools. These are
// optional: when the operator may not list them it places without them,
// and says so, rather than not at all.
class ObjectCaches {
 public:
  template <typename T>
  using Handler = std::function<void(const std::string& key, const T* previous, const T* current)>;
  using TargetHandler = std::function<void(const TargetKey& target, const CachedTarget* previous,
                                           const CachedTarget* current)>;

  ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
               const core::Catalog& catalog, const core::RuleSet& rules, CacheOptions options,
               Logger& log, const runtime::Clock& clock);
  ~ObjectCaches();

  // Handlers run after the indexes are updated; they must not suspend.
  void onWorkload(Handler<CachedWorkload> handler);
  void onTarget(TargetHandler handler);
  void onPolicy(Handler<PolicyObject> handler);
  // The target whose pods the scheduler cannot place changed.
  void onPendingPods(std::function<void(const TargetKey& target)> handler);
  // A pod ("ns/name") waits behind the operator's scheduling gate.
  void onGatedPod(std::function<void(const std::string& pod)> handler);
  // What a NodePool may launch changed: one added or deleted, its
  // requirements, taints, template labels or limits edited (not its status,
  // which Karpenter rewrites with every node it launches).
  void onNodePoolsChanged(std::function<void()> handler);

  // Karpenter's NodePool CRD is served: watch NodePools too. Before or
  // after run(); once.
  void enableNodePools();
  asio::awaitable<void> run();  // until stop()
  // Every required cache is full, and each optional one is full or known
  // to be refused (403) or absent (404).
  asio::awaitable<void> waitForSync();
  void stop();
  bool synced() const;
  // No informer is stuck failing (an optional one refused for good is not
  // stuck: placement goes on without it).
  bool healthy() const;
  void registerMetrics(MetricsRegistry& metrics);

  const CachedWorkload* workload(const std::string& key) const;
  std::string workloadResourceVersion(const std::string& key) const;
  const CachedTarget* target(const TargetKey& target) const;
  std::string targetResourceVersion(const TargetKey& target) const;
  const PolicyObject* policy(const std::string& name) const;
  std::size_t policyCount() const;
  void forEachWorkload(
      const std::function<void(const std::string&, const CachedWorkload&)>& visit) const;
  void forEachPolicy(const std::function<void(const std::string&)>& visit) const;

  // The GpuWorkloads ("ns/name") whose spec targets this target.
  std::vector<std::string> workloadsTargeting(const TargetKey& target) const {
    return byTarget_.of(target);
  }
  // Why targets of this kind cannot be read (their informer refused or not
  // synced); empty when they can.
  std::string targetsUnreadable(core::TargetKind kind) const;
  // The targets (same namespace) whose ownership record names a GpuWorkload.
  std::vector<core::TargetRef> targetsOwnedBy(const std::string& workloadKey) const;
  std::size_t workloadsOfPolicy(const std::string& policy) const;

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
  std::optional<std::vector<std::string>> nodesWithRoomMovedSince(std::uint64_t room) const;
  // One node as clusterState() gives it; nullopt when it is not cached.
  // Its pointer is into the caches: use it before the next co_await.
  std::optional<core::ClusterState::Node> clusterNode(const std::string& name) const;
  static constexpr std::size_t kRoomMovesKept = 4096;
  // The target's pods the scheduler cannot place.
  core::PendingPods pendingPodsOf(const TargetKey& target) const;
  // The target's pods bound to nodes, with the node's type and what they
  // request there.
  std::vector<core::OwnPod> boundPodsOf(const TargetKey& target) const;
  // The pod, while it waits behind the operator's gate; null otherwise.
  const core::GatedPod* gatedPod(const std::string& key) const;
  // Pods can be read (listed and watched): placing at the pods is possible.
  bool podsKnown() const;

 private:
  using WorkloadInformer = runtime::Informer<CachedWorkload>;
  using TargetInformer = runtime::Informer<CachedTarget>;
  using PolicyInformer = runtime::Informer<PolicyObject>;
  using NodeInformer = runtime::Informer<core::NodeView>;
  using PodInformer = runtime::Informer<core::PodView>;
  using NodePoolInformer = runtime::Informer<core::NodePoolView>;

  void indexWorkload(const std::string& key, const CachedWorkload* previous,
                     const CachedWorkload* current);
  void indexTarget(const TargetKey& target, const CachedTarget* previous,
                   const CachedTarget* current);
  void countPod(const core::PodView* previous, const core::PodView* current);
  void indexBound(const std::string& pod, const core::PodView* previous,
                  const core::PodView* current);
  void indexPending(const std::string& pod, const core::PodView* previous,
                    const core::PodView* current);
  template <typename F>
  void forEachInformer(F&& visit) const;
  template <typename F>
  void forEachOptional(F&& visit) const;

  asio::any_io_executor executor_;
  std::unique_ptr<PolicyInformer> policies_;
  std::vector<std::unique_ptr<WorkloadInformer>> workloads_;
  // Per kind, in kTargetKinds' order: one informer per watched namespace.
  std::array<std::vector<std::unique_ptr<TargetInformer>>, core::kTargetKinds.size()> targets_;
  std::unique_ptr<NodeInformer> nodes_;
  std::unique_ptr<PodInformer> pods_;
  std::unique_ptr<NodePoolInformer> nodePools_;  // only when the CRD is served
  // What the pods bound to a node hold of it.
  std::unordered_map<std::string, core::NodeUse> usedOnNode_;
  KeyIndex<TargetKey, std::string> pendingOf_;  // its pods the scheduler cannot place
  KeyIndex<TargetKey, std::string> boundOf_;    // its pods bound to a node
  std::vector<std::function<void(const TargetKey&)>> pendingHandlers_;
  std::vector<std::function<void(const std::string&)>> gatedHandlers_;
  std::vector<std::function<void()>> nodePoolHandlers_;
  void roomMoved(const std::string& node);
  core::ClusterState::Node clusterNodeOf(const std::string& name, const core::NodeView& node) const;
  std::uint64_t clusterGeneration_ = 0;
  std::uint64_t roomGeneration_ = 0;
  // The last kRoomMovesKept moves of room: (room generation, node).
  std::deque<std::pair<std::uint64_t, std::string>> roomMoves_;
  runtime::InformerOptions base_;
  runtime::ListWatchClient& client_;
  const runtime::Clock& clock_;
  std::function<void(const std::string&)> logInformer_;
  bool running_ = false;  // run() has started the informers; stop() not yet called
  KeyIndex<TargetKey, std::string> byTarget_;  // the GpuWorkloads that target it
  KeyIndex<std::string, TargetKey> ownedBy_;   // GpuWorkload -> targets whose record names it
  std::unordered_map<std::string, std::size_t> workloadsOfPolicy_;
  std::vector<Handler<CachedWorkload>> workloadHandlers_;
  std::vector<TargetHandler> targetHandlers_;
};

// "ns/name" -> "ns".
inline std::string namespaceOf(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash);
}

}  // namespace gpuplacement::app
