#include "runtime/controller.h"

#include <map>
#include <set>

#include <doctest/doctest.h>

namespace gpuplacement::runtime {

using namespace std::chrono;

TEST_CASE("workers reconcile every key, never one key twice at once") {
  asio::io_context context;
  RealClock clock;
  WorkQueue<std::string> queue(clock, {milliseconds(1), milliseconds(10), 1000, 1000});
  AsyncWorkQueue<std::string> async(queue);
  std::set<std::string> busy;
  std::map<std::string, int> runs;
  bool overlapped = false;
  int concurrentMax = 0;
  int concurrent = 0;

  Controller<std::string> controller(
      context.get_executor(), async, 4,
      [&](const std::string& key) -> asio::awaitable<ReconcileResult> {
        overlapped = overlapped || busy.count(key) > 0;
        busy.insert(key);
        concurrentMax = std::max(concurrentMax, ++concurrent);
        // Re-adding the key mid-reconcile must not start a second one now.
        async.add(key);
        asio::steady_timer pause(co_await asio::this_coro::executor, milliseconds(2));
        co_await pause.async_wait(asio::use_awaitable);
        busy.erase(key);
        --concurrent;
        if (++runs[key] == 3) {
          co_return ReconcileResult::done();
        }
        if (key == "flaky" && runs[key] == 1) {
          co_return ReconcileResult::error("transient");
        }
        co_return ReconcileResult::done();
      },
      clock);
  std::vector<ReconcileRecord> records;
  controller.setObserver([&](const ReconcileRecord& record) { records.push_back(record); });

  for (const char* key : {"a", "b", "c", "flaky"}) {
    async.add(key);
  }
  asio::steady_timer stop(context, milliseconds(300));
  stop.async_wait([&](auto) { async.shutDown(); });
  asio::co_spawn(context, controller.run(), asio::detached);
  context.run();

  CHECK_FALSE(overlapped);
  CHECK(concurrentMax > 1);  // the workers did run side by side
  for (const char* key : {"a", "b", "c", "flaky"}) {
    CAPTURE(std::string(key));
    CHECK(runs[key] >= 2);  // added again while running: reconciled again after
  }
  bool sawError = false;
  for (const auto& record : records) {
    sawError = sawError || record.outcome == ReconcileResult::Outcome::Error;  // only "flaky"
  }
  CHECK(sawError);
  CHECK(controller.inFlight() == 0);
}

TEST_CASE("requeueAfter comes back after the delay; shutdown lets in-flight work finish") {
  asio::io_context context;
  RealClock clock;
  WorkQueue<std::string> queue(clock);
  AsyncWorkQueue<std::string> async(queue);
  std::vector<steady_clock::time_point> runs;
  bool finishedAfterShutdown = false;
  Controller<std::string> controller(
      context.get_executor(), async, 2,
      [&](const std::string&) -> asio::awaitable<ReconcileResult> {
        runs.push_back(steady_clock::now());
        if (runs.size() == 2) {
          async.shutDown();  // SIGTERM arrives mid-reconcile
          asio::steady_timer pause(co_await asio::this_coro::executor, milliseconds(20));
          co_await pause.async_wait(asio::use_awaitable);
          finishedAfterShutdown = true;
          co_return ReconcileResult::done();
        }
        co_return ReconcileResult::requeue(milliseconds(50));
      },
      clock);
  async.add("a");
  asio::co_spawn(context, controller.run(), asio::detached);
  context.run();
  REQUIRE(runs.size() == 2);
  CHECK(runs[1] - runs[0] >= milliseconds(50));
  CHECK(finishedAfterShutdown);
}

}  // namespace gpuplacement::runtime
