#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/asio.h"
#include "runtime/work_queue.h"

namespace gpuplacement::runtime {

// Puts a WorkQueue on the event loop: get() waits for a ready key (or the
// next delayed one to fall due) without blocking the thread, and adds wake
// a waiting worker. The clock must be the real one here, since the waits
// are real timers.
class AsyncWorkQueue {
 public:
  AsyncWorkQueue(asio::any_io_executor executor, WorkQueue& queue)
      : executor_(std::move(executor)), queue_(queue) {}

  void add(const std::string& key) {
    queue_.add(key);
    wakeOne();
  }
  void addAfter(const std::string& key, std::chrono::nanoseconds delay) {
    queue_.addAfter(key, delay);
    wakeOne();  // a sleeping worker may need an earlier deadline
  }
  void addRateLimited(const std::string& key) {
    queue_.addRateLimited(key);
    wakeOne();
  }
  void forget(const std::string& key) { queue_.forget(key); }
  void done(const std::string& key) {
    queue_.done(key);
    wakeOne();
  }
  void shutDown() {
    queue_.shutDown();
    for (auto* waiter : waiters_) {
      waiter->cancel();
    }
  }

  // The next key to process, or nullopt once the queue is shut down.
  asio::awaitable<std::optional<std::string>> get() {
    asio::steady_timer timer(executor_);
    for (;;) {
      if (queue_.shuttingDown()) {
        co_return std::nullopt;
      }
      if (auto key = queue_.tryGet()) {
        co_return key;
      }
      const auto due = queue_.nextDue();
      timer.expires_at(due ? *due : MonotonicTime::max());
      waiters_.push_back(&timer);
      boost::system::error_code ignored;
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
      waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), &timer), waiters_.end());
    }
  }

  WorkQueue& queue() { return queue_; }

 private:
  void wakeOne() {
    if (!waiters_.empty()) {
      waiters_.front()->cancel();
      waiters_.erase(waiters_.begin());
    }
  }

  asio::any_io_executor executor_;
  WorkQueue& queue_;
  std::vector<asio::steady_timer*> waiters_;
};

}  // namespace gpuplacement::runtime
