#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "runtime/clock.h"

namespace gpuplacement::testing {

// Time that moves only when a test says so. Waits for its deadlines
// (runtime::Signal) end when advance() passes them, never by real time.
class FakeClock final : public runtime::Clock {
 public:
  FakeClock()
      : monotonic_(std::chrono::hours(1000)),
        system_(std::chrono::sys_days(std::chrono::year{2026} / 11 / 22)) {}
  FakeClock(const FakeClock&) = delete;
  FakeClock& operator=(const FakeClock&) = delete;

  runtime::MonotonicTime monotonicNow() const override { return monotonic_; }
  runtime::SystemTime systemNow() const override { return system_; }
  runtime::MonotonicTime wakeAt(runtime::MonotonicTime deadline) const override {
    return deadline <= monotonic_ ? runtime::MonotonicTime::min() : runtime::MonotonicTime::max();
  }
  void watch(runtime::ClockWatcher& watcher) const override { watchers_.push_back(&watcher); }
  void unwatch(runtime::ClockWatcher& watcher) const override { std::erase(watchers_, &watcher); }

  template <typename Rep, typename Period>
  void advance(std::chrono::duration<Rep, Period> step) {
    monotonic_ += std::chrono::duration_cast<runtime::MonotonicTime::duration>(step);
    system_ += std::chrono::duration_cast<runtime::SystemTime::duration>(step);
    for (auto* watcher : std::vector(watchers_)) {
      watcher->timeMoved();
    }
  }

 private:
  runtime::MonotonicTime monotonic_;
  runtime::SystemTime system_;
  mutable std::vector<runtime::ClockWatcher*> watchers_;
};

}  // namespace gpuplacement::testing
