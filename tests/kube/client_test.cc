// The client and the watch path over real HTTP, against a scripted server
// that injects the faults a real API server will not produce on demand.
#include "kube/client.h"

#include <boost/asio/steady_timer.hpp>
#include <doctest/doctest.h>

#include "base/json_access.h"
#include "kube/beast_transport.h"
#include "kube/list_watch_client.h"
#include "runtime/informer.h"
#include "runtime/run_sync.h"
#include "support/fake_api_server.h"

namespace gpuplacement::kube {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;
using Response = FakeApiServer::Response;
using Clock = std::chrono::steady_clock;

class CountingToken final : public CredentialSource {
 public:
  asio::awaitable<base::Result<std::string>> authorization() override {
    co_return "Bearer token-" + std::to_string(generation);
  }
  void invalidate() override { ++generation; }
  int generation = 1;
};

struct Harness {
  asio::io_context context;
  runtime::RealClock clock;
  std::unique_ptr<FakeApiServer> server;
  std::unique_ptr<KubeClient> client;
  CountingToken* token = nullptr;

  explicit Harness(FakeApiServer::Handler handler, ClientOptions options = {},
                   TransportOptions transportOptions = {}) {
    server = std::make_unique<FakeApiServer>(context, std::move(handler));
    auto transport = BeastTransport::create(context.get_executor(), *parseServerUrl(server->url()),
                                            {}, std::move(transportOptions));
    REQUIRE(transport.ok());
    auto credentials = std::make_unique<CountingToken>();
    token = credentials.get();
    options.retryBase = std::chrono::milliseconds(10);
    client = std::make_unique<KubeClient>(std::move(transport).value(), std::move(credentials),
                                          options, clock);
  }

  template <typename T>
  T run(asio::awaitable<T> task) {
    return runtime::runSync(context, std::move(task));
  }
};

Response answer(unsigned code, std::string body) {
  Response response;
  response.status = code;
  response.body = std::move(body);
  return response;
}

Response ok(json body) {
  return answer(200, body.dump());
}

Response status(unsigned code, const std::string& reason) {
  return answer(
      code,
      json{
          {"kind", "Status"}, {"code", code}, {"reason", reason}, {"message", reason + " happened"}}
          .dump());
}

}  // namespace

TEST_CASE("429 is retried after Retry-After; 503 and 504 with backoff") {
  int calls = 0;
  Harness h([&](const FakeApiServer::Request&) {
    ++calls;
    if (calls == 1) {
      auto throttled = status(429, "TooManyRequests");
      throttled.headers["Retry-After"] = "1";
      return throttled;
    }
    if (calls == 2) {
      return status(503, "ServiceUnavailable");
    }
    return ok({{"kind", "Thing"}});
  });
  const auto start = Clock::now();
  auto result = h.run(h.client->get("/apis/x/v1/things/a"));
  REQUIRE(result.ok());
  CHECK(calls == 3);
  CHECK(Clock::now() - start >= std::chrono::seconds(1));  // Retry-After honoured
}

TEST_CASE("retries give up after maxRetries with the server's Status") {
  ClientOptions options;
  options.maxRetries = 2;
  Harness h([](const FakeApiServer::Request&) { return status(503, "ServiceUnavailable"); },
            options);
  auto result = h.run(h.client->get("/apis/x/v1/things/a"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().status == 503);
  CHECK(result.error().reason == "ServiceUnavailable");
  CHECK(h.server->requests().size() == 3);
}

TEST_CASE("a dropped connection is retried for reads, never blindly for writes") {
  int calls = 0;
  Harness h([&](const FakeApiServer::Request& request) {
    ++calls;
    Response answer = ok({{"ok", true}});
    answer.dropBeforeAnswer = calls == 1 || request.method == "POST";
    return answer;
  });
  auto read = h.run(h.client->get("/apis/x/v1/things/a"));
  CHECK(read.ok());
  CHECK(calls == 2);
  auto write = h.run(h.client->create("/apis/x/v1/things", json{{"a", 1}}));
  REQUIRE_FALSE(write.ok());
  CHECK(write.error().status == 0);
  CHECK(calls == 3);  // sent once
}

TEST_CASE("401 drops the cached credential and tries once more") {
  Harness h([](const FakeApiServer::Request& request) {
    return request.authorization == "Bearer token-1" ? status(401, "Unauthorized")
                                                     : ok({{"kind", "Thing"}});
  });
  auto result = h.run(h.client->get("/apis/x/v1/things/a"));
  CHECK(result.ok());
  CHECK(h.token->generation == 2);
  CHECK(h.server->requests().back().authorization == "Bearer token-2");
}

TEST_CASE("keep-alive connections are reused; one the server closed is replaced") {
  int calls = 0;
  Harness h([&](const FakeApiServer::Request&) {
    ++calls;
    Response answer = ok({{"n", calls}});
    answer.closeAfter = calls == 3;  // the server ends this connection
    return answer;
  });
  for (int i = 0; i < 5; ++i) {
    REQUIRE(h.run(h.client->get("/apis/x/v1/things/a")).ok());
  }
  CHECK(h.server->connections() == 2);
  CHECK(h.server->requests().size() == 5);
}

TEST_CASE("a kept-alive connection idle past its TTL is closed with no request to find it") {
  TransportOptions options;
  options.idleConnectionTtl = std::chrono::seconds(1);
  Harness h([](const FakeApiServer::Request&) { return ok({}); }, {}, options);
  REQUIRE(h.run(h.client->get("/apis/x/v1/things/a")).ok());
  CHECK(h.server->open() == 1);  // kept alive for the next request
  // No request comes: the sweep closes it once its second is up (waited
  // for up to 20 s, for a loaded machine).
  const bool closed = h.run([&]() -> asio::awaitable<bool> {
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (int i = 0; i < 200 && h.server->open() > 0; ++i) {
      pause.expires_after(std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::use_awaitable);
    }
    co_return h.server->open() == 0;
  }());
  CHECK(closed);
  REQUIRE(h.run(h.client->get("/apis/x/v1/things/a")).ok());
  CHECK(h.server->connections() == 2);  // the next request opened a new one
}

TEST_CASE("the client-side QPS limit paces requests") {
  ClientOptions options;
  options.qps = 20;
  options.burst = 1;
  Harness h([](const FakeApiServer::Request&) { return ok({}); }, options);
  const auto start = Clock::now();
  for (int i = 0; i < 6; ++i) {
    REQUIRE(h.run(h.client->get("/x")).ok());
  }
  CHECK(Clock::now() - start >= std::chrono::milliseconds(240));  // 5 waits of 50 ms
}

TEST_CASE("non-JSON answers and error bodies become errors, not crashes") {
  Harness h([](const FakeApiServer::Request& request) {
    if (request.target == "/garbage") {
      return answer(200, "<html>proxy error</html>");
    }
    return answer(404, "not json at all");
  });
  auto garbage = h.run(h.client->get("/garbage"));
  REQUIRE_FALSE(garbage.ok());
  CHECK(garbage.error().reason == "InvalidResponse");
  auto missing = h.run(h.client->get("/missing"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().notFound());
  CHECK(missing.error().message == "not json at all");
}

TEST_CASE("an error answer to a watch keeps its status and the server's message") {
  Harness h([&](const FakeApiServer::Request&) { return status(403, "Forbidden"); });
  auto opened = h.run(h.client->watch("/apis/x/v1/things?watch=1", std::chrono::seconds(5)));
  REQUIRE_FALSE(opened.ok());
  CHECK(opened.error().status == 403);
  CHECK(opened.error().reason == "Forbidden");
  CHECK(opened.error().message == "Forbidden happened");
}

TEST_CASE(
    "an informer over HTTP: streaming list refused, chunked events, an in-stream 410, a dropped "
    "stream") {
  auto object = [](const std::string& name, const std::string& rv) {
    return json{{"metadata", {{"namespace", "ns"}, {"name", name}, {"resourceVersion", rv}}}};
  };
  auto event = [](const std::string& type, const json& item) {
    return json{{"type", type}, {"object", item}}.dump() + "\n";
  };
  int lists = 0;
  int watches = 0;
  int streamingLists = 0;
  std::vector<std::string> watchTargets;
  runtime::Informer<std::string>* informerPointer = nullptr;
  Harness h([&](const FakeApiServer::Request& request) {
    if (request.target.find("sendInitialEvents=true") != std::string::npos) {
      // What a server without the WatchList feature answers.
      ++streamingLists;
      CHECK(request.target.find("resourceVersionMatch=NotOlderThan") != std::string::npos);
      return status(422, "Invalid");
    }
    if (request.target.find("watch=1") == std::string::npos) {
      ++lists;
      return ok({{"items",
                  lists == 1 ? json::array({object("a", "1")}) : json::array({object("b", "30")})},
                 {"metadata", {{"resourceVersion", lists == 1 ? "10" : "40"}}}});
    }
    ++watches;
    watchTargets.push_back(request.target);
    Response stream;
    if (watches == 1) {
      // An event split across two chunks, then 410 Expired in the stream.
      const auto added = event("ADDED", object("c", "11"));
      stream.chunks = {added.substr(0, 20), added.substr(20),
                       event("ERROR", {{"kind", "Status"}, {"code", 410}, {"reason", "Expired"}})};
    } else if (watches == 2) {
      stream.chunks = {event("ADDED", object("d", "41"))};
      stream.endStream = false;  // the connection drops without the last chunk
    } else {
      informerPointer->stop();
      stream.chunks = {};
    }
    return stream;
  });
  runtime::InformerOptions options{"things",
                                   "/apis/x/v1/things",
                                   100,
                                   std::chrono::seconds(5),
                                   {std::chrono::milliseconds(1), std::chrono::milliseconds(2)}};
  KubeListWatchClient listWatch(*h.client);
  runtime::Informer<std::string> informer(
      h.context.get_executor(), listWatch, options,
      [](const json& item) { return base::stringMember(item["metadata"], "name"); }, h.clock);
  informerPointer = &informer;
  asio::co_spawn(h.context, informer.run(), asio::detached);
  h.context.run_for(std::chrono::seconds(10));
  CHECK(streamingLists == 1);  // refused once: paged lists from then on, also after the 410
  CHECK(lists == 2);
  REQUIRE(watches >= 3);
  CHECK(watchTargets[0].find("resourceVersion=10") != std::string::npos);
  CHECK(watchTargets[0].find("allowWatchBookmarks=true") != std::string::npos);
  CHECK(watchTargets[0].find("timeoutSeconds=") != std::string::npos);
  CHECK(watchTargets[1].find("resourceVersion=40") != std::string::npos);
  CHECK(watchTargets[2].find("resourceVersion=41") != std::string::npos);  // resumed, not relisted
  // a and c were dropped by the relist; b came with it, d from the watch.
  CHECK(informer.store().get("ns/a") == nullptr);
  CHECK(informer.store().get("ns/c") == nullptr);
  CHECK(informer.store().get("ns/b") != nullptr);
  CHECK(informer.store().get("ns/d") != nullptr);
}

TEST_CASE("continue tokens are percent-encoded") {
  CHECK(urlEncode("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTB9+/=") ==
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTB9%2B%2F%3D");
}

}  // namespace gpuplacement::kube
