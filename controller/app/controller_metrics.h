#pragma once

#include <string>

#include "app/metrics.h"
#include "runtime/controller.h"
#include "runtime/queued_controller.h"
#include "runtime/work_queue.h"

namespace gpuplacement::app {

// controller-runtime's controller and work-queue metrics, labelled by
// controller name as it labels them (controller="gpuworkload", and the
// queue's name="gpuworkload"), so existing dashboards work.
class ControllerMetrics {
 public:
  explicit ControllerMetrics(MetricsRegistry& metrics);

  template <typename Key>
  void attach(runtime::QueuedController<Key>& controller) {
    attach(controller.name(), controller.controller(), controller.queue());
  }
  template <typename Key>
  void attach(const std::string& name, runtime::Controller<Key>& controller,
              const runtime::WorkQueue<Key>& queue) {
    retries_.inc({name}, 0);  // a series from the start, so rate() has a baseline
    controller.setObserver(
        [this, name](const runtime::ReconcileRecord& record) { observe(name, record); });
    metrics_.onCollect([this, name, &queue] {
      depth_.set({name}, static_cast<double>(queue.depth()));
      adds_.set({name}, static_cast<double>(queue.adds()));
    });
  }

 private:
  void observe(const std::string& name, const runtime::ReconcileRecord& record);

  MetricsRegistry& metrics_;
  MetricFamily& reconcileTotal_;
  MetricFamily& reconcileErrors_;
  MetricFamily& reconcileTime_;
  MetricFamily& queueWait_;
  MetricFamily& workDuration_;
  MetricFamily& retries_;
  MetricFamily& depth_;
  MetricFamily& adds_;
};

}  // namespace gpuplacement::app
