#include "runtime/informer.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <variant>

#include <doctest/doctest.h>

#include "support/scripted_list_watch.h"

namespace gpuplacement::runtime {
namespace {

using json = nlohmann::json;

json object(const std::string& name, const std::string& rv, int value = 0) {
  return json{{"metadata", {{"namespace", "ns"}, {"name", name}, {"resourceVersion", rv}}},
              {"spec", {{"value", value}}}};
}

std::string event(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump();
}

using testing::page;
using testing::ScriptedListWatch;

std::string bookmark(const std::string& rv, bool endOfList = false) {
  if (endOfList) {
    return testing::initialEventsEnd(rv);
  }
  return json{{"type", "BOOKMARK"}, {"object", {{"metadata", {{"resourceVersion", rv}}}}}}.dump();
}

enum class Lists { Paged, Streaming };

struct Harness {
  asio::io_context context;
  RealClock clock;
  ScriptedListWatch server;
  InformerOptions options;
  Informer<int> informer{context.get_executor(), server, options,
                         [](const json& object) { return object["spec"].value("value", 0); },
                         clock};
  std::vector<std::string> changes;

  explicit Harness(Lists lists = Lists::Paged)
      : options{"things",
                "/apis/x/v1/things",
                2,
                std::chrono::seconds(1),
                WatchState::Backoff{std::chrono::milliseconds(1), std::chrono::milliseconds(2)},
                lists == Lists::Streaming} {
    server.onExhausted = [this] { informer.stop(); };
    informer.addHandler([this](const std::string& key, const int* previous, const int* current) {
      changes.push_back(std::string(previous ? "update " : "add ") + key + "=" +
                        (current ? std::to_string(*current) : "deleted"));
      if (!current) {
        changes.back() = "delete " + key;
      }
    });
  }

  void run() {
    asio::co_spawn(context, informer.run(), asio::detached);
    context.run();
  }
};

}  // namespace

TEST_CASE("paged list, then a watch: adds, updates, deletes, bookmarks, resume") {
  Harness h;
  h.server.lists.push_back(page({object("a", "1", 1), object("b", "2", 2)}, "", "page-2"));
  h.server.lists.push_back(page({object("c", "3", 3)}, "10"));
  h.server.watches.push_back(
      {std::nullopt,
       {event("ADDED", object("d", "11", 4)), event("MODIFIED", object("a", "12", 10)),
        event("DELETED", object("b", "13")),
        json{{"type", "BOOKMARK"}, {"object", {{"metadata", {{"resourceVersion", "20"}}}}}}.dump()},
       std::nullopt});
  h.run();
  CHECK(h.server.listCalls == std::vector<std::string>{"", "page-2"});
  // The first watch starts at the list's rv; after the server ends it, the
  // next resumes at the bookmark's.
  REQUIRE(h.server.watchCalls.size() == 2);
  CHECK(h.server.watchCalls[0] == "10");
  CHECK(h.server.watchCalls[1] == "20");
  CHECK(h.informer.synced());
  CHECK(h.informer.store().size() == 3);
  CHECK(*h.informer.store().get("ns/a") == 10);
  CHECK(h.informer.store().get("ns/b") == nullptr);
  CHECK(*h.informer.store().get("ns/d") == 4);
  // A list's objects arrive in no particular order; watch events in order.
  std::sort(h.changes.begin(), h.changes.begin() + 3);
  CHECK(h.changes == std::vector<std::string>{"add ns/a=1", "add ns/b=2", "add ns/c=3",
                                              "add ns/d=4", "update ns/a=10", "delete ns/b"});
  // Watch events read: the three changes, not the bookmark nor the list's objects.
  CHECK(h.informer.events() == 3);
}

TEST_CASE("410 in the stream: list again, drop what is gone, keep what is unchanged") {
  Harness h;
  h.server.lists.push_back(page({object("a", "1", 1), object("b", "2", 2)}, "10"));
  h.server.watches.push_back({std::nullopt,
                              {event("MODIFIED", object("a", "11", 5)),
                               json{{"type", "ERROR"},
                                    {"object",
                                     {{"kind", "Status"},
                                      {"code", 410},
                                      {"reason", "Expired"},
                                      {"message", "too old resource version: 10 (50)"}}}}
                                   .dump()},
                              std::nullopt});
  // The new list: b was deleted while we were not looking, a is as we have
  // it, c is new.
  h.server.lists.push_back(page({object("a", "11", 5), object("c", "40", 3)}, "50"));
  h.run();
  CHECK(h.informer.state().expirations() == 1);
  CHECK(h.informer.state().lists() == 2);
  CHECK(h.server.watchCalls.at(1) == "50");
  CHECK(h.informer.store().get("ns/b") == nullptr);
  std::sort(h.changes.begin(), h.changes.begin() + 2);
  CHECK(h.changes == std::vector<std::string>{"add ns/a=1", "add ns/b=2", "update ns/a=5",
                                              "delete ns/b", "add ns/c=3"});
}

TEST_CASE("410 as the watch's HTTP answer also lists again") {
  Harness h;
  h.server.lists.push_back(page({object("a", "1", 1)}, "10"));
  h.server.watches.push_back({ListWatchError{410, "Gone"}, {}, std::nullopt});
  h.server.lists.push_back(page({object("a", "1", 1)}, "60"));
  h.run();
  CHECK(h.informer.state().lists() == 2);
  CHECK(h.server.watchCalls.at(1) == "60");
  CHECK(h.changes == std::vector<std::string>{"add ns/a=1"});  // unchanged: no notification
}

TEST_CASE("garbage and broken streams restart the watch from the last good point") {
  Harness h;
  h.server.lists.push_back(page({}, "10"));
  h.server.watches.push_back(
      {std::nullopt, {event("ADDED", object("a", "11", 1)), "{not json"}, std::nullopt});
  h.server.watches.push_back({std::nullopt,
                              {event("ADDED", object("b", "12", 2))},
                              ListWatchError{0, "connection reset"}});
  h.server.watches.push_back({ListWatchError{500, "internal error"}, {}, std::nullopt});
  h.server.watches.push_back(
      {std::nullopt, {json{{"type", "ADDED"}, {"object", "not an object"}}.dump()}, std::nullopt});
  h.run();
  CHECK(h.server.watchCalls == std::vector<std::string>{"10", "11", "12", "12", "12"});
  CHECK(h.informer.state().lists() == 1);  // never a needless relist
  CHECK(h.informer.store().size() == 2);
}

TEST_CASE("a failed initial list is retried; sync waits for it") {
  Harness h;
  h.server.lists.push_back(ListWatchError{503, "unavailable"});
  h.server.lists.push_back(ListWatchError{0, "connection refused"});
  h.server.lists.push_back(page({object("a", "1", 1)}, "10"));
  bool syncedSeen = false;
  asio::co_spawn(
      h.context,
      [&]() -> asio::awaitable<void> {
        co_await h.informer.waitForSync();
        syncedSeen = h.informer.store().size() == 1;
      },
      asio::detached);
  h.run();
  CHECK(syncedSeen);
  CHECK(h.server.listCalls.size() == 3);
}

TEST_CASE("streaming list: the objects, the end bookmark, then the same stream is the watch") {
  Harness h(Lists::Streaming);
  h.server.streamingLists.push_back(
      {std::nullopt,
       {event("ADDED", object("a", "5", 1)), bookmark("6"), event("ADDED", object("b", "3", 2)),
        bookmark("10", /*endOfList=*/true), event("MODIFIED", object("a", "11", 7)),
        event("DELETED", object("b", "12"))},
       std::nullopt});
  bool woken = false;
  asio::co_spawn(
      h.context,
      [&]() -> asio::awaitable<void> {
        co_await h.informer.waitForSync();
        woken = h.informer.synced();
      },
      asio::detached);
  h.run();
  CHECK(woken);
  CHECK(h.server.streamingListCalls == 1);
  CHECK(h.server.listCalls.empty());
  // The server ended the stream: the watch resumes after the last event.
  CHECK(h.server.watchCalls == std::vector<std::string>{"12"});
  CHECK(h.informer.state().lists() == 1);
  std::sort(h.changes.begin(), h.changes.begin() + 2);
  CHECK(h.changes ==
        std::vector<std::string>{"add ns/a=1", "add ns/b=2", "update ns/a=7", "delete ns/b"});
}

TEST_CASE("a streaming list broken before its end starts over; nothing half-listed is kept") {
  Harness h(Lists::Streaming);
  h.server.streamingLists.push_back(
      {std::nullopt, {event("ADDED", object("a", "5", 1))}, ListWatchError{0, "connection reset"}});
  h.server.streamingLists.push_back({ListWatchError{503, "unavailable"}, {}, std::nullopt});
  h.server.streamingLists.push_back(
      {std::nullopt,
       {event("ADDED", object("b", "3", 2)), bookmark("20", /*endOfList=*/true),
        json{{"type", "ERROR"}, {"object", {{"kind", "Status"}, {"code", 410}}}}.dump()},
       std::nullopt});
  // After the 410 the informer lists again, still streaming.
  h.server.streamingLists.push_back(
      {std::nullopt,
       {event("ADDED", object("b", "3", 2)), event("ADDED", object("c", "30", 3)),
        bookmark("40", /*endOfList=*/true)},
       std::nullopt});
  h.run();
  CHECK(h.server.streamingListCalls == 4);
  CHECK(h.server.listCalls.empty());
  CHECK(h.server.watchCalls == std::vector<std::string>{"40"});
  CHECK(h.informer.state().lists() == 2);
  CHECK(h.informer.store().get("ns/a") == nullptr);
  CHECK(h.changes == std::vector<std::string>{"add ns/b=2", "add ns/c=3"});
}

TEST_CASE("an object deleted while a streaming list arrives is not kept") {
  Harness h(Lists::Streaming);
  h.server.streamingLists.push_back(
      {std::nullopt,
       {event("ADDED", object("a", "5", 1)), event("ADDED", object("b", "6", 2)),
        event("DELETED", object("a", "7")), bookmark("8", /*endOfList=*/true)},
       std::nullopt});
  h.run();
  CHECK(h.informer.synced());
  CHECK(h.informer.store().get("ns/a") == nullptr);
  CHECK(h.changes == std::vector<std::string>{"add ns/b=2"});
}

TEST_CASE("streaming lists refused (422): paged lists for good; ended early: one paged list") {
  SUBCASE("refused") {
    Harness h(Lists::Streaming);
    h.server.streamingLists.push_back({ListWatchError{422, "Invalid"}, {}, std::nullopt});
    h.server.lists.push_back(page({object("a", "1", 1)}, "10"));
    h.run();
    CHECK(h.server.streamingListCalls == 1);
    CHECK(h.server.listCalls == std::vector<std::string>{""});
    CHECK(h.server.watchCalls == std::vector<std::string>{"10"});
    CHECK_FALSE(h.informer.state().streamingLists());
    CHECK(h.changes == std::vector<std::string>{"add ns/a=1"});
  }
  SUBCASE("ended with no end bookmark (a plain bookmark does not count)") {
    Harness h(Lists::Streaming);
    h.server.streamingLists.push_back(
        {std::nullopt, {event("ADDED", object("z", "9", 9)), bookmark("8")}, std::nullopt});
    h.server.lists.push_back(page({object("a", "1", 1)}, "10"));
    // A 410 later: the relist streams again.
    h.server.watches.push_back(
        {std::nullopt,
         {json{{"type", "ERROR"}, {"object", {{"kind", "Status"}, {"code", 410}}}}.dump()},
         std::nullopt});
    h.server.streamingLists.push_back(
        {std::nullopt,
         {event("ADDED", object("a", "1", 1)), bookmark("30", /*endOfList=*/true)},
         std::nullopt});
    h.run();
    CHECK(h.server.streamingListCalls == 2);
    CHECK(h.server.listCalls == std::vector<std::string>{""});
    CHECK(h.server.watchCalls == std::vector<std::string>{"10", "30"});
    CHECK(h.informer.state().streamingLists());
    CHECK(h.informer.state().lists() == 2);
    CHECK(h.informer.store().get("ns/z") == nullptr);
    CHECK(h.changes == std::vector<std::string>{"add ns/a=1"});
  }
}

}  // namespace gpuplacement::runtime
