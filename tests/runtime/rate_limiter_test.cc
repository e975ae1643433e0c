#include "runtime/rate_limiter.h"

#include <string>

#include <doctest/doctest.h>

#include "support/fake_clock.h"

namespace gpuplacement::runtime {

using namespace std::chrono;
using testing::FakeClock;

TEST_CASE("TokenBucket allows a burst, then paces at the rate") {
  FakeClock clock;
  TokenBucket bucket(10, 3);  // 10 per second, burst 3
  for (int i = 0; i < 3; ++i) {
    CHECK(bucket.reserve(clock.monotonicNow()) == nanoseconds(0));
  }
  // The fourth and fifth wait one and two refill intervals.
  CHECK(bucket.reserve(clock.monotonicNow()) == milliseconds(100));
  CHECK(bucket.reserve(clock.monotonicNow()) == milliseconds(200));
  // After the debt is repaid and a full second passes, the burst is back.
  clock.advance(seconds(2));
  for (int i = 0; i < 3; ++i) {
    CHECK(bucket.reserve(clock.monotonicNow()) == nanoseconds(0));
  }
  CHECK(bucket.reserve(clock.monotonicNow()) > nanoseconds(0));
}

TEST_CASE("TokenBucket keeps what it earned when its rate changes, up to the new burst") {
  FakeClock clock;
  TokenBucket bucket(10, 10);
  for (int i = 0; i < 10; ++i) {
    bucket.reserve(clock.monotonicNow());
  }
  // 0.5 s at 10 a second earns 5; a burst of 2 keeps 2 of them, and the
  // debt after is paid at the new rate: 1 a second.
  clock.advance(milliseconds(500));
  bucket.setRate(1, 2, clock.monotonicNow());
  CHECK(bucket.reserve(clock.monotonicNow()) == nanoseconds(0));
  CHECK(bucket.reserve(clock.monotonicNow()) == nanoseconds(0));
  CHECK(bucket.reserve(clock.monotonicNow()) == seconds(1));
}

TEST_CASE("TokenBucket with no rate never waits") {
  FakeClock clock;
  TokenBucket bucket(0, 1);
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(bucket.reserve(clock.monotonicNow()) == nanoseconds(0));
  }
}

TEST_CASE("ItemBackoff doubles per failure up to the cap, per key") {
  ItemBackoff<std::string> backoff(milliseconds(5), seconds(1));
  CHECK(backoff.next("a") == milliseconds(5));
  CHECK(backoff.next("a") == milliseconds(10));
  CHECK(backoff.next("a") == milliseconds(20));
  CHECK(backoff.next("b") == milliseconds(5));
  CHECK(backoff.failures("a") == 3);
  for (int i = 0; i < 100; ++i) {
    backoff.next("a");
  }
  CHECK(backoff.next("a") == seconds(1));
  backoff.forget("a");
  CHECK(backoff.failures("a") == 0);
  CHECK(backoff.next("a") == milliseconds(5));
}

}  // namespace gpuplacement::runtime
