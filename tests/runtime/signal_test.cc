#include "runtime/signal.h"

#include <doctest/doctest.h>

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

}  // namespace gpuplacement::runtime
