#include "runtime/signal.h"

#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "runtime/async_work_queue.h"
#include "support/fake_clock.h"

namespace gpuplacement::runtime {

using namespace std::chrono;

namespace {

// Runs `body` on a fresh event loop until it and everything it spawned end.
template <typename Body>
void runLoop(Body body) {
  asio::io_context context;
  asio::co_spawn(context, body(context), asio::detached);
  context.run();
}

}  // namespace

TEST_CASE("a waiter wakes when notified, not before") {
  Signal signal;
  std::vector<std::string> order;
  runLoop([&](asio::io_context& context) -> asio::awaitable<void> {
    asio::co_spawn(
        context,
        [&]() -> asio::awaitable<void> {
          const bool notified = co_await signal.wait();
          order.push_back(notified ? "woken" : "timed out");
        },
        asio::detached);
    asio::steady_timer pause(context, milliseconds(20));
    co_await pause.async_wait(asio::use_awaitable);
    order.push_back("notify");
    CHECK(signal.waiting() == 1);
    signal.notifyOne();
  });
  CHECK(order == std::vector<std::string>{"notify", "woken"});
  CHECK(signal.waiting() == 0);
}

TEST_CASE("a deadline ends the wait without a notification") {
  Signal signal;
  bool notified = true;
  const auto start = steady_clock::now();
  runLoop([&](asio::io_context&) -> asio::awaitable<void> {
    notified = co_await signal.waitFor(milliseconds(30));
  });
  CHECK_FALSE(notified);
  CHECK(steady_clock::now() - start >= milliseconds(30));
  CHECK(signal.waiting() == 0);  // the timed-out waiter is no longer listed
}

TEST_CASE("notifyOne wakes the longest waiter only; notifyAll wakes the rest") {
  Signal signal;
  std::vector<int> woken;
  runLoop([&](asio::io_context& context) -> asio::awaitable<void> {
    for (int i = 0; i < 3; ++i) {
      asio::co_spawn(
          context,
          [&, i]() -> asio::awaitable<void> {
            co_await signal.wait();
            woken.push_back(i);
          },
          asio::detached);
    }
    asio::steady_timer pause(context, milliseconds(10));
    co_await pause.async_wait(asio::use_awaitable);
    signal.notifyOne();
    co_await pause.async_wait(asio::use_awaitable);  // already expired: lets the loop turn
    pause.expires_after(milliseconds(10));
    co_await pause.async_wait(asio::use_awaitable);
    CHECK(woken == std::vector<int>{0});
    signal.notifyAll();
  });
  CHECK(woken == std::vector<int>{0, 1, 2});
}

TEST_CASE("on a fake clock a deadline passes when the clock is moved past it, not before") {
  testing::FakeClock clock;
  Signal signal(clock);
  std::vector<std::string> order;
  asio::io_context context;
  asio::co_spawn(
      context,
      [&]() -> asio::awaitable<void> {
        const bool notified = co_await signal.waitFor(minutes(5));
        order.push_back(notified ? "woken" : "deadline");
      },
      asio::detached);
  context.run_for(milliseconds(50));  // real time passes: no deadline
  CHECK(order.empty());
  clock.advance(minutes(4));  // short of it: it sleeps again
  context.run_for(milliseconds(50));
  CHECK(order.empty());
  CHECK(signal.waiting() == 1);
  clock.advance(minutes(1));
  context.run_for(milliseconds(50));
  CHECK(order == std::vector<std::string>{"deadline"});
  CHECK(signal.waiting() == 0);
}

TEST_CASE("on a fake clock a notification still wakes the waiter, and says so") {
  testing::FakeClock clock;
  Signal signal(clock);
  std::optional<bool> notified;
  asio::io_context context;
  asio::co_spawn(
      context, [&]() -> asio::awaitable<void> { notified = co_await signal.waitFor(hours(1)); },
      asio::detached);
  context.run_for(milliseconds(20));
  clock.advance(minutes(1));  // a clock move is not a notification
  context.run_for(milliseconds(20));
  CHECK_FALSE(notified.has_value());
  signal.notifyOne();
  context.run_for(milliseconds(20));
  CHECK(notified == true);
}

TEST_CASE("a work queue's delayed key reaches a waiting worker when the fake clock passes it") {
  testing::FakeClock clock;
  WorkQueue<std::string> queue(clock);
  AsyncWorkQueue<std::string> async(queue);
  std::vector<std::string> got;
  asio::io_context context;
  asio::co_spawn(
      context,
      [&]() -> asio::awaitable<void> {
        while (auto key = co_await async.get()) {
          got.push_back(*key);
          async.done(*key);
        }
      },
      asio::detached);
  async.addAfter("later", minutes(10));
  async.addAfter("sooner", minutes(2));
  context.run_for(milliseconds(50));
  CHECK(got.empty());
  clock.advance(minutes(3));
  context.run_for(milliseconds(50));
  CHECK(got == std::vector<std::string>{"sooner"});
  clock.advance(minutes(7));
  context.run_for(milliseconds(50));
  CHECK(got == std::vector<std::string>{"sooner", "later"});
  async.shutDown();
  context.run_for(milliseconds(50));
  CHECK(context.stopped());  // the worker has ended
}

}  // namespace gpuplacement::runtime
