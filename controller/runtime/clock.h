#pragma once

#include <chrono>

namespace gpuplacement::runtime {

using MonotonicTime = std::chrono::steady_clock::time_point;
using SystemTime = std::chrono::system_clock::time_point;

// Told when a clock's time jumps (a test's FakeClock moved by hand), so
// that whoever sleeps until a deadline on that clock looks at it again.
class ClockWatcher {
 public:
  virtual void timeMoved() = 0;

 protected:
  ~ClockWatcher() = default;
};

// The one source of time for everything that schedules or stamps (Envoy's
// TimeSource): production passes RealClock, tests a FakeClock they advance
// by hand, so no test ever sleeps to wait for a deadline.
class Clock {
 public:
  virtual ~Clock() = default;
  // For durations, deadlines and backoff.
  virtual MonotonicTime monotonicNow() const = 0;
  // For timestamps that leave the process (status, Events, Leases).
  virtual SystemTime systemNow() const = 0;

  // When a real timer waiting for `deadline` on this clock should go off,
  // in steady_clock time. Real time: the deadline itself. A clock moved by
  // hand answers at once for a deadline passed and never for one ahead,
  // and wakes its watchers when it moves instead.
  virtual MonotonicTime wakeAt(MonotonicTime deadline) const = 0;
  virtual void watch(ClockWatcher& watcher) const = 0;
  virtual void unwatch(ClockWatcher& watcher) const = 0;
};

class RealClock final : public Clock {
 public:
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
  SystemTime systemNow() const override { return std::chrono::system_clock::now(); }
  MonotonicTime wakeAt(MonotonicTime deadline) const override { return deadline; }
  // Real time never jumps.
  void watch(ClockWatcher&) const override {}
  void unwatch(ClockWatcher&) const override {}

  // For what waits on real time and was given no clock.
  static const RealClock& instance() {
    static const RealClock clock;
    return clock;
  }
};

}  // namespace gpuplacement::runtime
