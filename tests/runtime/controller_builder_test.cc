#include "runtime/controller_builder.h"

#include <set>

#include <doctest/doctest.h>

#include "runtime/cache_set.h"
#include "runtime/event_source.h"
#include "support/scripted_list_watch.h"

namespace gpuplacement::runtime::builder_tests {
namespace {

using json = nlohmann::json;
using Keys = std::set<std::string>;

std::string added(const std::string& name, int value) {
  return json{{"type", "ADDED"},
              {"object",
               {{"metadata", {{"namespace", "ns"}, {"name", name}, {"resourceVersion", "1"}}},
                {"spec", {{"value", value}}}}}}
      .dump();
}

bool odd(const int*, const int* current) {
  return current && *current % 2 == 1;
}

TEST_CASE("one expression wires a controller: its kind, a watch through a map, its workers") {
  asio::io_context context;
  RealClock clock;
  testing::ScriptedListWatch server;
  CacheSet caches(context.get_executor(), server, {}, clock, {});
  server.streamingLists.push_back(
      {std::nullopt,
       {added("a", 1), added("b", 2), added("c", 5), testing::initialEventsEnd("9")},
       std::nullopt});
  server.onExhausted = [&] { caches.stop(); };
  auto& widgets =
      caches.add<int>({"widgets", [](const std::string&) { return std::string("/widgets"); }},
                      [](const json& object) { return object["spec"].value("value", 0); });
  EventSource<const std::string&> renamed;

  std::vector<std::string> told;
  ControllerSet controllers(context.get_executor(), clock, [&](QueuedController<ObjectKey>& each) {
    told.push_back(each.name());
  });
  Keys reconciled;
  int workersSeen = 0;
  int inFlight = 0;
  QueuedController<ObjectKey>* self = nullptr;
  auto& controller = ControllerBuilder(controllers, "widget")
                         .forKind(widgets, odd)
                         .watches(renamed,
                                  [](const std::string& name) {
                                    // A change that names no object, then one that names two.
                                    return name.empty()
                                               ? std::vector<std::string>{}
                                               : std::vector<std::string>{"ns/" + name, "ns/d"};
                                  })
                         .workers(2)
                         .complete([&](const ObjectKey& key) -> asio::awaitable<ReconcileResult> {
                           workersSeen = std::max(workersSeen, ++inFlight);
                           asio::steady_timer pause(co_await asio::this_coro::executor,
                                                    std::chrono::milliseconds(20));
                           co_await pause.async_wait(asio::use_awaitable);
                           reconciled.insert(key.str());
                           --inFlight;
                           if (self->queue().depth() == 0 && inFlight == 0) {
                             controllers.stop();
                           }
                           co_return ReconcileResult::done();
                         });
  self = &controller;
  CHECK(told == std::vector<std::string>{"widget"});
  CHECK(controllers.size() == 1);

  // The cache fills: its handlers enqueue (the controller is not running).
  caches.start();
  context.run_for(std::chrono::seconds(5));
  REQUIRE(widgets.synced());
  renamed.notify("");
  renamed.notify("e");
  CHECK(controller.queue().depth() == 4);  // a and c (odd), e and d

  bool ended = false;
  asio::co_spawn(context, controllers.run(), [&](std::exception_ptr) { ended = true; });
  context.restart();
  context.run_for(std::chrono::seconds(5));
  CHECK(ended);
  CHECK(reconciled == Keys{"ns/a", "ns/c", "ns/d", "ns/e"});
  CHECK(workersSeen == 2);
}

}  // namespace
}  // namespace gpuplacement::runtime::builder_tests
