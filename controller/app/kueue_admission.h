#pragma once

#include <string>
#include <unordered_map>

#include "app/api_writes.h"
#include "app/caches.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "app/target_key.h"
#include "core/plan/workload_plan.h"
#include "runtime/clock.h"
#include "runtime/controller_set.h"
#include "runtime/event_source.h"

namespace gpuplacement::app {

// What the GpuWorkload reconciles hand to Kueue's admission: for each Job
// Kueue queues, the placement rendered as its template write would be
// (core::KueueHandOff). Kept in memory: after a restart every GpuWorkload
// is reconciled again and hands its own over.
class KueueHandOffs {
 public:
  // Notifies when what a target hands over changed (or went).
  void set(const TargetKey& target, core::KueueHandOff handOff);
  void erase(const TargetKey& target);
  const core::KueueHandOff* of(const TargetKey& target) const;
  runtime::EventSource<const TargetKey&>& changed() { return changed_; }

 private:
  std::unordered_map<TargetKey, core::KueueHandOff> handOffs_;
  runtime::EventSource<const TargetKey&> changed_;
};

// The operator as a Kueue admission check controller (controllerName
// core::kKueueCheckController): keeps its AdmissionChecks Active, and
// answers its check on each Workload Kueue has reserved quota for, from
// what the GpuWorkload of the Workload's Job hands over
// (core::answerAdmission), by server-side apply of the Workload's
// status. A Workload whose Job no GpuWorkload targets is answered Ready
// with nothing to add: the check is on every Workload of the
// ClusterQueue, and Kueue would hold the others for ever.
class KueueAdmissionReconciler {
 public:
  // Adds its two controllers (AdmissionChecks, Workloads) to `controllers`.
  KueueAdmissionReconciler(runtime::ControllerSet& controllers, ObjectCaches& caches,
                           KueueHandOffs& handOffs, ApiWrites& writes, Logger& log,
                           MetricsRegistry& metrics, const runtime::Clock& clock);

 private:
  asio::awaitable<runtime::ReconcileResult> reconcileCheck(const runtime::ObjectKey& key);
  asio::awaitable<runtime::ReconcileResult> reconcileWorkload(const runtime::ObjectKey& key);
  // The names of this operator's AdmissionChecks.
  std::vector<std::string> ourChecks() const;
  std::vector<std::string> allWorkloads() const;

  ObjectCaches& caches_;
  KueueHandOffs& handOffs_;
  ApiWrites& writes_;
  Logger& log_;
  const runtime::Clock& clock_;
  MetricFamily& answers_;
};

// The operator's check among a Kueue Workload's checks (for the
// GpuWorkload's status); empty when none of them is the operator's.
std::string ourCheckOn(const ObjectCaches& caches, const core::KueueWorkload& workload);

}  // namespace gpuplacement::app
