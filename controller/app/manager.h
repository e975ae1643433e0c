#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "app/api_writes.h"
#include "app/caches.h"
#include "app/controller_metrics.h"
#include "app/event_recorder.h"
#include "app/karpenter_prices.h"
#include "app/kueue_admission.h"
#include "app/logging.h"
#include "app/memory.h"
#include "app/metrics.h"
#include "app/pod_release_reconciler.h"
#include "app/policy_engines.h"
#include "app/policy_reconciler.h"
#include "app/workload_reconciler.h"
#include "kube/client.h"
#include "kube/list_watch_client.h"
#include "runtime/controller_set.h"
#include "runtime/signal.h"

namespace gpuplacement::app {

struct ManagerOptions {
  std::vector<std::string> namespaces;  // empty: all
  int workers = 4;                      // GpuWorkload reconciles at once
  bool finalizer = false;               // hold placed GpuWorkloads (--finalizer)
  bool perWorkloadMetrics = true;       // --per-workload-metrics
  std::chrono::seconds resync{std::chrono::hours(1)};
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
  std::string region;                      // --region: the cluster's, where its nodes do not say
  std::string instance;                    // this replica's name, for Events
  KarpenterPricesOptions karpenterPrices;  // where Karpenter's prices are read, if anywhere
  EventBudget events;
  StatusBudget statuses;
};

// Wires the operator together, as controller-runtime's manager does: the
// caches and their informers, one reconciler per kind, their metrics,
// readiness and health, leadership, and the periodic resync. Everything
// runs on one event loop.
class Manager {
 public:
  Manager(asio::any_io_executor executor, kube::KubeClient& client,
          std::shared_ptr<const core::Catalog> catalog, std::shared_ptr<const core::RuleSet> rules,
          ManagerOptions options, Logger& logger, MetricsRegistry& metrics,
          const runtime::Clock& clock);

  // Fills the caches, waits for leadership when required, then reconciles
  // until stop() and lets in-flight reconciles finish.
  asio::awaitable<void> run();
  void stop();
  // With leader election, the reconcilers wait for becomeLeader(); caches
  // fill and /readyz turns ready before that, so a standby is ready too.
  void requireLeadership() { leaderOnly_ = true; }
  void becomeLeader();

  bool synced() const { return caches_.synced(); }
  // The loops are turning: the event loop answers (the caller proves that)
  // and no informer is stuck failing.
  bool healthy() const { return caches_.healthy(); }
  // Writes the API server refuses this operator (403), for /readyz.
  std::string refusals() const { return writes_.refusals(); }

 private:
  // Asks the API server, until it answers, whether Karpenter's NodePools,
  // NodeOverlays and EC2NodeClasses and DRA's ResourceSlices are served
  // (discovery, once at start: one installed later is seen after a
  // restart); then watches them too. Never holds up the start.
  asio::awaitable<void> discoverOptionalApis();
  // What the API server lets change on a suspended Job, from its version.
  asio::awaitable<void> discoverServer();
  asio::awaitable<void> resyncLoop();
  // Every 10 s, gives the heap's free pages back once a burst of work has
  // freed a few MiB more than the last trim left: resident memory follows
  // what is cached.
  asio::awaitable<void> trimLoop();
  asio::awaitable<void> runReconcilers();
  // Karpenter's prices changed, or how they read: the engines and cluster
  // views take them, and every workload is weighed again.
  void pricesChanged(KarpenterPrices::Change change);
  // The NodeOverlays changed: once the burst of events is over, the prices
  // are weighed again if what they set moved.
  void nodeOverlaysChanged();
  // The engines take the catalog priced as Karpenter weighs it now: its
  // prices where they are read, with the NodeOverlays cached.
  void reprice();
  void registerGauges(MetricsRegistry& metrics);

  asio::any_io_executor executor_;
  ManagerOptions options_;
  Logger& log_;
  kube::KubeClient& client_;
  kube::KubeListWatchClient listWatch_;
  ObjectCaches caches_;
  PolicyEngines engines_;
  std::shared_ptr<const core::Catalog> catalog_;  // as loaded: what every repricing starts from
  std::unique_ptr<KarpenterPrices> prices_;       // null unless options_.karpenterPrices.enabled()
  std::vector<core::NodeOverlay> overlays_;       // those in force
  bool overlaysPending_ = false;                  // a re-read is posted
  ApiWrites writes_;
  EventRecorder events_;
  ControllerMetrics controllerMetrics_;
  runtime::ControllerSet controllers_;  // the reconcilers' controllers, run together
  WorkloadReconciler workloads_;
  PolicyReconciler policies_;
  PodReleaseReconciler pods_;
  KueueHandOffs kueueHandOffs_;
  KueueAdmissionReconciler kueue_;
  HeapUsage heap_;  // as the trim loop last read it
  bool stopped_ = false;
  bool leaderOnly_ = false;
  bool leader_ = false;
  runtime::Signal leadershipOrStop_;
  runtime::Signal stopping_;
};

}  // namespace gpuplacement::app
