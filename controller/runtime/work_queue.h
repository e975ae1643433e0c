#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "runtime/clock.h"
#include "runtime/object_key.h"
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
// Keys are typed (an ObjectKey per kind) and need std::hash.
template <typename Key = ObjectKey>
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

  void add(const Key& key);
  void addAfter(const Key& key, std::chrono::nanoseconds delay);
  void addRateLimited(const Key& key);
  void forget(const Key& key) { itemBackoff_.forget(key); }
  int retries(const Key& key) const { return itemBackoff_.failures(key); }

  // A key ready for processing, or nullopt. Moves due delayed keys first.
  std::optional<Key> tryGet();
  // Processing of `key` finished; if it was added meanwhile it is queued again.
  void done(const Key& key);

  // When the earliest delayed key is due, if any.
  std::optional<MonotonicTime> nextDue() const;

  void shutDown() { shuttingDown_ = true; }
  const Clock& clock() const { return clock_; }
  bool shuttingDown() const { return shuttingDown_; }

  std::size_t depth() const { return queue_.size(); }
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
    Key key;
    bool operator>(const Delayed& other) const {
      return due != other.due ? due > other.due : sequence > other.sequence;
    }
  };

  const Clock& clock_;
  ItemBackoff<Key> itemBackoff_;
  TokenBucket overall_;
  std::deque<Key> queue_;
  std::unordered_set<Key> dirty_;
  std::unordered_set<Key> processing_;
  std::unordered_map<Key, MonotonicTime> enqueuedAt_;
  std::priority_queue<Delayed, std::vector<Delayed>, std::greater<>> delayed_;
  // The earliest due time per delayed key: a later addAfter never delays it.
  std::unordered_map<Key, MonotonicTime> delayedDue_;
  std::uint64_t sequence_ = 0;
  std::uint64_t adds_ = 0;
  std::chrono::nanoseconds lastWait_{0};
  bool shuttingDown_ = false;
};

template <typename Key>
void WorkQueue<Key>::add(const Key& key) {
  if (shuttingDown_ || dirty_.count(key)) {
    return;
  }
  dirty_.insert(key);
  if (processing_.count(key)) {
    return;  // queued again by done()
  }
  queue_.push_back(key);
  enqueuedAt_[key] = clock_.monotonicNow();
  ++adds_;
}

template <typename Key>
void WorkQueue<Key>::addAfter(const Key& key, std::chrono::nanoseconds delay) {
  if (shuttingDown_) {
    return;
  }
  if (delay <= std::chrono::nanoseconds(0)) {
    add(key);
    return;
  }
  const MonotonicTime due = clock_.monotonicNow() + delay;
  const auto existing = delayedDue_.find(key);
  if (existing != delayedDue_.end() && existing->second <= due) {
    return;  // already due sooner
  }
  delayedDue_[key] = due;
  delayed_.push(Delayed{due, sequence_++, key});
}

template <typename Key>
void WorkQueue<Key>::addRateLimited(const Key& key) {
  const auto perItem = itemBackoff_.next(key);
  const auto overall = overall_.reserve(clock_.monotonicNow());
  addAfter(key, std::max(perItem, overall));
}

template <typename Key>
void WorkQueue<Key>::promoteDue() {
  const auto now = clock_.monotonicNow();
  while (!delayed_.empty() && delayed_.top().due <= now) {
    const Delayed next = delayed_.top();
    delayed_.pop();
    const auto current = delayedDue_.find(next.key);
    // A stale heap entry: the key was rescheduled sooner and already added.
    if (current == delayedDue_.end() || current->second != next.due) {
      continue;
    }
    delayedDue_.erase(current);
    add(next.key);
  }
}

template <typename Key>
std::optional<Key> WorkQueue<Key>::tryGet() {
  promoteDue();
  if (queue_.empty()) {
    return std::nullopt;
  }
  Key key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  if (const auto it = enqueuedAt_.find(key); it != enqueuedAt_.end()) {
    lastWait_ = clock_.monotonicNow() - it->second;
    enqueuedAt_.erase(it);
  }
  return key;
}

template <typename Key>
void WorkQueue<Key>::done(const Key& key) {
  processing_.erase(key);
  if (dirty_.count(key)) {
    queue_.push_back(key);
    enqueuedAt_[key] = clock_.monotonicNow();
    ++adds_;
  }
}

template <typename Key>
std::optional<MonotonicTime> WorkQueue<Key>::nextDue() const {
  // Skip nothing here: a stale entry only makes the loop wake a little early.
  if (delayed_.empty()) {
    return std::nullopt;
  }
  return delayed_.top().due;
}

}  // namespace gpuplacement::runtime
