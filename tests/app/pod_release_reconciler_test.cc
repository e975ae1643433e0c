// The pod release reconciler on the event loop, as the manager runs it: its
// caches filled by a scripted list/watch, its patches answered by a
// scripted server (the refusal and the conflict a real API server gives
// only for edits a test cannot make on cue). The work queue's waits are
// real timers, so the clock is the real one.
#include "app/pod_release_reconciler.h"

#include <algorithm>
#include <map>

#include <doctest/doctest.h>

#include "app/resource_paths.h"
#include "core/kinds/pod_scheduling.h"
#include "support/engine_fixture.h"
#include "support/scripted_caches.h"
#include "support/scripted_writes.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

const std::string kType = "node.kubernetes.io/instance-type";

json gatedPod(const std::string& name) {
  const core::PodScheduling scheduling{{{kType, "g5.xlarge"}}, {}};
  return {{"metadata",
           {{"namespace", "ml"},
            {"name", name},
            {"resourceVersion", "7"},
            {"annotations",
             {{core::kPodSchedulingAnnotation, core::serializePodScheduling(scheduling)}}}}},
          {"spec",
           {{"schedulingGates", json::array({{{"name", core::kSchedulingGate}}})},
            {"containers", json::array({{{"name", "server"}}})}}},
          {"status", {{"phase", "Pending"}}}};
}

// Every collection the caches read, empty but for the pods.
testing::ScriptedListWatchByPath cluster(const std::vector<json>& pods) {
  return testing::scriptedCaches({{unfinishedPodsPath(), pods}});
}

// The pod each patch was for, and whether it placed the pod (a node
// selector) or only let it go.
std::vector<std::string> patchesSent(const FakeApiServer& server) {
  std::vector<std::string> sent;
  for (const auto& request : server.requests()) {
    const auto start = request.target.find("/pods/") + 6;
    const auto name = request.target.substr(start, request.target.find('?') - start);
    const bool placed = json::parse(request.body)["spec"].contains("nodeSelector");
    sent.push_back(request.method + " " + name + (placed ? " placed" : " gate only"));
  }
  return sent;
}

TEST_CASE("gated pods are placed and let go; a refused one goes without, a conflict is retried") {
  // web-2's placement is refused (422); web-3 meets a conflict (409) once.
  std::map<std::string, int> patches;
  testing::ScriptedWrites rig([&](const FakeApiServer::Request& request) {
    const auto start = request.target.find("/pods/") + 6;
    const auto name = request.target.substr(start, request.target.find('?') - start);
    const int attempt = ++patches[name];
    FakeApiServer::Response response;
    if ((name == "web-2" && attempt == 1) || (name == "web-3" && attempt == 1)) {
      response.status = name == "web-2" ? 422 : 409;
      response.body = json{{"kind", "Status"},
                           {"code", response.status},
                           {"message", name == "web-2" ? "spec: Forbidden" : "conflict"}}
                          .dump();
    } else {
      response.body = gatedPod(name).dump();
    }
    return response;
  });
  auto lists = cluster({gatedPod("web-1"), gatedPod("web-2"), gatedPod("web-3")});
  ObjectCaches caches(rig.context.get_executor(), lists, *testing::shippedCatalog(),
                      *testing::shippedRules(), CacheOptions{}, rig.logger, rig.clock);
  runtime::ControllerSet controllers(rig.context.get_executor(), rig.clock);
  PodReleaseReconciler reconciler(controllers, caches, *rig.writes, rig.logger, rig.metrics);
  CHECK(controllers.size() == 1);

  asio::co_spawn(rig.context, caches.run(), asio::detached);
  bool ended = false;
  asio::co_spawn(rig.context, controllers.run(), [&](std::exception_ptr) { ended = true; });
  // At most 10 s for the five patches.
  for (int i = 0; i < 100 && rig.server.requests().size() < 5; ++i) {
    rig.context.restart();
    rig.context.run_for(std::chrono::milliseconds(100));
  }
  const bool sent = rig.server.requests().size() == 5;
  controllers.stop();
  caches.stop();
  rig.context.restart();
  rig.context.run_for(std::chrono::milliseconds(200));
  REQUIRE(sent);
  CHECK(ended);

  auto requests = patchesSent(rig.server);
  std::sort(requests.begin(), requests.end());
  CHECK(requests == std::vector<std::string>{"PATCH web-1 placed", "PATCH web-2 gate only",
                                             "PATCH web-2 placed", "PATCH web-3 placed",
                                             "PATCH web-3 placed"});
  const auto text = rig.metrics.render();
  CHECK(text.find("gpu_placement_pods_released_total{result=\"placed\"} 2") != std::string::npos);
  CHECK(text.find("gpu_placement_pods_released_total{result=\"refused\"} 1") != std::string::npos);
}

}  // namespace
}  // namespace gpuplacement::app
