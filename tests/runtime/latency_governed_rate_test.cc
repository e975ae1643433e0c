// The status writes' rate yields to the placements' latency: cut in
// proportion when it rises past the room over the baseline (halved at
// most), grown by a step when it holds, doubled when nothing is placed,
// and always within its bounds.
#include "runtime/latency_governed_rate.h"

#include <vector>

#include <doctest/doctest.h>

#include "support/fake_clock.h"

namespace gpuplacement::runtime {

using namespace std::chrono;
using testing::FakeClock;

namespace {

const LatencyGovernedRateOptions kOptions{.initial = 20,
                                          .minimum = 1,
                                          .maximum = 200,
                                          .step = 5,
                                          .interval = seconds(1),
                                          .headroom = 1.25,
                                          .slack = milliseconds(2),
                                          .deepestCut = 0.5,
                                          .minimumSamples = 1,
                                          .baselineWindow = seconds(60)};

// One interval of requests answered after `latencies`, then the rate at
// the start of the next.
double interval(LatencyGovernedRate& rate, FakeClock& clock,
                const std::vector<milliseconds>& latencies) {
  for (const auto latency : latencies) {
    rate.observe(latency, clock.monotonicNow());
    clock.advance(milliseconds(1));
  }
  clock.advance(seconds(1) - milliseconds(static_cast<int>(latencies.size())));
  return rate.rate(clock.monotonicNow());
}

}  // namespace

TEST_CASE("each interval moves the rate by what the latency did") {
  struct Row {
    const char* name;
    std::vector<std::vector<milliseconds>> intervals;
    double expected;
  };
  const std::vector<Row> rows = {
      {"steady latency: a step each interval",
       {{milliseconds(8), milliseconds(9)}, {milliseconds(9)}, {milliseconds(10)}},
       35},
      {"the median far past the room (12 ms): halved at most",
       {{milliseconds(8)}, {milliseconds(60), milliseconds(70), milliseconds(5)}},
       12.5},
      {"a moderate rise is cut in proportion: 12 ms of room over 16",
       {{milliseconds(8)}, {milliseconds(16)}},
       18.75},
      {"within a quarter and 2 ms of the baseline is room: a step",
       {{milliseconds(5)}, {milliseconds(8)}},
       30},
      {"one slow request among fast ones moves no median",
       {{milliseconds(8)}, {milliseconds(9), milliseconds(900), milliseconds(8)}},
       30},
      {"no placements: nothing to yield to, doubled", {{milliseconds(8)}, {}, {}}, 100},
      {"the rise lasts: halved down to the minimum, never below",
       {{milliseconds(5)},
        {milliseconds(200)},
        {milliseconds(200)},
        {milliseconds(200)},
        {milliseconds(200)},
        {milliseconds(200)},
        {milliseconds(200)}},
       1},
      {"quiet long enough: up to the maximum, never above", {{}, {}, {}, {}, {}, {}, {}}, 200},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    FakeClock clock;
    LatencyGovernedRate rate(kOptions);
    CHECK(rate.rate(clock.monotonicNow()) == 20);
    double last = 0;
    for (const auto& latencies : row.intervals) {
      last = interval(rate, clock, latencies);
    }
    CHECK(last == doctest::Approx(row.expected));
  }
}

TEST_CASE("an interval with fewer requests than the minimum is not judged") {
  FakeClock clock;
  auto options = kOptions;
  options.minimumSamples = 5;
  LatencyGovernedRate rate(options);
  interval(rate, clock, {milliseconds(8)});  // 25, and the baseline
  // Four slow answers: a few placements load no server.
  CHECK(interval(rate, clock, std::vector(4, milliseconds(200))) == 30);
  // Five: the room (12 ms) over 200 cuts it to the deepest, half.
  CHECK(interval(rate, clock, std::vector(5, milliseconds(200))) == 15);
}

TEST_CASE("the baseline is the lowest median within its window, and a quiet spell needs no loop") {
  FakeClock clock;
  LatencyGovernedRate rate(kOptions);
  interval(rate, clock, {milliseconds(5)});
  interval(rate, clock, {milliseconds(30)});
  CHECK(rate.baseline() == milliseconds(5));
  // A minute on, the 5 ms interval has left the window; the 30 ms one,
  // a second younger, has not.
  clock.advance(seconds(58));
  const double before = rate.rate(clock.monotonicNow());
  CHECK(before == 200);  // a minute without placements
  interval(rate, clock, {milliseconds(50)});
  interval(rate, clock, {milliseconds(50)});
  CHECK(rate.baseline() == milliseconds(30));
  // A year without a request is one step, not 31 million.
  clock.advance(hours(24 * 365));
  CHECK(rate.rate(clock.monotonicNow()) == 200);
}

}  // namespace gpuplacement::runtime
