#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

#include "runtime/asio.h"
#include "runtime/clock.h"

namespace gpuplacement::runtime {

// Wakes coroutines that wait on the event loop: a condition variable for
// one thread. A waiter sleeps until notified or until its deadline, so the
// same type serves "wait for this to happen" and "sleep, unless stopped".
// Like any condition variable it carries no state of its own: waiters check
// their condition in a loop, and a notify with nobody waiting is lost.
// Deadlines are on the clock given (real time when none is): a FakeClock
// moved past a deadline ends that wait, with no real time spent.
class Signal final : private ClockWatcher {
 public:
  explicit Signal(const Clock& clock = RealClock::instance()) : clock_(clock) {
    clock_.watch(*this);
  }
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  ~Signal() {
    notifyAll();
    clock_.unwatch(*this);
  }

  // True when notified, false when the deadline passed first.
  asio::awaitable<bool> waitUntil(MonotonicTime deadline) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    Waiter waiter{&timer};
    waiters_.push_back(&waiter);
    for (;;) {
      timer.expires_at(clock_.wakeAt(deadline));
      boost::system::error_code ec;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      // Notified, or the deadline has passed on the clock; otherwise the
      // clock moved without reaching it: sleep again.
      if (waiter.notified || clock_.monotonicNow() >= deadline) {
        break;
      }
    }
    std::erase(waiters_, &waiter);  // still listed when the deadline passed
    co_return waiter.notified;
  }
  asio::awaitable<bool> waitFor(std::chrono::nanoseconds duration) {
    return waitUntil(clock_.monotonicNow() + duration);
  }
  asio::awaitable<bool> wait() { return waitUntil(MonotonicTime::max()); }

  // Wakes the longest waiter, if any.
  void notifyOne() {
    if (!waiters_.empty()) {
      auto* first = waiters_.front();
      waiters_.erase(waiters_.begin());
      wake(*first);
    }
  }
  void notifyAll() {
    auto waiting = std::move(waiters_);
    waiters_.clear();
    for (auto* waiter : waiting) {
      wake(*waiter);
    }
  }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  struct Waiter {
    asio::steady_timer* timer;
    bool notified = false;
  };

  static void wake(Waiter& waiter) {
    waiter.notified = true;
    waiter.timer->cancel();
  }
  // Every waiter looks at the clock again; none counts as notified.
  void timeMoved() override {
    for (auto* waiter : waiters_) {
      waiter->timer->cancel();
    }
  }

  const Clock& clock_;
  std::vector<Waiter*> waiters_;
};

}  // namespace gpuplacement::runtime
