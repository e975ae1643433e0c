#include "runtime/work_queue.h"

#include <doctest/doctest.h>

#include "support/fake_clock.h"

namespace gpuplacement::runtime {

using namespace std::chrono;
using testing::FakeClock;

TEST_CASE("a key added twice before processing comes out once, in order") {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.add("a");
  queue.add("b");
  queue.add("a");
  CHECK(queue.depth() == 2);
  CHECK(queue.tryGet() == "a");
  CHECK(queue.tryGet() == "b");
  CHECK_FALSE(queue.tryGet().has_value());
}

TEST_CASE("a key being processed is never handed out again until done") {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.add("a");
  REQUIRE(queue.tryGet() == "a");
  queue.add("a");  // changed while being reconciled
  queue.add("a");
  CHECK_FALSE(queue.tryGet().has_value());  // not concurrently
  queue.done("a");
  CHECK(queue.tryGet() == "a");  // once more, after done
  queue.done("a");
  CHECK_FALSE(queue.tryGet().has_value());
}

TEST_CASE("delayed adds fall due by the clock, the earliest request wins") {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.addAfter("a", seconds(10));
  queue.addAfter("a", seconds(30));  // later: ignored
  queue.addAfter("b", seconds(5));
  CHECK_FALSE(queue.tryGet().has_value());
  REQUIRE(queue.nextDue().has_value());
  CHECK(*queue.nextDue() == clock.monotonicNow() + seconds(5));
  clock.advance(seconds(5));
  CHECK(queue.tryGet() == "b");
  CHECK_FALSE(queue.tryGet().has_value());
  clock.advance(seconds(5));
  CHECK(queue.tryGet() == "a");
  clock.advance(seconds(30));
  CHECK_FALSE(queue.tryGet().has_value());  // the 30 s request was folded into the 10 s one
  queue.addAfter("c", seconds(0));          // no delay: at once
  CHECK(queue.tryGet() == "c");
}

TEST_CASE("rate-limited adds back off exponentially per key, and forget resets") {
  FakeClock clock;
  WorkQueue<std::string> queue(clock, {milliseconds(5), seconds(1000), 1000, 1000});
  const auto retryAfter = [&](const std::string& key) {
    queue.addRateLimited(key);
    const auto due = *queue.nextDue() - clock.monotonicNow();
    clock.advance(due);
    REQUIRE(queue.tryGet() == key);
    queue.done(key);
    return duration_cast<milliseconds>(due);
  };
  CHECK(retryAfter("a") == milliseconds(5));
  CHECK(retryAfter("a") == milliseconds(10));
  CHECK(retryAfter("a") == milliseconds(20));
  CHECK(queue.retries("a") == 3);
  CHECK(retryAfter("b") == milliseconds(5));  // per key
  queue.forget("a");
  CHECK(retryAfter("a") == milliseconds(5));
  for (int i = 0; i < 40; ++i) {
    retryAfter("c");
  }
  CHECK(retryAfter("c") == seconds(1000));  // capped
}

TEST_CASE("the overall bucket limits retries of many keys") {
  FakeClock clock;
  WorkQueue<std::string> queue(clock, {milliseconds(1), seconds(1), 10, 2});  // 10/s, burst 2
  queue.addRateLimited("a");
  queue.addRateLimited("b");
  queue.addRateLimited("c");  // third within the burst window waits ~100 ms
  clock.advance(milliseconds(1));
  CHECK(queue.tryGet() == "a");
  CHECK(queue.tryGet() == "b");
  CHECK_FALSE(queue.tryGet().has_value());
  clock.advance(milliseconds(100));
  CHECK(queue.tryGet() == "c");
}

TEST_CASE("shutdown stops new work") {
  FakeClock clock;
  WorkQueue<std::string> queue(clock);
  queue.shutDown();
  queue.add("a");
  queue.addAfter("b", seconds(1));
  CHECK(queue.depth() == 0);
  CHECK(queue.delayed() == 0);
}

TEST_CASE("typed keys: one object of a kind is one key, whatever its namespace") {
  FakeClock clock;
  WorkQueue<ObjectKey> queue(clock);
  queue.add({"ml", "chat"});
  queue.add({"ml", "chat"});
  queue.add({"research", "chat"});  // same name, another namespace: another object
  queue.add({"", "default"});       // cluster-scoped
  CHECK(queue.depth() == 3);
  CHECK(queue.tryGet() == ObjectKey{"ml", "chat"});
  CHECK(queue.tryGet() == ObjectKey{"research", "chat"});
  const auto policy = queue.tryGet();
  REQUIRE(policy.has_value());
  CHECK(policy->str() == "default");
  CHECK(ObjectKey::parse("ml/chat") == ObjectKey{"ml", "chat"});
  CHECK(ObjectKey::parse("default") == ObjectKey{"", "default"});
  CHECK(ObjectKey{"ml", "chat"}.str() == "ml/chat");
}

}  // namespace gpuplacement::runtime
