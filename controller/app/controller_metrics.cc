#include "app/controller_metrics.h"

namespace gpuplacement::app {
namespace {

double seconds(std::chrono::nanoseconds duration) {
  return std::chrono::duration<double>(duration).count();
}

}  // namespace

ControllerMetrics::ControllerMetrics(MetricsRegistry& metrics)
    : metrics_(metrics),
      reconcileTotal_(metrics.counter("controller_runtime_reconcile_total",
                                      "Total number of reconciliations per controller",
                                      {"controller", "result"})),
      reconcileErrors_(metrics.counter("controller_runtime_reconcile_errors_total",
                                       "Total number of reconciliation errors per controller",
                                       {"controller"})),
      reconcileTime_(metrics.histogram("controller_runtime_reconcile_time_seconds",
                                       "Length of time per reconciliation per controller",
                                       {"controller"}, reconcileBuckets())),
      queueWait_(
          metrics.histogram("workqueue_queue_duration_seconds",
                            "How long in seconds an item stays in workqueue before being requested",
                            {"name"}, latencyBuckets())),
      workDuration_(metrics.histogram("workqueue_work_duration_seconds",
                                      "How long in seconds processing an item from workqueue takes",
                                      {"name"}, latencyBuckets())),
      retries_(metrics.counter("workqueue_retries_total",
                               "Total number of retries handled by workqueue", {"name"})),
      depth_(metrics.gauge("workqueue_depth", "Current depth of workqueue", {"name"})),
      adds_(metrics.counter("workqueue_adds_total", "Total number of adds handled by workqueue",
                            {"name"})) {}

void ControllerMetrics::observe(const std::string& name, const runtime::ReconcileRecord& record) {
  queueWait_.observe({name}, seconds(record.queueWait));
  workDuration_.observe({name}, seconds(record.duration));
  const char* result = "success";
  switch (record.outcome) {
    case runtime::ReconcileResult::Outcome::Done:
      break;
    case runtime::ReconcileResult::Outcome::Requeue:
      result = "requeue_after";
      break;
    case runtime::ReconcileResult::Outcome::Error:
      retries_.inc({name});
      [[fallthrough]];
    case runtime::ReconcileResult::Outcome::Terminal:
      result = "error";
      reconcileErrors_.inc({name});
      break;
  }
  reconcileTotal_.inc({name, result});
  reconcileTime_.observe({name}, seconds(record.duration));
}

}  // namespace gpuplacement::app
