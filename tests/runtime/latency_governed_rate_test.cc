// The status writes' rate yields to the placements' latency: cut in
// proportion when it rises past the room over the baseline (halved at
// most), grown by a step when it holds, doubled when nothing is placed,
// and always within its bounds. The baseline is measured in a probe, an
// interval with the rate held at its minimum: the first of a burst, and
// one every `probeEvery` while it lasts.
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
                                          .baselineWindow = seconds(60),
                                          .probeEvery = seconds(30)};

// One interval of requests answered after `latencies`, then the rate at
// the start of the next. The first of a row is the probe.
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
      {"steady latency: the probe, then a step each interval",
       {{milliseconds(8), milliseconds(9)}, {milliseconds(9)}, {milliseconds(10)}},
       30},
      {"the median far past the room (12 ms): halved at most",
       {{milliseconds(8)}, {milliseconds(60), milliseconds(70), milliseconds(5)}},
       10},
      {"a moderate rise is cut in proportion: 12 ms of room over 16",
       {{milliseconds(8)}, {milliseconds(16)}},
       15},
      {"within a quarter and 2 ms of the baseline is room: a step",
       {{milliseconds(5)}, {milliseconds(8)}},
       25},
      {"one slow request among fast ones moves no median",
       {{milliseconds(8)}, {milliseconds(9), milliseconds(900), milliseconds(8)}},
       25},
      {"no placements: nothing to yield to, doubled", {{milliseconds(8)}, {}, {}}, 80},
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
  interval(rate, clock, {milliseconds(8)});  // the probe: the baseline
  // Four slow answers: a few placements load no server.
  CHECK(interval(rate, clock, std::vector(4, milliseconds(200))) == 25);
  // Five: the room (12 ms) over 200 cuts it to the deepest, half.
  CHECK(interval(rate, clock, std::vector(5, milliseconds(200))) == 12.5);
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
  CHECK(before == 200);                       // a minute without placements
  interval(rate, clock, {milliseconds(50)});  // a probe: the last was a minute ago
  interval(rate, clock, {milliseconds(50)});
  CHECK(rate.baseline() == milliseconds(30));
  // A year without a request is one step, not 31 million.
  clock.advance(hours(24 * 365));
  CHECK(rate.rate(clock.monotonicNow()) == 200);
}

// Regression (bench/run-scale, 10,000 at 200/s, 2026-12-02): the first
// interval of the burst had the statuses going at their initial rate, its
// median became the baseline, the placements' 31 to 42 ms stayed within
// its room, and the statuses kept about 200 a second for 30 s while the
// placements queued. Now the first interval is a probe: the statuses held at their
// minimum, the baseline the placements' latency without them.
TEST_CASE("a burst's first interval measures the baseline with the rate held at its minimum") {
  FakeClock clock;
  LatencyGovernedRate rate(kOptions);
  rate.observe(milliseconds(4), clock.monotonicNow());
  CHECK(rate.rate(clock.monotonicNow()) == 1);
  clock.advance(milliseconds(500));
  rate.observe(milliseconds(4), clock.monotonicNow());
  CHECK(rate.rate(clock.monotonicNow()) == 1);
  clock.advance(milliseconds(500));
  // The probe over: the rate it started from, and a 4 ms baseline.
  CHECK(rate.rate(clock.monotonicNow()) == 20);
  CHECK(rate.baseline() == milliseconds(4));
  // With the statuses going the placements answer in 30 ms: past the room
  // of 7 ms, so halved, where a 30 ms baseline would have let it grow.
  CHECK(interval(rate, clock, {milliseconds(30), milliseconds(30)}) == 10);
}

TEST_CASE("placements after a quiet spell start again from the initial rate") {
  FakeClock clock;
  LatencyGovernedRate rate(kOptions);
  interval(rate, clock, {milliseconds(5)});  // the probe
  CHECK(interval(rate, clock, {milliseconds(5)}) == 25);
  for (int i = 0; i < 4; ++i) {
    interval(rate, clock, {});
  }
  CHECK(rate.rate(clock.monotonicNow()) == 200);  // doubled while nothing was placed
  // The next placement, 6 s after the probe: no probe, but not 200 either.
  rate.observe(milliseconds(5), clock.monotonicNow());
  CHECK(rate.rate(clock.monotonicNow()) == 20);
  clock.advance(seconds(1));
  CHECK(rate.rate(clock.monotonicNow()) == 25);
}

TEST_CASE("while placements go on, a probe every probeEvery, then the rate it held") {
  FakeClock clock;
  LatencyGovernedRate rate(kOptions);
  interval(rate, clock, {milliseconds(5)});  // the probe at 0 s
  double last = 0;
  for (int i = 0; i < 29; ++i) {
    last = interval(rate, clock, {milliseconds(5)});
  }
  CHECK(last == 165);  // 20 + 29 steps of 5
  // 30 s after the last probe: the next interval is one.
  rate.observe(milliseconds(3), clock.monotonicNow());
  CHECK(rate.rate(clock.monotonicNow()) == 1);
  clock.advance(seconds(1));
  CHECK(rate.rate(clock.monotonicNow()) == 165);
  CHECK(rate.baseline() == milliseconds(3));
}

}  // namespace gpuplacement::runtime
