#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include "app/api_writes.h"
#include "app/caches.h"
#include "app/event_recorder.h"
#include "app/expectations.h"
#include "app/kueue_admission.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/policy_engines.h"
#include "app/rollout_tracker.h"
#include "app/status_writer.h"
#include "core/plan/workload_plan.h"
#include "runtime/controller_set.h"
#include "runtime/signal.h"

namespace gpuplacement::app {

struct WorkloadReconcilerOptions {
  int workers = 4;  // reconciles at once
  // Hold placed GpuWorkloads with a finalizer (core::WorkloadInput).
  bool finalizer = false;
  // A cost and an idle-devices series per placed GpuWorkload
  // (--per-workload-metrics); off, only the totals by namespace and type.
  bool perWorkloadMetrics = true;
  StatusBudget statuses;
};

// What the API server lets the operator change on a suspended Job.
struct ServerCapabilities {
  std::string version;  // its gitVersion, "v1.36.3"; empty when unknown
  // A suspended Job's pod resources may change (KEP-5440, on by default
  // from 1.36): assumed from the version, and learnt false from a refusal.
  bool jobResourcesMutable = true;
};

// From a /version answer's gitVersion ("v1.34.10", "v1.36.3-eks-1a2b3c").
ServerCapabilities capabilitiesOf(const std::string& gitVersion);

// Reconciles GpuWorkloads: read the caches, plan (core::planWorkload),
// write the targets, record (core::recordWorkload): finalizers, status,
// Events. Its own queue and workers; keys are GpuWorkloads.
class WorkloadReconciler {
 public:
  // Adds its controller to `controllers`, which runs it.
  WorkloadReconciler(runtime::ControllerSet& controllers, ObjectCaches& caches,
                     const PolicyEngines& engines, ApiWrites& writes, EventRecorder& events,
                     WorkloadReconcilerOptions options, Logger& log, MetricsRegistry& metrics,
                     const runtime::Clock& clock);

  // Writes the statuses the reconciles hand over, until finishStatuses().
  asio::awaitable<void> writeStatuses();
  // Once the last reconcile has ended: what was handed over goes out, then
  // this returns.
  asio::awaitable<void> finishStatuses();

  void enqueue(const std::string& key) { controller_.enqueue(runtime::ObjectKey::parse(key)); }
  std::size_t statusesWaiting() const { return statuses_.waiting(); }
  double statusesPerSecond() { return statuses_.perSecond(); }
  std::chrono::nanoseconds statusBaseline() const { return statuses_.baseline(); }
  void enqueueAll();
  void enqueueWorkloadsOf(const std::string& policy);
  // After a restart: moves this operator started that are still rolling
  // out hold their slots again. Before the workers start.
  void recoverRollouts();
  // Jobs Kueue queues hand their placement to Kueue's admission through
  // `handOffs` (KueueAdmissionReconciler). Before the workers start.
  void handOffToKueue(KueueHandOffs& handOffs) { kueue_ = &handOffs; }
  // Before the workers start.
  void setServer(ServerCapabilities server) { server_ = std::move(server); }

 private:
  // Copies of the cached objects one reconcile reads: the caches may
  // change while it waits on the server.
  struct Snapshot {
    std::optional<core::WorkloadObject> workload;
    std::string workloadResourceVersion;
    std::optional<core::TargetState> target;
    std::shared_ptr<const core::ClusterView> cluster;     // let go once planned
    std::shared_ptr<const core::PlacementEngine> engine;  // input.policy's, held while planned
    core::WorkloadInput input;                            // points into the fields above
    Snapshot() = default;
    Snapshot(const Snapshot&) = delete;
  };
  using PatchPlanner =
      std::function<core::PatchPlan(const core::TargetState&, const std::string& resourceVersion)>;
  using Outcome = base::Result<core::TargetOutcome, std::string>;

  asio::awaitable<runtime::ReconcileResult> reconcile(const runtime::ObjectKey& key);
  // Our own last write has not reached the cache: requeue instead.
  std::optional<runtime::ReconcileResult> cacheLag(const std::string& key);
  void read(const runtime::ObjectKey& key, Snapshot& snapshot) const;
  asio::awaitable<base::Result<base::Ok, std::string>> release(std::string ns,
                                                               core::TargetRef target,
                                                               std::string workload);
  // Deletes the ResourceClaimTemplate `old` unless it is `kept` (or none).
  asio::awaitable<void> dropClaimTemplate(std::string ns, std::string old, std::string kept);
  asio::awaitable<Outcome> writeTarget(const runtime::ObjectKey& key, const Snapshot& snapshot,
                                       const core::WorkloadPlan& plan);
  // Sends `plan`; on 409 reads the target fresh and plans again.
  asio::awaitable<Outcome> converge(std::string ns, core::TargetRef target, core::TargetState state,
                                    std::string resourceVersion, core::PatchPlan plan,
                                    PatchPlanner replan);
  asio::awaitable<runtime::ReconcileResult> apply(const runtime::ObjectKey& key,
                                                  const Snapshot& snapshot,
                                                  core::WorkloadRecord record);
  asio::awaitable<base::Result<base::Ok, std::string>> writeRecord(
      const runtime::ObjectKey& key, const Snapshot& snapshot, const core::WorkloadRecord& record);
  // When the server stores a status other than the one written (fields an
  // older CRD prunes), remember both digests: otherwise every reconcile
  // would see a difference and write the same status again, for ever.
  // `writtenText` is read only to say what differs, the first time.
  void noteStoredStatus(const std::string& key, std::uint64_t writtenDigest,
                        const std::string& writtenText, const nlohmann::json& stored,
                        std::uint64_t storedDigest);
  void compareWithWhatWasWritten(const std::string& key, Snapshot& snapshot);
  // A status handed to the writer and not yet in the cache is the one in
  // force: the reconcile reads it instead of the cached one.
  void readPendingStatus(const std::string& key, Snapshot& snapshot) const;
  void statusStored(const std::string& key, std::uint64_t writtenDigest,
                    const std::string& writtenText, const nlohmann::json& stored);
  void count(const core::WorkloadRecord& record, const core::WorkloadObject& workload);
  // The target's rollout slot is free: wake who waits for one.
  void finishRollout(const TargetKey& target);

  // The GpuWorkloads to reconcile when a target changed.
  std::vector<std::string> workloadsOfTarget(const TargetKey& target, const CachedTarget* previous,
                                             const CachedTarget* current) const;
  std::vector<std::string> allWorkloads() const;
  void registerGauges(MetricsRegistry& metrics, bool perWorkload);

  ObjectCaches& caches_;
  const PolicyEngines& engines_;
  ApiWrites& writes_;
  EventRecorder& events_;
  Logger& log_;
  const runtime::Clock& clock_;
  const bool useFinalizer_;
  ServerCapabilities server_;
  KueueHandOffs* kueue_ = nullptr;
  WriteExpectations expectations_;
  RolloutTracker rollouts_;
  runtime::QueuedController<runtime::ObjectKey>& controller_;
  StatusWriter statuses_;
  bool writingStatuses_ = false;
  runtime::Signal statusesWritten_;

  // What each workload has in force, for the cost and placement gauges.
  struct InForce {  // 10,000 of these: the namespace and name are in the key
    core::Tier tier;
    core::CapacityType capacityType;
    std::string instanceType;
    double totalHourlyCost = 0;  // status.placement.hourlyCost x replicas
    int idleAccelerators = 0;    // status.placement.idleAccelerators
  };
  std::unordered_map<std::string, InForce> inForce_;
  struct Rewritten {
    std::uint64_t written;  // digest of the status sent
    std::uint64_t stored;   // digest of what the server kept of it
  };
  std::unordered_map<std::string, Rewritten> rewritten_;  // empty when the CRD is current
  bool warnedRewritten_ = false;
  MetricFamily& placementsTotal_;
  MetricFamily& replacementsTotal_;
  MetricFamily& replacementSavings_;
  MetricFamily& fallbacksTotal_;
};

}  // namespace gpuplacement::app
