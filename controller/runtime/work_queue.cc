#include "runtime/work_queue.h"

#include <algorithm>

namespace gpuplacement::runtime {

void WorkQueue::add(const std::string& key) {
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

void WorkQueue::addAfter(const std::string& key, std::chrono::nanoseconds delay) {
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

void WorkQueue::addRateLimited(const std::string& key) {
  const auto perItem = itemBackoff_.next(key);
  const auto overall = overall_.reserve(clock_.monotonicNow());
  addAfter(key, std::max(perItem, overall));
}

void WorkQueue::promoteDue() {
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

std::optional<std::string> WorkQueue::tryGet() {
  promoteDue();
  if (queue_.empty()) {
    return std::nullopt;
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  if (const auto it = enqueuedAt_.find(key); it != enqueuedAt_.end()) {
    lastWait_ = clock_.monotonicNow() - it->second;
    enqueuedAt_.erase(it);
  }
  return key;
}

void WorkQueue::done(const std::string& key) {
  processing_.erase(key);
  if (dirty_.count(key)) {
    queue_.push_back(key);
    enqueuedAt_[key] = clock_.monotonicNow();
    ++adds_;
  }
}

std::optional<MonotonicTime> WorkQueue::nextDue() const {
  // Skip nothing here: a stale entry only makes the loop wake a little early.
  if (delayed_.empty()) {
    return std::nullopt;
  }
  return delayed_.top().due;
}

}  // namespace gpuplacement::runtime
