#pragma once

#include <optional>

#include "runtime/asio.h"
#include "runtime/signal.h"
#include "runtime/work_queue.h"

namespace gpuplacement::runtime {

// Puts a WorkQueue on the event loop: get() waits for a ready key (or the
// next delayed one to fall due) without blocking the thread, and adds wake
// a waiting worker. Delays are on the queue's clock: with a FakeClock a
// delayed key falls due when the test moves the clock past it.
template <typename Key = ObjectKey>
class AsyncWorkQueue {
 public:
  explicit AsyncWorkQueue(WorkQueue<Key>& queue) : queue_(queue), ready_(queue.clock()) {}

  void add(const Key& key) {
    queue_.add(key);
    ready_.notifyOne();
  }
  void addAfter(const Key& key, std::chrono::nanoseconds delay) {
    queue_.addAfter(key, delay);
    ready_.notifyOne();  // a sleeping worker may need an earlier deadline
  }
  void addRateLimited(const Key& key) {
    queue_.addRateLimited(key);
    ready_.notifyOne();
  }
  void forget(const Key& key) { queue_.forget(key); }
  void done(const Key& key) {
    queue_.done(key);
    ready_.notifyOne();
  }
  void shutDown() {
    queue_.shutDown();
    ready_.notifyAll();
  }

  // The next key to process, or nullopt once the queue is shut down.
  asio::awaitable<std::optional<Key>> get() {
    for (;;) {
      if (queue_.shuttingDown()) {
        co_return std::nullopt;
      }
      if (auto key = queue_.tryGet()) {
        co_return key;
      }
      const auto due = queue_.nextDue();
      co_await ready_.waitUntil(due ? *due : MonotonicTime::max());
    }
  }

  WorkQueue<Key>& queue() { return queue_; }

 private:
  WorkQueue<Key>& queue_;
  Signal ready_;
};

}  // namespace gpuplacement::runtime
