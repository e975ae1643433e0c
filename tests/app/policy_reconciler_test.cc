// The policy reconciler sharing a policy's prices with Karpenter, on the
// event loop as the manager runs it: its caches filled by a scripted
// list/watch (NodeOverlays served), its writes answered by a scripted
// server, which also gives the refusal a real API server gives only to a
// Role without the verb. Creating, patching and deleting against a real
// API server and Karpenter: tests/e2e/node_overlays_test.cc.
#include "app/policy_reconciler.h"

#include <doctest/doctest.h>

#include "app/event_recorder.h"
#include "app/resource_paths.h"
#include "support/engine_fixture.h"
#include "support/fake_clock.h"
#include "support/scripted_caches.h"
#include "support/scripted_writes.h"

namespace gpuplacement::app::policy_reconciler_tests {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

const std::string kShared = "gpu-placement.default.g6e.xlarge.on-demand";

json policy() {
  return {{"apiVersion", "gpuplacement.io/v1alpha1"},
          {"kind", "PlacementPolicy"},
          {"metadata",
           {{"name", "default"}, {"uid", "p-1"}, {"generation", 2}, {"resourceVersion", "3"}}},
          {"spec",
           {{"prices", json::array({{{"instanceType", "g6e.xlarge"}, {"onDemand", "0.45"}}})},
            {"priceSharing", "NodeOverlay"}}}};
}

// The operator's overlay for a price the policy no longer sets.
json staleOverlay() {
  return {{"apiVersion", "karpenter.sh/v1alpha1"},
          {"kind", "NodeOverlay"},
          {"metadata",
           {{"name", "gpu-placement.default.g5.xlarge.on-demand"},
            {"resourceVersion", "4"},
            {"labels", {{"gpuplacement.io/prices-of", "default"}}}}},
          {"spec", {{"price", "0.8"}, {"weight", 1000}}}};
}

// Each write to NodeOverlays answered `status` (2xx: as stored); the
// policy's status written back as sent.
FakeApiServer::Handler answering(int status) {
  return [status](const FakeApiServer::Request& request) {
    FakeApiServer::Response response;
    if (request.target.find("/nodeoverlays") != std::string::npos) {
      response.status = status;
      response.body = status < 300 ? (request.body.empty() ? json::object().dump() : request.body)
                                   : json{{"kind", "Status"},
                                          {"code", status},
                                          {"reason", "Forbidden"},
                                          {"message", "nodeoverlays is forbidden"}}
                                         .dump();
    } else {
      response.body = policy().dump();
    }
    return response;
  };
}

struct Run {
  testing::FakeClock clock;
  testing::ScriptedWrites rig;
  testing::ScriptedListWatchByPath lists;
  ObjectCaches caches;
  PolicyEngines engines;
  EventRecorder events;
  runtime::ControllerSet controllers;
  WorkloadReconciler workloads;
  PolicyReconciler policies;

  explicit Run(int overlayStatus)
      : rig(answering(overlayStatus)),
        lists(testing::scriptedCaches(
            {{policiesPath(), {policy()}}, {nodeOverlaysPath(), {staleOverlay()}}})),
        caches(rig.context.get_executor(), lists, *testing::shippedCatalog(),
               *testing::shippedRules(), CacheOptions{}, rig.logger, clock),
        engines(testing::shippedCatalog(), testing::shippedRules()),
        events(*rig.writes, rig.logger, rig.metrics, clock),
        controllers(rig.context.get_executor(), clock),
        workloads(controllers, caches, engines, *rig.writes, events, WorkloadReconcilerOptions{},
                  rig.logger, rig.metrics, clock),
        policies(controllers, caches, engines, *rig.writes, workloads, rig.logger, clock) {
    caches.enableNodeOverlays();
    asio::co_spawn(rig.context, caches.run(), asio::detached);
    asio::co_spawn(
        rig.context,
        [this]() -> asio::awaitable<void> {
          co_await caches.waitForSync();
          co_await controllers.run();
        },
        asio::detached);
  }

  // The requests of `method` to NodeOverlays, by the name they were for.
  std::vector<std::string> overlayRequests(const std::string& method) const {
    std::vector<std::string> names;
    for (const auto& request : rig.server.requests()) {
      if (request.method != method || request.target.find("/nodeoverlays") == std::string::npos) {
        continue;
      }
      names.push_back(method == "POST"
                          ? json::parse(request.body)["metadata"]["name"].get<std::string>()
                          : request.target.substr(request.target.rfind('/') + 1));
    }
    return names;
  }

  // Runs until `done`, or 10 s of real time.
  bool runUntil(const std::function<bool()>& done) {
    for (int i = 0; i < 100 && !done(); ++i) {
      rig.context.restart();
      rig.context.run_for(std::chrono::milliseconds(100));
    }
    return done();
  }

  ~Run() {
    controllers.stop();
    caches.stop();
    rig.context.restart();
    rig.context.run_for(std::chrono::milliseconds(200));
  }
};

}  // namespace

TEST_CASE("a policy that shares its prices: its overlay written, the stale one deleted") {
  Run run(201);
  REQUIRE(run.runUntil([&] {
    return !run.overlayRequests("POST").empty() && !run.overlayRequests("DELETE").empty();
  }));
  CHECK(run.overlayRequests("POST") == std::vector<std::string>{kShared});
  CHECK(run.overlayRequests("DELETE") ==
        std::vector<std::string>{"gpu-placement.default.g5.xlarge.on-demand"});
  for (const auto& request : run.rig.server.requests()) {
    if (request.method == "POST" && request.target.find("/nodeoverlays") != std::string::npos) {
      const auto body = json::parse(request.body);
      CHECK(body["metadata"]["ownerReferences"][0]["uid"] == "p-1");
      CHECK(body["metadata"]["labels"]["gpuplacement.io/prices-of"] == "default");
      CHECK(body["spec"]["price"] == "0.45");
    }
  }
  CHECK(run.rig.writes->refusals().empty());
}

TEST_CASE("a Role without create on nodeoverlays: the refusal is named, the status still says") {
  Run run(403);
  REQUIRE(run.runUntil([&] {
    return !run.rig.writes->refusals().empty() &&
           std::any_of(run.rig.server.requests().begin(), run.rig.server.requests().end(),
                       [](const auto& request) {
                         return request.target.find("/placementpolicies/default/status") !=
                                std::string::npos;
                       });
  }));
  CHECK(run.rig.writes->refusals().find("create nodeoverlays.karpenter.sh") != std::string::npos);
  // The status goes out all the same: the policy's prices are not Karpenter's.
  for (const auto& request : run.rig.server.requests()) {
    if (request.target.find("/placementpolicies/default/status") != std::string::npos) {
      CHECK(request.body.find("PricesShared") != std::string::npos);
      CHECK(request.body.find("Disagree") != std::string::npos);
    }
  }
}

}  // namespace gpuplacement::app::policy_reconciler_tests
