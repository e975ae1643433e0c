// The workload reconciler on the event loop, as the manager runs it: its
// caches filled by a scripted list/watch, its writes answered by a scripted
// server, its decisions stamped by a fake clock. The work queue's waits
// are real timers; what the clock decides here is the time the status
// records.
#include "app/workload_reconciler.h"

#include <map>

#include <doctest/doctest.h>

#include "app/resource_paths.h"
#include "support/engine_fixture.h"
#include "support/fake_clock.h"
#include "support/scripted_list_watch.h"
#include "support/scripted_writes.h"

namespace gpuplacement::app::workload_reconciler_tests {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

const std::string kInstanceType = "node.kubernetes.io/instance-type";

json deployment() {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata",
           {{"namespace", "ml"}, {"name", "llm"}, {"uid", "d-1"}, {"resourceVersion", "5"}}},
          {"spec",
           {{"replicas", 1},
            {"selector", {{"matchLabels", {{"app", "llm"}}}}},
            {"template",
             {{"metadata", {{"labels", {{"app", "llm"}}}}},
              {"spec",
               {{"tolerations", json::array({{{"key", "dedicated"},
                                              {"operator", "Equal"},
                                              {"value", "ml"},
                                              {"effect", "NoSchedule"}}})},
                {"containers", json::array({{{"name", "server"}}})}}}}}}}};
}

json workload() {
  return {{"apiVersion", "gpuplacement.io/v1alpha1"},
          {"kind", "GpuWorkload"},
          {"metadata",
           {{"namespace", "ml"},
            {"name", "llm"},
            {"uid", "w-1"},
            {"generation", 1},
            {"resourceVersion", "6"}}},
          {"spec",
           {{"targetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "llm"}}},
            {"workload", {{"kind", "Inference"}}},
            {"model", {{"parameters", "7B"}}},
            {"objective", "CostOptimized"},
            {"constraints", {{"tiers", json::array({"NVIDIA"})}}}}}};
}

// Every collection the caches read: the workload and its Deployment, the
// rest empty (no nodes, no NodePools: the catalog's types are what the
// cluster can get).
testing::ScriptedListWatchByPath cluster() {
  const std::map<std::string, json> listed = {
      {workloadsPath(""), workload()},
      {targetsPath(core::TargetKind::Deployment, ""), deployment()}};
  testing::ScriptedListWatchByPath lists;
  std::vector<std::string> paths = {policiesPath(), workloadsPath(""), nodesPath(),
                                    unfinishedPodsPath()};
  for (const auto kind : core::kTargetKinds) {
    paths.push_back(targetsPath(kind, ""));
  }
  for (const auto& path : paths) {
    auto& script = lists.paths[path];
    testing::ScriptedListWatch::WatchScript list;
    if (const auto found = listed.find(path); found != listed.end()) {
      list.lines.push_back(json{{"type", "ADDED"}, {"object", found->second}}.dump());
    }
    list.lines.push_back(json{
        {"type", "BOOKMARK"},
        {"object",
         {{"metadata",
           {{"resourceVersion", "9"}, {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}}
                             .dump());
    script.streamingLists.push_back(std::move(list));
    script.onExhausted = [] {};  // the caches stay as listed
  }
  return lists;
}

// Answers as an API server would: the Deployment with the patch laid over
// it, the workload with its status replaced, an Event as created.
FakeApiServer::Response answer(const FakeApiServer::Request& request) {
  FakeApiServer::Response response;
  const auto body = request.body.empty() ? json::object() : json::parse(request.body);
  if (request.target.find("/deployments/llm") != std::string::npos) {
    auto stored = deployment();
    stored.merge_patch(body);
    stored["metadata"]["resourceVersion"] = "10";
    response.body = stored.dump();
  } else if (request.target.find("/gpuworkloads/llm/status") != std::string::npos) {
    auto stored = workload().patch(body);
    stored["metadata"]["resourceVersion"] = "11";
    response.body = stored.dump();
  } else {
    response.status = request.method == "POST" ? 201 : 404;
    response.body = request.method == "POST" ? request.body : json{{"kind", "Status"}}.dump();
  }
  return response;
}

const FakeApiServer::Request* sent(const FakeApiServer& server, const std::string& method,
                                   const std::string& path) {
  for (const auto& request : server.requests()) {
    if (request.method == method && request.target.find(path) != std::string::npos) {
      return &request;
    }
  }
  return nullptr;
}

TEST_CASE("a workload is placed on its Deployment and its status stamped by the clock given") {
  testing::ScriptedWrites rig(answer);
  testing::FakeClock clock;
  clock.advance(std::chrono::hours(7) + std::chrono::minutes(5));
  auto lists = cluster();
  ObjectCaches caches(rig.context.get_executor(), lists, *testing::shippedCatalog(),
                      *testing::shippedRules(), CacheOptions{}, rig.logger, rig.clock);
  PolicyEngines engines(testing::shippedCatalog(), testing::shippedRules());
  EventRecorder events(*rig.writes, rig.logger, rig.metrics, clock);
  runtime::ControllerSet controllers(rig.context.get_executor(), rig.clock);
  WorkloadReconciler reconciler(controllers, caches, engines, *rig.writes, events,
                                WorkloadReconcilerOptions{}, rig.logger, rig.metrics, clock);
  CHECK(controllers.size() == 1);

  asio::co_spawn(rig.context, caches.run(), asio::detached);
  bool ended = false;
  asio::co_spawn(
      rig.context,
      [&]() -> asio::awaitable<void> {
        co_await caches.waitForSync();  // as the manager starts its reconcilers
        asio::co_spawn(rig.context, events.run(), asio::detached);
        asio::co_spawn(rig.context, reconciler.writeStatuses(), asio::detached);
        co_await controllers.run();
        co_await reconciler.finishStatuses();
      },
      [&](std::exception_ptr) { ended = true; });
  // At most 10 s for the target's patch and the status.
  const std::string statusPath = "/gpuworkloads/llm/status";
  for (int i = 0; i < 100 && !(sent(rig.server, "PATCH", "/deployments/llm") &&
                               sent(rig.server, "PATCH", statusPath));
       ++i) {
    rig.context.restart();
    rig.context.run_for(std::chrono::milliseconds(100));
  }
  const auto* patch = sent(rig.server, "PATCH", "/deployments/llm");
  const auto* status = sent(rig.server, "PATCH", statusPath);
  controllers.stop();
  caches.stop();
  events.stop();
  rig.context.restart();
  rig.context.run_for(std::chrono::milliseconds(300));
  REQUIRE(patch);
  REQUIRE(status);
  CHECK(ended);

  // The target carries the decision: the instance type the status names.
  const auto podSpec = json::parse(patch->body)["spec"]["template"]["spec"];
  REQUIRE(podSpec["nodeSelector"].contains(kInstanceType));
  const auto stored = workload().patch(json::parse(status->body))["status"];
  CHECK(stored["placement"]["tier"] == "NVIDIA");
  CHECK(stored["placement"]["instanceType"] == podSpec["nodeSelector"][kInstanceType]);
  // The time the clock given says, not the machine's.
  bool placed = false;
  for (const auto& condition : stored["conditions"]) {
    if (condition["type"] == "Placed") {
      placed = condition["status"] == "True";
      CHECK(condition["lastTransitionTime"] == "2026-11-22T07:05:00Z");
    }
  }
  CHECK(placed);
}

}  // namespace
}  // namespace gpuplacement::app::workload_reconciler_tests
