#pragma once

#include <string>

#include "app/api_writes.h"
#include "app/caches.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "runtime/controller_set.h"

namespace gpuplacement::app {

// Places the pods of Deployments placed at the pods (core/kinds/pod_scheduling.h):
// each pod that waits behind the operator's scheduling gate gets the node
// selector and tolerations its own annotation names, and loses the gate, in
// one patch (core::planPodRelease). Keys are pods; a pod needs nothing
// but itself, so this holds for pods whose GpuWorkload is gone too.
class PodReleaseReconciler {
 public:
  // Adds its controller to `controllers`, which runs it.
  PodReleaseReconciler(runtime::ControllerSet& controllers, ObjectCaches& caches, ApiWrites& writes,
                       Logger& log, MetricsRegistry& metrics);

 private:
  asio::awaitable<runtime::ReconcileResult> reconcile(const runtime::ObjectKey& key);

  ObjectCaches& caches_;
  ApiWrites& writes_;
  Logger& log_;
  MetricFamily& released_;
};

}  // namespace gpuplacement::app
