#pragma once

#include <chrono>

namespace gpuplacement::runtime {

using MonotonicTime = std::chrono::steady_clock::time_point;
using SystemTime = std::chrono::system_clock::time_point;

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
};

class RealClock final : public Clock {
 public:
  MonotonicTime monotonicNow() const override { return std::chrono::steady_clock::now(); }
  SystemTime systemNow() const override { return std::chrono::system_clock::now(); }
};

}  // namespace gpuplacement::runtime
