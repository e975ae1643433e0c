#include "app/event_recorder.h"

namespace gpuplacement::app {
namespace {

// What is still queued when the operator stops gets this long.
constexpr auto kEventsFlushOnStop = std::chrono::seconds(2);

}  // namespace

EventRecorder::EventRecorder(ApiWrites& writes, Logger& log, MetricsRegistry& metrics,
                             const runtime::Clock& clock, EventBudget budget)
    : writes_(writes),
      log_(log),
      clock_(clock),
      budget_(budget),
      bucket_(budget.perSecond, budget.burst),
      recorded_(
          metrics.counter("gpu_placement_events_total", "Events written, by reason", {"reason"})),
      aggregated_(metrics.counter(
          "gpu_placement_events_aggregated_total",
          "Events folded into an identical one still waiting (its count grew)", {"reason"})),
      dropped_(metrics.counter("gpu_placement_events_dropped_total",
                               "Events not written: the queue was full (conditions still say it)",
                               {"reason"})) {}

std::string EventRecorder::keyOf(const std::string& ns, const std::string& name,
                                 const core::Event& event) {
  return ns + '/' + name + '\n' + event.reason + '\n' + event.message;
}

void EventRecorder::record(const std::string& ns, const std::string& name, const std::string& uid,
                           core::Event event) {
  log_.info(event.message, {{"namespace", ns}, {"name", name}, {"reason", event.reason}});
  auto key = keyOf(ns, name, event);
  if (const auto it = pending_.find(key); it != pending_.end()) {
    ++it->second.count;
    aggregated_.inc({event.reason});
    return;
  }
  if (stopped_ || queue_.size() >= budget_.queue) {
    dropped_.inc({event.reason});
    return;
  }
  pending_.emplace(key, Pending{ns, name, uid, std::move(event), 1});
  queue_.push_back(std::move(key));
  wake_.notifyOne();
}

asio::awaitable<void> EventRecorder::run() {
  auto flushUntil = runtime::MonotonicTime::max();
  while (!(stopped_ && (queue_.empty() || clock_.monotonicNow() >= flushUntil))) {
    if (queue_.empty()) {
      co_await wake_.wait();
      continue;
    }
    if (stopped_ && flushUntil == runtime::MonotonicTime::max()) {
      flushUntil = clock_.monotonicNow() + kEventsFlushOnStop;
    }
    // The token is taken now; the write waits out its debt (a new Event
    // arriving meanwhile does not cut the wait short; stopping does).
    const auto until = clock_.monotonicNow() + bucket_.reserve(clock_.monotonicNow());
    while (!stopped_ && clock_.monotonicNow() < until) {
      co_await wake_.waitUntil(until);
    }
    const std::string key = std::move(queue_.front());
    queue_.pop_front();
    auto node = pending_.extract(key);
    if (node.empty()) {
      continue;
    }
    Pending event = std::move(node.mapped());
    recorded_.inc({event.event.reason});
    co_await writes_.recordEvent(event.ns, event.name, event.uid, event.event, event.count);
  }
}

void EventRecorder::stop() {
  stopped_ = true;
  wake_.notifyAll();
}

}  // namespace gpuplacement::app
