#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <unordered_map>

#include "runtime/clock.h"

namespace gpuplacement::runtime {

// A token bucket like golang.org/x/time/rate: `burst` tokens, refilled at
// `ratePerSecond`. reserve() always takes a token, possibly going into debt,
// and says how long the caller must wait before acting on it.
class TokenBucket {
 public:
  // A rate of zero or less means no limit.
  TokenBucket(double ratePerSecond, int burst)
      : rate_(ratePerSecond), burst_(std::max(burst, 1)), tokens_(burst_) {}

  std::chrono::nanoseconds reserve(MonotonicTime now) {
    if (rate_ <= 0) {
      return std::chrono::nanoseconds(0);
    }
    refill(now);
    tokens_ -= 1;
    if (tokens_ >= 0) {
      return std::chrono::nanoseconds(0);
    }
    return std::chrono::nanoseconds(static_cast<std::int64_t>(std::ceil(-tokens_ / rate_ * 1e9)));
  }

  // A new rate and burst from `now` on: what was earned so far is kept,
  // up to the new burst.
  void setRate(double ratePerSecond, int burst, MonotonicTime now) {
    refill(now);
    rate_ = ratePerSecond;
    burst_ = std::max(burst, 1);
    tokens_ = std::min<double>(tokens_, burst_);
  }

  double rate() const { return rate_; }
  int burst() const { return burst_; }

 private:
  void refill(MonotonicTime now) {
    if (last_ != MonotonicTime{}) {
      const double elapsed = std::chrono::duration<double>(now - last_).count();
      tokens_ = std::min<double>(burst_, tokens_ + elapsed * rate_);
    }
    last_ = now;
  }

  double rate_;
  int burst_;
  double tokens_;
  MonotonicTime last_{};
};

// Per-item exponential backoff: base * 2^failures, capped (client-go's
// ItemExponentialFailureRateLimiter).
template <typename Key, typename Hash = std::hash<Key>>
class ItemBackoff {
 public:
  ItemBackoff(std::chrono::nanoseconds base, std::chrono::nanoseconds cap)
      : base_(base), cap_(cap) {}

  // The delay for this failure of `key`, counting it.
  std::chrono::nanoseconds next(const Key& key) {
    const int failures = failures_[key]++;
    const double delay = static_cast<double>(base_.count()) * std::pow(2.0, std::min(failures, 62));
    if (delay >= static_cast<double>(cap_.count())) {
      return cap_;
    }
    return std::chrono::nanoseconds(static_cast<std::int64_t>(delay));
  }

  void forget(const Key& key) { failures_.erase(key); }
  int failures(const Key& key) const {
    const auto it = failures_.find(key);
    return it == failures_.end() ? 0 : it->second;
  }

 private:
  std::chrono::nanoseconds base_;
  std::chrono::nanoseconds cap_;
  std::unordered_map<Key, int, Hash> failures_;
};

}  // namespace gpuplacement::runtime
