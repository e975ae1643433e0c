#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "runtime/clock.h"

namespace gpuplacement::runtime {

struct LatencyGovernedRateOptions {
  double initial = 20;   // a second, at the start
  double minimum = 1;    // never below: what waits still goes out
  double maximum = 200;  // never above
  double step = 5;       // added each interval the latency holds
  std::chrono::nanoseconds interval = std::chrono::seconds(1);
  // The latency with room: headroom x baseline + slack (at a few
  // milliseconds a millisecond more is noise, not a queue). Above it the
  // rate is cut in proportion, at most by deepestCut.
  double headroom = 1.25;
  std::chrono::nanoseconds slack = std::chrono::milliseconds(2);
  double deepestCut = 0.5;
  // An interval judges the latency only with this many requests: a few
  // placements a second do not load a server, and one slow answer among
  // them (a retried conflict) is no queue.
  int minimumSamples = 5;
  // The baseline is the lowest interval median this far back: what the
  // server answers when it has room.
  std::chrono::nanoseconds baselineWindow = std::chrono::minutes(10);
  // While requests are watched, one interval this often is a probe: the
  // rate held at its minimum, so that the baseline is measured without the
  // lesser requests' own load. Shorter than the window, so that one is
  // always in it.
  std::chrono::nanoseconds probeEvery = std::chrono::minutes(5);
};

// The rate of a lesser kind of request, yielding to the latency of the kind
// that matters: Envoy's adaptive concurrency (its gradient, the minimum
// latency as the baseline, measured in a window with the limit pinned low)
// with TCP's additive increase. Each interval the median latency of the
// watched requests is compared with the latency with room: above it the
// rate is multiplied by room/median (a median twice that halves it), at or
// below it grows by `step`; an interval without watched requests doubles
// it, as there is nothing to yield to. When watched requests come again
// after such a quiet, the rate starts again from `initial`, and the first
// interval of a burst without a recent probe is one. Knows nothing of what
// the requests are.
//
// Why the probe: a baseline learnt in whatever interval came first is, in
// a burst, learnt under the lesser requests' own load, and then nothing is
// above the room (measured, 2026-12-02: the rate never cut while PATCH
// requests took 31 to 42 ms for 30 s; 6 to 13 ms once it was).
class LatencyGovernedRate {
 public:
  explicit LatencyGovernedRate(LatencyGovernedRateOptions options)
      : options_(options), rate_(clamp(options.initial)) {}

  // A watched request answered after `latency`.
  void observe(std::chrono::nanoseconds latency, MonotonicTime now) {
    advance(now);
    if (samples_.empty() && !probing_) {
      if (quiet_) {
        rate_ = clamp(options_.initial);  // a burst after a quiet starts as the first did
      }
      if (!lastProbe_ || now - *lastProbe_ >= options_.probeEvery) {
        // The interval starts now, so that all of it is measured held back.
        probing_ = true;
        intervalStart_ = now;
        lastProbe_ = now;
      }
    }
    quiet_ = false;
    samples_.push_back(latency);
  }

  // The rate now, intervals due closed first.
  double rate(MonotonicTime now) {
    advance(now);
    return probing_ ? clamp(options_.minimum) : rate_;
  }

  // The baseline now (zero before the first interval with requests).
  std::chrono::nanoseconds baseline() const {
    return medians_.empty() ? std::chrono::nanoseconds(0) : lowest();
  }

 private:
  void advance(MonotonicTime now) {
    if (intervalStart_ == MonotonicTime{}) {
      intervalStart_ = now;
      return;
    }
    if (now - intervalStart_ < options_.interval) {
      return;
    }
    intervalStart_ += options_.interval;
    closeInterval();
    // The intervals since, without requests (a long quiet needs no loop).
    const auto quiet = (now - intervalStart_) / options_.interval;
    if (quiet > 0) {
      quiet_ = true;
      intervalStart_ += quiet * options_.interval;
      rate_ = clamp(rate_ * std::exp2(static_cast<double>(std::min<std::int64_t>(quiet, 64))));
    }
  }

  void closeInterval() {
    const bool probe = std::exchange(probing_, false);
    if (samples_.empty()) {
      quiet_ = true;
      rate_ = clamp(rate_ * 2);
      return;
    }
    const auto middle = samples_.begin() + static_cast<std::ptrdiff_t>(samples_.size() / 2);
    std::nth_element(samples_.begin(), middle, samples_.end());
    const auto median = *middle;
    const auto count = samples_.size();
    samples_.clear();
    // Judged against the baseline before this interval joins it; a probe
    // is not judged (the rate was held), it measures.
    double gradient = 1;
    if (!probe && !medians_.empty() && std::cmp_greater_equal(count, options_.minimumSamples)) {
      const auto room =
          std::chrono::duration<double, std::nano>(lowest()) * options_.headroom + options_.slack;
      if (median > room) {
        gradient = std::max(options_.deepestCut, room / median);
      }
    }
    medians_.push_back({intervalStart_, median});
    while (intervalStart_ - medians_.front().at > options_.baselineWindow) {
      medians_.pop_front();
    }
    if (probe) {
      return;
    }
    rate_ = clamp(gradient < 1 ? rate_ * gradient : rate_ + options_.step);
  }

  std::chrono::nanoseconds lowest() const {
    auto low = medians_.front().median;
    for (const auto& m : medians_) {
      low = std::min(low, m.median);
    }
    return low;
  }

  double clamp(double rate) const {
    return std::min(std::max(rate, options_.minimum), options_.maximum);
  }

  struct Median {
    MonotonicTime at;
    std::chrono::nanoseconds median;
  };

  LatencyGovernedRateOptions options_;
  double rate_;
  MonotonicTime intervalStart_{};
  std::vector<std::chrono::nanoseconds> samples_;
  std::deque<Median> medians_;              // one an interval with requests, oldest first
  std::optional<MonotonicTime> lastProbe_;  // when the last probe began
  bool probing_ = false;
  bool quiet_ = true;  // the last interval closed had no requests (or none closed yet)
};

}  // namespace gpuplacement::runtime
