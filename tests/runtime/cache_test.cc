#include "runtime/cache.h"

#include <algorithm>
#include <set>

#include <doctest/doctest.h>

#include "runtime/cache_set.h"
#include "support/scripted_list_watch.h"

namespace gpuplacement::runtime::cache_tests {
namespace {

using json = nlohmann::json;
using testing::ScriptedListWatch;
using Keys = std::vector<std::string>;

json object(const std::string& ns, const std::string& name, const std::string& rv, int value) {
  json metadata = {{"name", name}, {"resourceVersion", rv}};
  if (!ns.empty()) {
    metadata["namespace"] = ns;
  }
  return json{{"metadata", metadata}, {"spec", {{"value", value}}}};
}

std::string event(const std::string& type, const json& object) {
  return json{{"type", type}, {"object", object}}.dump();
}

// A streaming list of `objects`, then `changes` on the same stream.
ScriptedListWatch::WatchScript streamed(const std::vector<json>& objects,
                                        std::vector<std::string> changes = {}) {
  ScriptedListWatch::WatchScript script;
  for (const auto& item : objects) {
    script.lines.push_back(event("ADDED", item));
  }
  script.lines.push_back(testing::initialEventsEnd("100"));
  for (auto& change : changes) {
    script.lines.push_back(std::move(change));
  }
  return script;
}

int valueOf(const json& object) {
  return object["spec"].value("value", 0);
}

std::string thingsIn(const std::string& ns) {
  return ns.empty() ? "/things" : "/namespaces/" + ns + "/things";
}

// Caches over a scripted server, one script per path; each informer stops
// once its script has run out, and the test ends when all have.
struct Harness {
  asio::io_context context;
  RealClock clock;
  testing::ScriptedListWatchByPath server;
  std::vector<std::string> logged;
  CacheSet caches;
  std::set<std::string> exhausted;
  std::size_t scripted = 0;

  explicit Harness(CacheSetOptions options = {})
      : caches(context.get_executor(), server, std::move(options), clock,
               [this](const std::string& message) { logged.push_back(message); }) {}

  ScriptedListWatch& at(const std::string& path) {
    auto& script = server.paths[path];
    ++scripted;
    script.onExhausted = [this, path] {
      exhausted.insert(path);
      if (exhausted.size() == scripted) {
        caches.stop();
      }
    };
    return script;
  }

  void run() {
    caches.start();
    context.run_for(std::chrono::seconds(10));
  }
};

ResourceSpec things(bool required = true) {
  return {"things", thingsIn, true, required};
}

TEST_CASE("a cache over two namespaces finds each object through its key's namespace") {
  Harness h({{"a", "b"}});
  h.at(thingsIn("a")).streamingLists.push_back(streamed({object("a", "x", "1", 1)}));
  h.at(thingsIn("b"))
      .streamingLists.push_back(streamed({object("b", "y", "2", 2), object("b", "z", "3", 3)}));
  auto& cache = h.caches.add<int>(things(), valueOf);
  h.run();
  REQUIRE(cache.synced());
  CHECK(*cache.get("a/x") == 1);
  CHECK(*cache.get("b/y") == 2);
  CHECK(cache.get("a/y") == nullptr);  // the namespace's informer has no such object
  CHECK(cache.get("c/x") == nullptr);  // a namespace not watched
  CHECK(cache.get("x") == nullptr);    // no namespace at all
  CHECK(cache.resourceVersion("b/z") == "3");
  CHECK(cache.resourceVersion("b/missing").empty());
  CHECK(cache.size() == 3);
  Keys keys;
  cache.forEach([&](const std::string& key, int) { keys.push_back(key); });
  std::sort(keys.begin(), keys.end());
  CHECK(keys == Keys{"a/x", "b/y", "b/z"});
  // Counted per resource, over its informers.
  const auto counts = cache.counts();
  CHECK(counts.lists == 2);
  CHECK(counts.relists == 0);
  CHECK(counts.objects == 3);
  CHECK(cache.informers().size() == 2);
  CHECK(cache.unreadable().empty());
}

TEST_CASE("a cluster-scoped cache has one informer whatever namespaces are watched") {
  Harness h({{"a", "b"}});
  h.at("/things").streamingLists.push_back(streamed({object("", "n1", "1", 7)}));
  auto& cache = h.caches.add<int>({"things", thingsIn, false}, valueOf);
  h.run();
  CHECK(cache.informers().size() == 1);
  CHECK(*cache.get("n1") == 7);
}

TEST_CASE("an index files each object before any handler runs, and follows its changes") {
  Harness h;
  h.at("/things").streamingLists.push_back(
      streamed({object("ns", "a", "1", 1), object("ns", "b", "2", 2)},
               {event("MODIFIED", object("ns", "a", "11", 4)),  // odd to even
                event("MODIFIED", object("ns", "b", "12", 6)),  // even, still
                event("DELETED", object("ns", "b", "13", 6))}));
  auto& cache = h.caches.add<int>(things(), valueOf);
  const auto& parity = cache.index<std::string>([](const std::string&, int value) {
    return std::optional<std::string>(value % 2 == 0 ? "even" : "odd");
  });
  // Several keys per object: every divisor up to 3.
  const auto& divisors = cache.index<int>([](const std::string&, int value) {
    std::vector<int> keys;
    for (int d = 1; d <= 3; ++d) {
      if (value % d == 0) {
        keys.push_back(d);
      }
    }
    return keys;
  });
  std::vector<std::string> seen;
  cache.addHandler([&](const std::string& key, const int*, const int* current) {
    // The index already says what the object now is.
    const auto even = parity.of("even");
    const bool filed = std::find(even.begin(), even.end(), key) != even.end();
    seen.push_back(key + (filed ? " even" : " not even") + (current ? "" : " (gone)"));
  });
  h.run();
  std::sort(seen.begin(), seen.begin() + 2);
  CHECK(seen ==
        Keys{"ns/a not even", "ns/b even", "ns/a even", "ns/b even", "ns/b not even (gone)"});
  CHECK(parity.of("even") == Keys{"ns/a"});
  CHECK(parity.of("odd").empty());
  CHECK(parity.size() == 1);
  CHECK(divisors.of(2) == Keys{"ns/a"});
  CHECK(divisors.of(3).empty());
  CHECK(divisors.size() == 2);  // a (4) under 1 and 2
}

TEST_CASE("a tally counts what an index would file under each key, and forgets a key at none") {
  Harness h;
  h.at("/things").streamingLists.push_back(
      streamed({object("ns", "a", "1", 1), object("ns", "b", "2", 2), object("ns", "c", "3", 3)},
               {event("MODIFIED", object("ns", "a", "11", 5)),  // odd, still
                event("MODIFIED", object("ns", "b", "12", 7)),  // even to odd
                event("DELETED", object("ns", "c", "13", 3))}));
  auto& cache = h.caches.add<int>(things(), valueOf);
  const auto& parity = cache.tally<std::string>([](const std::string&, int value) {
    return std::optional<std::string>(value % 2 == 0 ? "even" : "odd");
  });
  std::vector<std::size_t> evenSeen;
  cache.addHandler(
      [&](const std::string&, const int*, const int*) { evenSeen.push_back(parity.of("even")); });
  h.run();
  // Counted before any handler runs; the list's order is the store's.
  REQUIRE(evenSeen.size() == 6);
  CHECK(evenSeen[2] == 1);
  CHECK(std::vector<std::size_t>(evenSeen.begin() + 3, evenSeen.end()) ==
        std::vector<std::size_t>{1, 0, 0});
  CHECK(parity.of("odd") == 2);
  CHECK(parity.of("even") == 0);
  CHECK(parity.of("none") == 0);
}

TEST_CASE("a refused cache says why; an optional one refused does not hold up start-up") {
  Harness h;
  h.at("/things").streamingLists.push_back({ListWatchError{403, "forbidden"}, {}, std::nullopt});
  h.at("/namespaces/ns/widgets").streamingLists.push_back(streamed({object("ns", "w", "1", 1)}));
  auto& refused = h.caches.add<int>(things(/*required=*/false), valueOf);
  auto& widgets = h.caches.add<int>(
      {"widgets", [](const std::string&) { return std::string("/namespaces/ns/widgets"); }},
      valueOf);
  // Start-up ends as the refusal comes back (well before the retry, 800 ms
  // on): what it sees then.
  bool started = false;
  std::string why;
  bool refusedSeen = false, synced = false, healthy = false;
  asio::co_spawn(
      h.context,
      [&]() -> asio::awaitable<void> {
        co_await h.caches.waitForSync();
        started = true;
        why = refused.unreadable();
        refusedSeen = refused.informers().size() == 1 && refused.informers().front().refused();
        synced = h.caches.synced();
        healthy = h.caches.healthy();
        h.caches.stop();
      },
      asio::detached);
  h.run();
  CHECK(started);
  CHECK(widgets.synced());
  CHECK_FALSE(refused.synced());
  CHECK(why == "cannot list things (HTTP 403)");
  CHECK(refusedSeen);
  CHECK(synced);   // what it cannot work without is full
  CHECK(healthy);  // refused for good is not stuck
}

TEST_CASE("the set is synced only when every required cache is; a stuck one is unhealthy") {
  CacheSetOptions fast;
  fast.backoff = {std::chrono::milliseconds(1), std::chrono::milliseconds(2)};
  Harness h(fast);
  auto& script = h.at("/things");
  for (int i = 0; i <= CacheSet::kTooManyFailures; ++i) {
    script.streamingLists.push_back({ListWatchError{503, "unavailable"}, {}, std::nullopt});
  }
  auto& cache = h.caches.add<int>(things(), valueOf);
  const ResourceSpec spec = cache.spec();
  h.run();
  CHECK(spec.resource == "things");
  CHECK_FALSE(h.caches.synced());
  CHECK(cache.unreadable() == "cannot list things (HTTP 503)");
  CHECK(cache.informers().front().consecutiveFailures > CacheSet::kTooManyFailures);
  CHECK_FALSE(h.caches.healthy());
}

TEST_CASE("a cache added while the set runs starts at once") {
  Harness h;
  h.at("/things").streamingLists.push_back(streamed({object("ns", "a", "1", 1)}));
  h.caches.start();
  auto& cache = h.caches.add<int>(things(), valueOf);
  h.context.run_for(std::chrono::seconds(10));
  CHECK(cache.synced());
  CHECK(cache.size() == 1);
}

}  // namespace
}  // namespace gpuplacement::runtime::cache_tests
