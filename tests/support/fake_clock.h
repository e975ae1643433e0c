#pragma once

#include <chrono>

#include "runtime/clock.h"

namespace gpuplacement::testing {

// Time that moves only when a test says so.
class FakeClock final : public runtime::Clock {
 public:
  FakeClock()
      : monotonic_(std::chrono::hours(1000)),
        system_(std::chrono::sys_days(std::chrono::year{2026} / 11 / 22)) {}

  runtime::MonotonicTime monotonicNow() const override { return monotonic_; }
  runtime::SystemTime systemNow() const override { return system_; }

  template <typename Rep, typename Period>
  void advance(std::chrono::duration<Rep, Period> step) {
    monotonic_ += std::chrono::duration_cast<runtime::MonotonicTime::duration>(step);
    system_ += std::chrono::duration_cast<runtime::SystemTime::duration>(step);
  }

 private:
  runtime::MonotonicTime monotonic_;
  runtime::SystemTime system_;
};

}  // namespace gpuplacement::testing
