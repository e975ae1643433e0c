#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "app/cached_objects.h"
#include "app/key_index.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "core/deployment.h"
#include "core/engine.h"
#include "core/replacement.h"
#include "kube/client.h"
#include "kube/list_watch_client.h"
#include "runtime/controller.h"
#include "runtime/informer.h"

namespace gpuplacement::app {

struct OperatorOptions {
  std::vector<std::string> namespaces;  // empty: all
  int workers = 4;
  std::chrono::seconds resync{std::chrono::hours(1)};
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
  std::string instance;  // this replica's name, for Events
};

// Rollouts started by moves (not by users changing a spec), per policy:
// at most maxConcurrentRollouts run at once; the rest wait here.
class RolloutTracker {
 public:
  std::size_t inFlight(const std::string& policy) const;
  bool holds(const std::string& deployment) const { return policyOf_.count(deployment) > 0; }
  void start(const std::string& policy, const std::string& deployment);
  // Returns the workloads waiting for a slot of that policy, to enqueue.
  std::vector<std::string> finish(const std::string& deployment);
  void wait(const std::string& policy, const std::string& workload) {
    waiting_[policy].insert(workload);
  }
  std::size_t total() const { return policyOf_.size(); }

 private:
  std::unordered_map<std::string, std::string> policyOf_;  // deployment -> policy
  std::map<std::string, std::set<std::string>> waiting_;
};

// The controller: informers for PlacementPolicies, GpuWorkloads and
// Deployments, one work queue, N workers. Everything runs on one event loop.
class Operator {
 public:
  Operator(asio::any_io_executor executor, kube::KubeClient& client,
           std::shared_ptr<const core::Catalog> catalog, std::shared_ptr<const core::RuleSet> rules,
           OperatorOptions options, Logger& logger, MetricsRegistry& metrics,
           const runtime::Clock& clock);
  ~Operator();

  // Lists and watches; returns when stop() has been called and in-flight
  // reconciles have finished.
  asio::awaitable<void> run();
  // Stop taking work; let in-flight reconciles finish.
  void stop();
  // With leader election, workers wait for becomeLeader(); caches fill and
  // /readyz turns ready before that, so a standby is ready too.
  void requireLeadership() { leaderOnly_ = true; }
  void becomeLeader();

  bool synced() const;
  // The loops are turning: the event loop answers (the caller proves that)
  // and no informer is stuck failing.
  bool healthy() const;

 private:
  struct PolicyEngine {
    std::int64_t generation = 0;
    std::shared_ptr<const core::PlacementEngine> engine;
  };
  using WorkloadInformer = runtime::Informer<CachedWorkload>;
  using DeploymentInformer = runtime::Informer<CachedDeployment>;
  using PolicyInformer = runtime::Informer<PolicyObject>;

  // Informer handlers: they only index and enqueue.
  void onWorkload(const std::string& key, const CachedWorkload* previous,
                  const CachedWorkload* current);
  void onDeployment(const std::string& key, const CachedDeployment* previous,
                    const CachedDeployment* current);
  void onPolicy(const std::string& name, const PolicyObject* previous, const PolicyObject* current);
  void enqueueWorkloadsOfPolicy(const std::string& policy);

  asio::awaitable<runtime::ReconcileResult> reconcile(const std::string& key);
  asio::awaitable<runtime::ReconcileResult> reconcileWorkload(const std::string& key);
  asio::awaitable<runtime::ReconcileResult> reconcilePolicy(const std::string& name);
  asio::awaitable<void> resyncLoop();
  void recoverRollouts();

  const CachedWorkload* cachedWorkload(const std::string& key) const;
  const CachedDeployment* cachedDeployment(const std::string& key) const;
  // Unpacked copies of what the caches hold.
  std::optional<WorkloadObject> workload(const std::string& key) const;
  std::optional<core::DeploymentState> deployment(const std::string& key) const;
  std::string deploymentResourceVersion(const std::string& key) const;
  // The engine for a policy name, or why there is none.
  const PolicyEngine* engineFor(const std::string& policy, std::string& problem) const;

  // Writes; each returns an error message, empty on success.
  struct PatchOutcome {
    std::string error;
    bool notFound = false;
    bool conflict = false;
    bool patched = false;
    core::DeploymentState state;
    std::string resourceVersion;
  };
  asio::awaitable<PatchOutcome> patchDeployment(const std::string& ns, const std::string& name,
                                                const core::Scheduling* desired,
                                                const std::vector<std::string>& containers,
                                                const std::string& workloadName,
                                                std::vector<std::string>& conflicts);
  asio::awaitable<std::string> writeWorkloadStatus(const std::string& ns, const std::string& name,
                                                   const nlohmann::json& status);
  asio::awaitable<std::string> setFinalizer(const std::string& ns, const std::string& name,
                                            const WorkloadObject& workload, bool present);
  asio::awaitable<void> recordEvent(const std::string& ns, const std::string& name,
                                    const WorkloadObject& workload, const std::string& type,
                                    const std::string& reason, const std::string& message);

  std::string workloadPath(const std::string& ns, const std::string& name) const;
  std::string deploymentPath(const std::string& ns, const std::string& name) const;
  std::string timestamp() const;

  asio::any_io_executor executor_;
  kube::KubeClient& client_;
  kube::KubeListWatchClient listWatch_;
  std::shared_ptr<const core::Catalog> catalog_;
  std::shared_ptr<const core::RuleSet> rules_;
  OperatorOptions options_;
  Logger& log_;
  MetricsRegistry& metrics_;
  const runtime::Clock& clock_;

  runtime::WorkQueue queue_;
  runtime::AsyncWorkQueue asyncQueue_;
  runtime::Controller controller_;
  std::unique_ptr<PolicyInformer> policies_;
  std::vector<std::unique_ptr<WorkloadInformer>> workloadInformers_;
  std::vector<std::unique_ptr<DeploymentInformer>> deploymentInformers_;

  PolicyEngine builtin_;                         // the built-in policy, generation 0
  std::map<std::string, PolicyEngine> engines_;  // last good engine per policy name
  // When each policy's workload count was last written: the count follows
  // every GpuWorkload created or deleted, so it is written at most once per
  // kPolicyCountInterval instead of once per workload.
  std::map<std::string, runtime::MonotonicTime> policyCountWritten_;
  KeyIndex byDeployment_;  // Deployment -> the GpuWorkloads that target it
  std::unordered_map<std::string, std::size_t> workloadsOfPolicy_;  // policy -> how many
  // workload -> Deployments whose ownership record names it: what to take
  // back if the workload is gone without its finalizer having run.
  KeyIndex ownedBy_;
  RolloutTracker rollouts_;
  // Read-your-writes: after the controller writes, the cache lags until the
  // watch delivers the change. A reconcile that would act on the older copy
  // waits a moment instead (controller-runtime calls these expectations).
  struct StatusExpectation {
    std::uint64_t statusHash;
    runtime::MonotonicTime until;
  };
  struct DeploymentExpectation {
    std::int64_t generation;
    std::uint64_t ownedDigest;
    runtime::MonotonicTime until;
  };
  std::unordered_map<std::string, StatusExpectation> statusExpected_;
  std::unordered_map<std::string, DeploymentExpectation> deploymentExpected_;
  std::unordered_set<std::string> released_;  // finalizer removed, deletion not yet seen
  // True while the cache has not caught up with this controller's own write.
  bool awaitingStatus(const std::string& key, const WorkloadObject& workload);
  bool awaitingDeployment(const std::string& key, const CachedDeployment* cached);
  // Expectations end as soon as the cache shows the write, so none is left
  // behind for an object that is not reconciled again.
  static bool caughtUp(const DeploymentExpectation& expected, const CachedDeployment* cached);
  bool stopped_ = false;
  bool leaderOnly_ = false;
  bool leader_ = false;
  asio::steady_timer* leaderWait_ = nullptr;
  asio::steady_timer* resyncTimer_ = nullptr;

  // What each workload has in force, for the cost and placement gauges.
  struct InForce {  // 10,000 of these: the namespace is in the key
    core::Tier tier;
    std::string instanceType;
    double totalHourlyCost = 0;
  };
  std::unordered_map<std::string, InForce> inForce_;
  void registerGauges();

  MetricFamily& reconcileTotal_;
  MetricFamily& reconcileErrors_;
  MetricFamily& reconcileTime_;
  MetricFamily& placementsTotal_;
  MetricFamily& replacementsTotal_;
  MetricFamily& replacementSavings_;
};

}  // namespace gpuplacement::app
