#pragma once

#include <string>

#include "app/api_writes.h"
#include "app/caches.h"
#include "app/controller_metrics.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "runtime/queued_controller.h"

namespace gpuplacement::app {

// Places the pods of Deployments placed at the pods (core/pod_scheduling.h):
// each pod that waits behind the operator's scheduling gate gets the node
// selector and tolerations its own annotation names, and loses the gate, in
// one patch (core::planPodRelease). Keys are pods; a pod needs nothing
// but itself, so this holds for pods whose GpuWorkload is gone too.
class PodReleaseReconciler {
 public:
  PodReleaseReconciler(asio::any_io_executor executor, ObjectCaches& caches, ApiWrites& writes,
                       Logger& log, MetricsRegistry& metrics, ControllerMetrics& controllerMetrics,
                       const runtime::Clock& clock);

  asio::awaitable<void> run();
  void stop() { controller_.stop(); }
  void enqueue(const std::string& key) { controller_.enqueue(runtime::ObjectKey::parse(key)); }

 private:
  asio::awaitable<runtime::ReconcileResult> reconcile(const runtime::ObjectKey& key);

  ObjectCaches& caches_;
  ApiWrites& writes_;
  Logger& log_;
  runtime::QueuedController<runtime::ObjectKey> controller_;
  MetricFamily& released_;
};

}  // namespace gpuplacement::app
