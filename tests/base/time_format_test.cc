#include "base/time_format.h"

#include <doctest/doctest.h>

namespace gpuplacement::base {

using namespace std::chrono;

TEST_CASE("RFC 3339 round trip and forms Kubernetes and plugins write") {
  const Timestamp noon = sys_days(year{2026} / 11 / 22) + hours(12) + minutes(3) + seconds(4);
  CHECK(formatRfc3339(noon) == "2026-11-22T12:03:04Z");
  CHECK(*parseRfc3339("2026-11-22T12:03:04Z") == noon);
  CHECK(*parseRfc3339("2026-11-22T13:03:04+01:00") == noon);
  CHECK(*parseRfc3339("2026-11-22T11:33:04-00:30") == noon);
  CHECK(*parseRfc3339("2026-11-22T12:03:04.250000Z") == noon + milliseconds(250));
  CHECK(formatRfc3339(sys_days(year{1970} / 1 / 1)) == "1970-01-01T00:00:00Z");
  CHECK(formatRfc3339(sys_days(year{2024} / 2 / 29) + hours(23)) == "2024-02-29T23:00:00Z");
  for (const char* bad : {"", "2026-11-22", "2026-11-22T12:03:04", "2026-13-01T00:00:00Z",
                          "2026-11-22T25:00:00Z", "2026-11-22T12:03:04.Z", "2026/11/22T12:03:04Z",
                          "2026-11-22T12:03:04Zjunk", "2026-11-22T12:03:04+0100"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseRfc3339(bad).ok());
  }
}

// Regression (fuzz/regressions/exec_credential): an exec plugin's
// expirationTimestamp in 4052 overflowed the nanosecond count (UBSan).
TEST_CASE("RFC 3339 times beyond what a Timestamp holds are refused, not overflowed") {
  CHECK(parseRfc3339("2261-12-31T23:59:59Z").ok());
  CHECK(parseRfc3339("1678-01-01T00:00:00Z").ok());
  for (const char* far : {"4052-11-23T03:30:00Z", "9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z",
                          "2262-06-01T00:00:00Z"}) {
    CAPTURE(far);
    const auto parsed = parseRfc3339(far);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find("outside the years 1678 to 2261") != std::string::npos);
  }
}

TEST_CASE("Go-style durations") {
  const std::pair<const char*, milliseconds> cases[] = {
      {"90s", seconds(90)},
      {"15m", minutes(15)},
      {"1h30m", minutes(90)},
      {"500ms", milliseconds(500)},
      {"0", milliseconds(0)},
      {"1.5h", minutes(90)},
      {"2h0m10s", hours(2) + seconds(10)},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    CHECK(*parseDuration(text) == expected);
  }
  for (const char* bad : {"", "10", "-5m", "5 m", "5d", "m", "1h-5m"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseDuration(bad).ok());
  }
  CHECK(formatDuration(seconds(5400)) == "1h30m0s");
  CHECK(formatDuration(seconds(42)) == "42s");
  CHECK(formatDuration(seconds(600)) == "10m0s");
}

}  // namespace gpuplacement::base
