#pragma once

#include <map>
#include <string>

#include "app/api_writes.h"
#include "app/caches.h"
#include "app/logging.h"
#include "app/policy_engines.h"
#include "app/workload_reconciler.h"
#include "runtime/controller_set.h"

namespace gpuplacement::app {

// Reconciles PlacementPolicies: keeps the engine in force per policy (the
// last valid version), wakes the GpuWorkloads a change affects, and writes
// the policy's status (Accepted, and how many workloads use it). Its own
// queue; keys are policy names.
class PolicyReconciler {
 public:
  // Adds its controller to `controllers`, which runs it.
  PolicyReconciler(runtime::ControllerSet& controllers, ObjectCaches& caches,
                   PolicyEngines& engines, ApiWrites& writes, WorkloadReconciler& workloads,
                   Logger& log, const runtime::Clock& clock);

  void enqueue(const std::string& name) { controller_.enqueue(runtime::ObjectKey{"", name}); }
  void enqueueAll();

 private:
  asio::awaitable<runtime::ReconcileResult> reconcile(const runtime::ObjectKey& key);
  // Keeps the engine in force up to date, and wakes its workloads.
  void policyChanged(const std::string& name, const PolicyObject* current);
  // Writes, edits and deletes the NodeOverlays that share the prices of
  // `policy` (null: none, the policy is gone or shares nothing). Answers
  // the names someone else's overlays hold, and sets `failed` to the first
  // write the server refused.
  asio::awaitable<std::vector<std::string>> shareWithKarpenter(const std::string& name,
                                                               const std::string& uid,
                                                               const core::Policy* policy,
                                                               std::string& failed);

  ObjectCaches& caches_;
  PolicyEngines& engines_;
  ApiWrites& writes_;
  WorkloadReconciler& workloads_;
  Logger& log_;
  const runtime::Clock& clock_;
  runtime::QueuedController<runtime::ObjectKey>& controller_;
  // When each policy's workload count was last written: the count follows
  // every GpuWorkload created or deleted, so it is written at most once per
  // interval instead of once per workload.
  std::map<std::string, runtime::MonotonicTime> countWritten_;
};

}  // namespace gpuplacement::app
