#include "app/manager.h"

#include <algorithm>

#include "app/memory.h"
#include "base/json_access.h"

namespace gpuplacement::app {
namespace {

// 2 microseconds (a recount of a few nodes) doubling to 1 second (a whole
// view of tens of thousands of nodes on a busy machine).
std::vector<double> viewBuckets() {
  std::vector<double> buckets;
  for (double bound = 2e-6; bound < 2; bound *= 2) {
    buckets.push_back(bound);
  }
  return buckets;
}

}  // namespace

Manager::Manager(asio::any_io_executor executor, kube::KubeClient& client,
                 std::shared_ptr<const core::Catalog> catalog,
                 std::shared_ptr<const core::RuleSet> rules, ManagerOptions options, Logger& logger,
                 MetricsRegistry& metrics, const runtime::Clock& clock)
    : executor_(executor),
      options_(std::move(options)),
      log_(logger),
      client_(client),
      listWatch_(client),
      caches_(executor, listWatch_, *catalog, *rules,
              CacheOptions{options_.namespaces, options_.watchTimeout, options_.pageSize,
                           options_.region},
              logger, clock),
      engines_(catalog, rules),
      catalog_(catalog),
      writes_(client, logger, clock, options_.instance),
      events_(writes_, logger, metrics, clock, options_.events),
      controllerMetrics_(metrics),
      controllers_(executor, clock,
                   [this](runtime::QueuedController<runtime::ObjectKey>& controller) {
                     controllerMetrics_.attach(controller);
                   }),
      workloads_(controllers_, caches_, engines_, writes_, events_,
                 WorkloadReconcilerOptions{options_.workers, options_.finalizer,
                                           options_.perWorkloadMetrics, options_.statuses},
                 logger, metrics, clock),
      policies_(controllers_, caches_, engines_, writes_, workloads_, logger, clock),
      pods_(controllers_, caches_, writes_, logger, metrics),
      kueue_(controllers_, caches_, kueueHandOffs_, writes_, logger, metrics, clock) {
  workloads_.handOffToKueue(kueueHandOffs_);
  if (options_.karpenterPrices.enabled()) {
    // The flags were checked at start-up: the URL parses.
    auto fetch = options_.karpenterPrices.service.empty()
                     ? fetchUrl(executor, options_.karpenterPrices.url).value()
                     : fetchThroughServiceProxy(client, options_.karpenterPrices.service);
    prices_ = std::make_unique<KarpenterPrices>(std::move(fetch), options_.karpenterPrices, logger,
                                                metrics, clock);
    engines_.setKarpenterPrices(prices_->condition());
  }
  caches_.clusterView().nodeOverlaysChanged().addHandler([this] { nodeOverlaysChanged(); });
  caches_.registerMetrics(metrics);
  registerGauges(metrics);
  // Its count is the computations; at scale, the whole ones are the cost
  // that grows with the nodes.
  auto& views = metrics.histogram(
      "gpu_placement_cluster_view_seconds",
      "Time to compute what a policy sees of the cluster (its nodes' room and what NodePools may "
      "launch): whole (a node or NodePool changed) or by recounting the nodes whose pods changed",
      {"work"}, viewBuckets());
  engines_.observeViews(clock, [&views](PolicyEngines::ViewWork work, double seconds) {
    views.observe({work == PolicyEngines::ViewWork::Whole ? "whole" : "recount"}, seconds);
  });
}

void Manager::registerGauges(MetricsRegistry& metrics) {
  auto& generation =
      metrics.gauge("gpu_placement_policy_generation",
                    "Generation of the PlacementPolicy in force (0: built-in)", {"policy"});
  auto& leader = metrics.gauge("leader_election_master_status",
                               "1 while this replica reconciles (the leader, or alone)", {"name"});
  auto& eventsWaiting =
      metrics.gauge("gpu_placement_events_waiting", "Events queued behind their write budget");
  auto& statusesWaiting = metrics.gauge(
      "gpu_placement_statuses_waiting",
      "GpuWorkload statuses decided and not yet stored (they trail the placements under a burst)");
  auto& statusRate = metrics.gauge(
      "gpu_placement_status_writes_allowed_per_second",
      "The rate GpuWorkload statuses may be written at now: it yields to the placement patches' "
      "latency");
  auto& statusBaseline = metrics.gauge(
      "gpu_placement_status_writes_baseline_seconds",
      "The placement patches' latency with room, measured with the statuses held back: above "
      "1.25 x it + 2 ms, the statuses' rate is cut");
  // What resident memory is made of, beside process_resident_memory_bytes.
  auto& heap = metrics.gauge(
      "gpu_placement_heap_bytes",
      "The allocator's heap: in_use, free (resident, not in use), mapped; read every 10 s",
      {"state"});
  metrics.onCollect([this, &generation, &leader, &eventsWaiting, &statusesWaiting, &statusRate,
                     &statusBaseline, &heap] {
    eventsWaiting.set({}, static_cast<double>(events_.waiting()));
    statusesWaiting.set({}, static_cast<double>(workloads_.statusesWaiting()));
    statusRate.set({}, workloads_.statusesPerSecond());
    statusBaseline.set({}, std::chrono::duration<double>(workloads_.statusBaseline()).count());
    // Read by the trim loop every 10 s: glibc's mallinfo2 walks the heap's
    // free lists, too dear for every scrape.
    const auto& usage = heap_;
    heap.set({"in_use"}, static_cast<double>(usage.inUse));
    heap.set({"free"}, static_cast<double>(usage.free));
    heap.set({"mapped"}, static_cast<double>(usage.mapped));
    generation.clear();
    for (const auto& [name, inForce] : engines_.generations()) {
      generation.set({name}, static_cast<double>(inForce));
    }
    leader.set({"gpu-placement-operator"}, !leaderOnly_ || leader_ ? 1 : 0);
  });
}

asio::awaitable<void> Manager::discoverOptionalApis() {
  // Each optional group version (Karpenter's, Dynamic Resource
  // Allocation's), and what of it the operator watches there.
  struct Served {
    const char* groupVersion;
    const char* resource;
    void (ObjectCaches::*enable)();
    const char* said;
  };
  static constexpr Served kServed[] = {
      {"/apis/karpenter.sh/v1", "nodepools", &ObjectCaches::enableNodePools,
       "Karpenter's NodePools are served: placing on what they may launch too"},
      {"/apis/karpenter.sh/v1alpha1", "nodeoverlays", &ObjectCaches::enableNodeOverlays,
       "Karpenter's NodeOverlays are served: pricing as Karpenter weighs its offerings"},
      {"/apis/karpenter.k8s.aws/v1", "ec2nodeclasses", &ObjectCaches::enableEC2NodeClasses,
       "Karpenter's EC2NodeClasses are served: reading when capacity reservations end"},
      {"/apis/resource.k8s.io/v1", "resourceslices", &ObjectCaches::enableDynamicResources,
       "Dynamic Resource Allocation is served: counting the devices DRA drivers publish"},
  };
  for (const auto& served : kServed) {
    std::chrono::seconds backoff{1};
    while (!stopped_) {
      auto resources = co_await client_.get(served.groupVersion);
      if (resources) {
        const auto& list = base::memberOf(*resources, "resources");
        const bool listed =
            list.is_array() && std::any_of(list.begin(), list.end(), [&](const auto& resource) {
              return base::stringMember(resource, "name") == served.resource;
            });
        if (listed && !stopped_) {
          (caches_.*served.enable)();
          log_.info(served.said);
        }
        break;
      }
      if (resources.error().notFound()) {
        break;  // not installed
      }
      log_.debug("asking whether Karpenter's resources are served",
                 {{"groupVersion", served.groupVersion}, {"error", resources.error().describe()}});
      co_await stopping_.waitFor(backoff);
      backoff = std::min(backoff * 2, std::chrono::seconds(60));
    }
  }
}

asio::awaitable<void> Manager::discoverServer() {
  auto version = co_await client_.get("/version");
  if (!version) {
    // Placed as on 1.36; a refusal teaches otherwise (WorkloadReconciler).
    log_.warn("cannot read the API server's version", {{"error", version.error().describe()}});
    co_return;
  }
  const auto server = capabilitiesOf(base::stringMember(*version, "gitVersion"));
  log_.info("API server", {{"version", server.version},
                           {"suspendedJobResources",
                            server.jobResourcesMutable ? "mutable" : "immutable (before 1.36)"}});
  workloads_.setServer(server);
}

void Manager::pricesChanged(KarpenterPrices::Change change) {
  if (change.prices) {
    reprice();
  }
  engines_.setKarpenterPrices(prices_->condition());
  // Re-placement on a new price goes through the hysteresis, cooldown and
  // rollout budget, as on a policy's.
  workloads_.enqueueAll();
}

void Manager::nodeOverlaysChanged() {
  if (overlaysPending_) {
    return;
  }
  overlaysPending_ = true;
  // A list delivers every overlay as one event each: weigh them once.
  asio::post(executor_, [this] {
    overlaysPending_ = false;
    auto overlays = caches_.clusterView().nodeOverlays();
    std::sort(overlays.begin(), overlays.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    if (stopped_ || overlays == overlays_) {
      return;
    }
    overlays_ = std::move(overlays);
    reprice();
    workloads_.enqueueAll();
    policies_.enqueueAll();  // whether Karpenter shares their prices
  });
}

void Manager::reprice() {
  const auto offerings = prices_ ? prices_->offerings() : nullptr;
  const auto asOf = prices_ ? prices_->pricesAsOf() : std::string();
  engines_.reprice(std::make_shared<const core::Catalog>(
                       core::pricedAsKarpenter(*catalog_, offerings.get(), asOf, overlays_)),
                   offerings);
}

asio::awaitable<void> Manager::run() {
  if (prices_) {
    // Read while the caches fill, so that the first reconciles price at
    // Karpenter's prices already.
    asio::co_spawn(executor_, prices_->run([this](auto change) { pricesChanged(change); }),
                   asio::detached);
  }
  co_await caches_.run();
  asio::co_spawn(executor_, discoverOptionalApis(), asio::detached);
  // Reconcilers start once every cache is full, as in controller-runtime,
  // so no reconcile sees a half-listed world.
  co_await caches_.waitForSync();
  if (!stopped_) {
    returnFreedMemory();  // the list pages are gone; their pages need not stay resident
    log_.info("caches synced", {{"policies", std::to_string(caches_.policies().size())}});
    asio::co_spawn(executor_, trimLoop(), asio::detached);  // a standby caches too
  }
  while (leaderOnly_ && !leader_ && !stopped_) {
    co_await leadershipOrStop_.wait();
  }
  if (!stopped_) {
    co_await discoverServer();
    workloads_.recoverRollouts();
    asio::co_spawn(executor_, resyncLoop(), asio::detached);
    co_await runReconcilers();
  }
}

asio::awaitable<void> Manager::runReconcilers() {
  bool sendingEvents = true;
  runtime::Signal eventsSent;
  asio::co_spawn(executor_, events_.run(), [&](std::exception_ptr) {
    sendingEvents = false;
    eventsSent.notifyAll();
  });
  asio::co_spawn(executor_, workloads_.writeStatuses(), asio::detached);
  co_await controllers_.run();
  // The reconciles have ended: the statuses they handed over go out, then
  // the Events they left.
  co_await workloads_.finishStatuses();
  events_.stop();
  while (sendingEvents) {
    co_await eventsSent.wait();
  }
}

void Manager::becomeLeader() {
  leader_ = true;
  leadershipOrStop_.notifyAll();
  // Everything the standby watched is now this replica's to reconcile.
  workloads_.enqueueAll();
}

void Manager::stop() {
  if (stopped_) {
    return;
  }
  stopped_ = true;
  leadershipOrStop_.notifyAll();
  stopping_.notifyAll();
  if (prices_) {
    prices_->stop();
  }
  controllers_.stop();
  caches_.stop();
}

asio::awaitable<void> Manager::resyncLoop() {
  while (!stopped_) {
    co_await stopping_.waitFor(options_.resync);
    if (stopped_) {
      break;
    }
    // A safety net: level-based reconciles of everything, which write
    // nothing when nothing changed.
    workloads_.enqueueAll();
    policies_.enqueueAll();
  }
}

asio::awaitable<void> Manager::trimLoop() {
  constexpr std::size_t worthReturning = 2 * 1024 * 1024;
  // Measured from what the last trim left, so that free space no trim can
  // return does not cost a trim every round.
  heap_ = heapUsage();
  std::size_t leftByLastTrim = heap_.free;
  while (!stopped_) {
    co_await stopping_.waitFor(std::chrono::seconds(10));
    if (stopped_) {
      break;
    }
    heap_ = heapUsage();
    if (heap_.free > leftByLastTrim + worthReturning) {
      returnFreedMemory();
      heap_ = heapUsage();
      leftByLastTrim = heap_.free;
      log_.debug("returned the heap's free pages to the system");
    }
  }
}

}  // namespace gpuplacement::app
