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
class Signal {
 public:
  Signal() = default;
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  ~Signal() { notifyAll(); }

  // True when notified, false when the deadline passed first.
  asio::awaitable<bool> waitUntil(MonotonicTime deadline) {
    asio::steady_timer timer(co_await asio::this_coro::executor, deadline);
    waiters_.push_back(&timer);
    boost::system::error_code ec;
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    std::erase(waiters_, &timer);  // still listed when the deadline passed
    co_return ec == asio::error::operation_aborted;
  }
  asio::awaitable<bool> waitFor(std::chrono::nanoseconds duration) {
    return waitUntil(std::chrono::steady_clock::now() + duration);
  }
  asio::awaitable<bool> wait() { return waitUntil(MonotonicTime::max()); }

  // Wakes the longest waiter, if any.
  void notifyOne() {
    if (!waiters_.empty()) {
      auto* first = waiters_.front();
      waiters_.erase(waiters_.begin());
      first->cancel();
    }
  }
  void notifyAll() {
    auto waiting = std::move(waiters_);
    waiters_.clear();
    for (auto* waiter : waiting) {
      waiter->cancel();
    }
  }
  std::size_t waiting() const { return waiters_.size(); }

 private:
  std::vector<asio::steady_timer*> waiters_;
};

}  // namespace gpuplacement::runtime
