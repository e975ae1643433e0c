#pragma once

#include <chrono>
#include <deque>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/clock.h"
#include "runtime/rate_limiter.h"

namespace gpuplacement::runtime {

// client-go's work queue semantics, without threads or timers of its own:
//   - fair: keys come out in the order they went in;
//   - stingy: a key added many times before it is processed is processed
//     once, and a key is never handed out while it is being processed (added
//     again meanwhile, it comes out after done());
//   - delayed adds wait until their time, by the injected clock;
//   - addRateLimited backs off per key (exponential) and overall (a token
//     bucket), whichever is later; forget() resets a key's backoff.
// The event loop drives it (AsyncWorkQueue); tests drive it with a FakeClock.
class WorkQueue {
 public:
  struct RateLimits {
    std::chrono::nanoseconds baseDelay = std::chrono::milliseconds(5);
    std::chrono::nanoseconds maxDelay = std::chrono::seconds(1000);
    double overallPerSecond = 10;
    int overallBurst = 100;
  };

  WorkQueue(const Clock& clock, RateLimits limits)
      : clock_(clock),
        itemBackoff_(limits.baseDelay, limits.maxDelay),
        overall_(limits.overallPerSecond, limits.overallBurst) {}
  explicit WorkQueue(const Clock& clock) : WorkQueue(clock, RateLimits{}) {}

  void add(const std::string& key);
  void addAfter(const std::string& key, std::chrono::nanoseconds delay);
  void addRateLimited(const std::string& key);
  void forget(const std::string& key) { itemBackoff_.forget(key); }
  int retries(const std::string& key) const { return itemBackoff_.failures(key); }

  // A key ready for processing, or nullopt. Moves due delayed keys first.
  std::optional<std::string> tryGet();
  // Processing of `key` finished; if it was added meanwhile it is queued again.
  void done(const std::string& key);

  // When the earliest delayed key is due, if any.
  std::optional<MonotonicTime> nextDue() const;

  void shutDown() { shuttingDown_ = true; }
  bool shuttingDown() const { return shuttingDown_; }

  std::size_t depth() const { return queue_.size(); }
  std::size_t processing() const { return processing_.size(); }
  std::size_t delayed() const { return delayed_.size(); }
  // Total keys ever added to the ready queue (for metrics).
  std::uint64_t adds() const { return adds_; }
  // How long the key now being handed out waited in the queue.
  std::chrono::nanoseconds lastWait() const { return lastWait_; }

 private:
  void promoteDue();

  struct Delayed {
    MonotonicTime due;
    std::uint64_t sequence;  // keeps equal times in insertion order
    std::string key;
    bool operator>(const Delayed& other) const {
      return due != other.due ? due > other.due : sequence > other.sequence;
    }
  };

  const Clock& clock_;
  ItemBackoff<std::string> itemBackoff_;
  TokenBucket overall_;
  std::deque<std::string> queue_;
  std::unordered_set<std::string> dirty_;
  std::unordered_set<std::string> processing_;
  std::unordered_map<std::string, MonotonicTime> enqueuedAt_;
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> delayed_;
  // The earliest due time per delayed key: a later addAfter never delays it.
  std::unordered_map<std::string, MonotonicTime> delayedDue_;
  std::uint64_t sequence_ = 0;
  std::uint64_t adds_ = 0;
  std::chrono::nanoseconds lastWait_{0};
  bool shuttingDown_ = false;
};

}  // namespace gpuplacement::runtime
