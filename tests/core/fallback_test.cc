// Ordered fallback on a fake clock: a type whose pods stay unschedulable
// longer than fallbackAfter is left for retryAfter, then is a candidate again.
#include "core/plan/fallback.h"

#include <doctest/doctest.h>

namespace gpuplacement::core {
namespace {

using namespace std::chrono_literals;

const Timestamp kPlaced = *base::parseRfc3339("2026-11-22T12:00:00Z");

std::string at(std::chrono::seconds offset) {
  return base::formatRfc3339(kPlaced + offset);
}

UnavailableType left(const char* type, std::chrono::seconds since, std::chrono::seconds retry) {
  return {type, CapacityType::OnDemand, at(since), at(since + retry), "0/11 nodes are available"};
}

}  // namespace

TEST_CASE("fallback: the timeline of a type without capacity") {
  struct Case {
    const char* label;
    std::chrono::seconds now;  // since the placement
    int pending;
    std::chrono::seconds pendingSince;
    std::vector<UnavailableType> before;
    bool leaves;  // g6.xlarge is left now
    std::vector<std::string> after;
    std::optional<std::chrono::seconds> recheck;
  };
  const Case cases[] = {
      {"scheduled: nothing to do", 10min, 0, 0s, {}, false, {}, std::nullopt},
      {"pending 4 min of 5: look again at 5", 4min, 1, 0s, {}, false, {}, 1min},
      {"pending 5 min: g6.xlarge is left for 30 min", 5min, 1, 0s, {}, true, {"g6.xlarge"}, 30min},
      {"pods older than the placement count from the placement",
       4min,
       1,
       -10min,
       {},
       false,
       {},
       1min},
      {"left already: not again",
       20min,
       1,
       0s,
       {left("g6.xlarge", 5min, 30min)},
       false,
       {"g6.xlarge"},
       15min},
      {"the next type waits too, both listed",
       12min,
       2,
       6min,
       {left("g6.xlarge", -1min, 30min)},
       true,
       {"g5.xlarge", "g6.xlarge"},
       17min},
      {"retry time passed: a candidate again",
       36min,
       0,
       0s,
       {left("g6.xlarge", 5min, 30min)},
       false,
       {},
       std::nullopt},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    FallbackInput input;
    const bool second = std::string(c.label).find("next type") != std::string::npos;
    input.instanceType = second ? "g5.xlarge" : "g6.xlarge";
    input.placedAt = kPlaced;
    input.pendingCount = c.pending;
    input.pendingMessage = "0/11 nodes are available: 11 Insufficient nvidia.com/gpu";
    input.pendingSince = kPlaced + c.pendingSince;
    input.unavailable = c.before;
    input.now = kPlaced + c.now;
    const auto step = fallbackStep(input);
    CHECK(step.left.has_value() == c.leaves);
    if (step.left) {
      CHECK(step.left->instanceType == input.instanceType);
      CHECK(step.left->until == at(c.now + 30min));
      CHECK(step.left->message == input.pendingMessage);
    }
    std::vector<std::string> after;
    for (const auto& entry : step.unavailable) {
      after.push_back(entry.instanceType);
    }
    std::sort(after.begin(), after.end());
    CHECK(after == c.after);
    CHECK(step.recheckAfter == c.recheck);
  }
}

TEST_CASE("fallback: after the retry time, a type whose nodes are still full stays left") {
  FallbackInput input;
  input.instanceType = "g5.xlarge";
  input.placedAt = kPlaced + 6min;
  input.unavailable = {left("g6.xlarge", 5min, 30min)};
  input.now = kPlaced + 36min;
  input.settings.retryAfter = 30min;
  for (const bool room : {false, true}) {
    CAPTURE(room);
    input.roomFor = [room](const std::string& type, CapacityType) {
      CHECK(type == "g6.xlarge");
      return room;
    };
    const auto step = fallbackStep(input);
    CHECK_FALSE(step.left);
    if (room) {
      CHECK(step.unavailable.empty());
      CHECK_FALSE(step.recheckAfter);
    } else {
      REQUIRE(step.unavailable.size() == 1);
      CHECK(step.unavailable[0].until == at(66min));
      CHECK(step.unavailable[0].since == at(5min));
      CHECK(step.recheckAfter == 30min);
    }
  }
}

TEST_CASE("fallback: what was tried, in one line") {
  const std::vector<UnavailableType> tried = {left("g6.xlarge", 0s, 30min),
                                              left("g5.xlarge", 5min, 30min)};
  CHECK(describeTried(tried) ==
        "g6.xlarge on-demand until 2026-11-22T12:30:00Z, g5.xlarge on-demand until "
        "2026-11-22T12:35:00Z");
  CHECK(isUnavailable(tried, "g5.xlarge", CapacityType::OnDemand));
  CHECK_FALSE(isUnavailable(tried, "g5.xlarge", CapacityType::Spot));
}

}  // namespace gpuplacement::core
