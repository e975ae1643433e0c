// A controller and its own queue in one: keys enqueued are reconciled, a
// key enqueued twice before its turn once, and stop() ends run() after the
// reconcile in flight.
#include "runtime/queued_controller.h"

#include <map>

#include <doctest/doctest.h>

namespace gpuplacement::runtime {

using namespace std::chrono;

TEST_CASE("a queued controller reconciles what is enqueued, each key once per turn") {
  asio::io_context context;
  RealClock clock;
  std::map<std::string, int> runs;
  QueuedController<ObjectKey>* self = nullptr;
  QueuedController<ObjectKey> controller(
      context.get_executor(), "widget", 2,
      [&](const ObjectKey& key) -> asio::awaitable<ReconcileResult> {
        ++runs[key.str()];
        if (runs.size() == 2 && runs["ns/b"] == 1) {
          self->stop();  // the last one: its reconcile still ends
        }
        co_return ReconcileResult::done();
      },
      clock);
  self = &controller;
  CHECK(controller.name() == "widget");
  controller.enqueue({"ns", "a"});
  controller.enqueue({"ns", "a"});  // not yet taken: one reconcile
  controller.enqueue({"ns", "b"});
  CHECK(controller.queue().depth() == 2);
  bool ended = false;
  asio::co_spawn(context, controller.run(), [&](std::exception_ptr) { ended = true; });
  context.run_for(seconds(5));
  CHECK(ended);
  CHECK(runs == std::map<std::string, int>{{"ns/a", 1}, {"ns/b", 1}});
  CHECK(controller.queue().adds() == 2);
}

}  // namespace gpuplacement::runtime
