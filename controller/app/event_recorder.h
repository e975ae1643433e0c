#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

#include "app/api_writes.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "core/plan/workload_plan.h"
#include "runtime/clock.h"
#include "runtime/rate_limiter.h"
#include "runtime/signal.h"

namespace gpuplacement::app {

struct EventBudget {
  double perSecond = 10;  // Events written per second, at most
  int burst = 50;
  std::size_t queue = 1000;  // Events waiting, at most; beyond, they are dropped and counted
};

// Events go out behind the writes that matter (Deployment patches,
// status), on their own budget, so they never slow a placement. Under load
// they are aggregated and then dropped, never blocking: an Event identical
// to one still waiting (same object, reason and message) adds to its count,
// and one that finds the queue full is dropped and counted in
// gpu_placement_events_dropped_total. Conditions in status stay the
// complete record; Events are the notice.
class EventRecorder {
 public:
  EventRecorder(ApiWrites& writes, Logger& log, MetricsRegistry& metrics,
                const runtime::Clock& clock, EventBudget budget = {});

  // Queues the Event; returns at once.
  void record(const std::string& ns, const std::string& name, const std::string& uid,
              core::Event event);
  // Writes the queue out at the budget's pace until stop(), then what is
  // left for a moment.
  asio::awaitable<void> run();
  void stop();

  std::size_t waiting() const { return queue_.size(); }

 private:
  struct Pending {
    std::string ns;
    std::string name;
    std::string uid;
    core::Event event;
    int count = 1;
  };
  static std::string keyOf(const std::string& ns, const std::string& name,
                           const core::Event& event);

  ApiWrites& writes_;
  Logger& log_;
  const runtime::Clock& clock_;
  EventBudget budget_;
  runtime::TokenBucket bucket_;
  std::deque<std::string> queue_;  // keys, oldest first
  std::unordered_map<std::string, Pending> pending_;
  runtime::Signal wake_{clock_};
  bool stopped_ = false;
  MetricFamily& recorded_;
  MetricFamily& aggregated_;
  MetricFamily& dropped_;
};

}  // namespace gpuplacement::app
