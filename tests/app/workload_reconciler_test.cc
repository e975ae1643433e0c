// The workload reconciler on the event loop, as the manager runs it: its
// caches filled by a scripted list/watch, its writes answered by a scripted
// server, its decisions timed by a fake clock: when the status says things
// happened, whether pods have waited long enough to fall back, and when a
// requeue comes due. A run lasts until the server has what the test waits
// for (at most 10 s of real time, which no step waits on).
#include "app/workload_reconciler.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include <doctest/doctest.h>

#include "app/resource_paths.h"
#include "support/engine_fixture.h"
#include "support/fake_clock.h"
#include "support/scripted_caches.h"
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

// A pod of the Deployment's ReplicaSet the scheduler cannot place since
// `since`.
json unschedulablePod(const std::string& since) {
  return {{"metadata",
           {{"namespace", "ml"},
            {"name", "llm-5d8f7-x2x9k"},
            {"uid", "p-1"},
            {"resourceVersion", "12"},
            {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                              {"kind", "ReplicaSet"},
                                              {"name", "llm-5d8f7"},
                                              {"controller", true}}})}}},
          {"spec", {{"containers", json::array({{{"name", "server"}}})}}},
          {"status",
           {{"phase", "Pending"},
            {"conditions", json::array({{{"type", "PodScheduled"},
                                         {"status", "False"},
                                         {"reason", "Unschedulable"},
                                         {"message", "0/3 nodes are available"},
                                         {"lastTransitionTime", since}}})}}}};
}

// What the caches list: the workload, its Deployment and their pods, the
// rest empty (no nodes, no NodePools: the catalog's types are what the
// cluster can get).
struct Listed {
  json workload;
  json deployment;
  std::vector<json> pods;
  std::vector<json> nodes = {};
};

testing::ScriptedListWatchByPath cluster(const Listed& listed) {
  return testing::scriptedCaches(
      {{workloadsPath(""), {listed.workload}},
       {targetsPath(core::TargetKind::Deployment, ""), {listed.deployment}},
       {unfinishedPodsPath(), listed.pods},
       {nodesPath(), listed.nodes}});
}

// What the server stores for a write: the Deployment with the patch laid
// over it (the operator's strategic patches carry whole lists, so a merge
// patch lands the same), the workload with its status replaced.
json deploymentAfter(const Listed& listed, const json& patch) {
  auto stored = listed.deployment;
  stored.merge_patch(patch);
  return stored;
}
json workloadAfter(const Listed& listed, const json& patch) {
  return listed.workload.patch(patch);
}

// Answers as an API server would: the objects as stored, an Event as
// created.
FakeApiServer::Handler answerOver(const Listed& listed) {
  return [listed](const FakeApiServer::Request& request) {
    FakeApiServer::Response response;
    const auto body = request.body.empty() ? json::object() : json::parse(request.body);
    if (request.target.find("/deployments/llm") != std::string::npos) {
      auto stored = deploymentAfter(listed, body);
      stored["metadata"]["resourceVersion"] = "20";
      response.body = stored.dump();
    } else if (request.target.find("/gpuworkloads/llm/status") != std::string::npos) {
      auto stored = workloadAfter(listed, body);
      stored["metadata"]["resourceVersion"] = "21";
      response.body = stored.dump();
    } else {
      response.status = request.method == "POST" ? 201 : 404;
      response.body = request.method == "POST" ? request.body : json{{"kind", "Status"}}.dump();
    }
    return response;
  };
}

// The last request of `method` to `path`: what the server then holds.
const FakeApiServer::Request* sent(const FakeApiServer& server, const std::string& method,
                                   const std::string& path) {
  const FakeApiServer::Request* last = nullptr;
  for (const auto& request : server.requests()) {
    if (request.method == method && request.target.find(path) != std::string::npos) {
      last = &request;
    }
  }
  return last;
}

const std::string kDeploymentPath = "/deployments/llm";
const std::string kStatusPath = "/gpuworkloads/llm/status";

// What one run of the reconciler sent, and what the server stored.
struct Sent {
  std::optional<json> targetPatch;
  std::optional<json> status;  // as stored
  json deployment;             // as stored after the patch, if any
  std::vector<std::string> eventReasons;
};

// The reconciler over `listed`, as the manager runs it, every part of it on
// `clock`: its work queue, its status writes, its Events. A requeue comes
// due when the test moves the clock, never by real time.
class ReconcilerRun {
 public:
  ReconcilerRun(const Listed& listed, const runtime::Clock& clock)
      : listed_(listed),
        rig_(answerOver(listed)),
        lists_(cluster(listed)),
        caches_(rig_.context.get_executor(), lists_, *testing::shippedCatalog(),
                *testing::shippedRules(), CacheOptions{}, rig_.logger, clock),
        engines_(testing::shippedCatalog(), testing::shippedRules()),
        events_(*rig_.writes, rig_.logger, rig_.metrics, clock),
        controllers_(rig_.context.get_executor(), clock),
        reconciler_(controllers_, caches_, engines_, *rig_.writes, events_,
                    WorkloadReconcilerOptions{}, rig_.logger, rig_.metrics, clock) {
    CHECK(controllers_.size() == 1);
    asio::co_spawn(rig_.context, caches_.run(), asio::detached);
    asio::co_spawn(
        rig_.context,
        [this]() -> asio::awaitable<void> {
          co_await caches_.waitForSync();  // as the manager starts its reconcilers
          asio::co_spawn(rig_.context, events_.run(), asio::detached);
          asio::co_spawn(rig_.context, reconciler_.writeStatuses(), asio::detached);
          co_await controllers_.run();
          co_await reconciler_.finishStatuses();
        },
        [this](std::exception_ptr) { ended_ = true; });
  }

  // Runs the event loop until the server has what `enough` asks for, or
  // 10 s have passed; says which.
  bool runUntil(const std::function<bool(const FakeApiServer&)>& enough) {
    for (int i = 0; i < 100 && !enough(rig_.server); ++i) {
      rig_.context.restart();
      rig_.context.run_for(std::chrono::milliseconds(100));
    }
    return enough(rig_.server);
  }

  void runFor(std::chrono::milliseconds duration) {
    rig_.context.restart();
    rig_.context.run_for(duration);
  }
  const FakeApiServer& server() const { return rig_.server; }

  // Stops it as the manager stops it; what it sent.
  Sent finish() {
    controllers_.stop();
    caches_.stop();
    events_.stop();
    rig_.context.restart();
    rig_.context.run_for(std::chrono::milliseconds(300));
    CHECK(ended_);

    Sent out;
    out.deployment = listed_.deployment;
    if (const auto* patch = sent(rig_.server, "PATCH", kDeploymentPath)) {
      out.targetPatch = json::parse(patch->body);
      out.deployment = deploymentAfter(listed_, *out.targetPatch);
    }
    if (const auto* status = sent(rig_.server, "PATCH", kStatusPath)) {
      out.status = workloadAfter(listed_, json::parse(status->body))["status"];
    }
    for (const auto& request : rig_.server.requests()) {
      if (request.method == "POST" && request.target.find("/events") != std::string::npos) {
        out.eventReasons.push_back(json::parse(request.body).value("reason", ""));
      }
    }
    return out;
  }

 private:
  Listed listed_;
  testing::ScriptedWrites rig_;
  testing::ScriptedListWatchByPath lists_;
  ObjectCaches caches_;
  PolicyEngines engines_;
  EventRecorder events_;
  runtime::ControllerSet controllers_;
  WorkloadReconciler reconciler_;
  bool ended_ = false;
};

bool statusSent(const FakeApiServer& server) {
  return sent(server, "PATCH", kStatusPath) != nullptr;
}
bool targetPatched(const FakeApiServer& server) {
  return sent(server, "PATCH", kDeploymentPath) != nullptr;
}

// One run until the server has the status and `enough` says so.
Sent reconcile(const Listed& listed, const runtime::Clock& clock,
               const std::function<bool(const FakeApiServer&)>& enough) {
  ReconcilerRun run(listed, clock);
  run.runUntil([&](const FakeApiServer& server) { return statusSent(server) && enough(server); });
  return run.finish();
}

const json* condition(const json& status, const std::string& type) {
  for (const auto& item : status["conditions"]) {
    if (item["type"] == type) {
      return &item;
    }
  }
  return nullptr;
}

std::string instanceTypeOf(const json& deployment) {
  return deployment["spec"]["template"]["spec"]["nodeSelector"].value(kInstanceType, "");
}

// Placed by a first reconcile at 07:05 on the fake clock: the Deployment
// and the workload as the server then holds them.
Listed placedAt0705() {
  testing::FakeClock clock;
  clock.advance(std::chrono::hours(7) + std::chrono::minutes(5));
  const Listed fresh{workload(), deployment(), {}};
  const auto run = reconcile(fresh, clock, targetPatched);
  REQUIRE(run.targetPatch);
  REQUIRE(run.status);
  auto placedWorkload = workload();
  placedWorkload["status"] = *run.status;
  return {placedWorkload, run.deployment, {}};
}

TEST_CASE("a workload is placed on its Deployment and its status stamped by the clock given") {
  testing::FakeClock clock;
  clock.advance(std::chrono::hours(7) + std::chrono::minutes(5));
  const auto run = reconcile({workload(), deployment(), {}}, clock, targetPatched);
  REQUIRE(run.targetPatch);
  REQUIRE(run.status);

  // The target carries the decision: the instance type the status names,
  // beside the team's own toleration.
  const auto& status = *run.status;
  CHECK(status["placement"]["tier"] == "NVIDIA");
  CHECK(status["placement"]["instanceType"] == instanceTypeOf(run.deployment));
  CHECK(run.deployment["spec"]["template"]["spec"]["tolerations"][0]["key"] == "dedicated");
  // The time the clock given says, not the machine's.
  const auto* placed = condition(status, "Placed");
  REQUIRE(placed);
  CHECK((*placed)["status"] == "True");
  CHECK((*placed)["lastTransitionTime"] == "2026-11-22T07:05:00Z");
}

// A Ready g6.xlarge node of the region given, with its GPU free.
json nodeIn(const std::string& region) {
  const json resources = {
      {"cpu", "4"}, {"memory", "16Gi"}, {"pods", "58"}, {"nvidia.com/gpu", "1"}};
  return {{"metadata",
           {{"name", "ip-10-0-16-4." + region + ".compute.internal"},
            {"resourceVersion", "3"},
            {"labels",
             {{kInstanceType, "g6.xlarge"},
              {"topology.kubernetes.io/region", region},
              {"karpenter.sh/capacity-type", "on-demand"}}}}},
          {"status",
           {{"capacity", resources},
            {"allocatable", resources},
            {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

TEST_CASE("the status says whether its costs are the cluster's region's prices") {
  testing::FakeClock clock;
  clock.advance(std::chrono::hours(7) + std::chrono::minutes(5));
  SUBCASE("nodes in eu-central-1, the catalog's prices us-east-1's: False, and a Warning once") {
    const auto run =
        reconcile({workload(), deployment(), {}, {nodeIn("eu-central-1")}}, clock, targetPatched);
    REQUIRE(run.status);
    const auto* prices = condition(*run.status, "PricesForRegion");
    REQUIRE(prices);
    CHECK((*prices)["status"] == "False");
    CHECK((*prices)["reason"] == "OtherRegion");
    CHECK((*prices)["message"].get<std::string>().find("runs in eu-central-1") !=
          std::string::npos);
    CHECK(std::count(run.eventReasons.begin(), run.eventReasons.end(), "OtherRegion") == 1);
  }
  SUBCASE("nodes in us-east-1: True, no Event") {
    const auto run =
        reconcile({workload(), deployment(), {}, {nodeIn("us-east-1")}}, clock, targetPatched);
    REQUIRE(run.status);
    const auto* prices = condition(*run.status, "PricesForRegion");
    REQUIRE(prices);
    CHECK((*prices)["status"] == "True");
    CHECK((*prices)["reason"] == "ClusterRegion");
    CHECK(std::count(run.eventReasons.begin(), run.eventReasons.end(), "OtherRegion") == 0);
  }
}

TEST_CASE("pods unschedulable past the policy's fallbackAfter move the workload on; before, not") {
  auto placed = placedAt0705();
  const auto first = instanceTypeOf(placed.deployment);
  REQUIRE(!first.empty());
  placed.pods.push_back(unschedulablePod("2026-11-22T07:06:00Z"));

  SUBCASE("4 minutes unschedulable, within the built-in policy's 5: the placement stays") {
    testing::FakeClock clock;
    clock.advance(std::chrono::hours(7) + std::chrono::minutes(10));
    // A second after the status, time enough for a fallback to be sent,
    // were one due.
    int polls = 0;
    const auto run =
        reconcile(placed, clock, [&polls](const FakeApiServer&) { return ++polls > 10; });
    REQUIRE(run.status);
    CHECK_FALSE(run.targetPatch);
    CHECK(run.status->value("unavailable", json::array()).empty());
    // It says why the workload is not ready, and waits.
    const auto* ready = condition(*run.status, "Ready");
    REQUIRE(ready);
    CHECK((*ready)["reason"] == "Unschedulable");
    CHECK(std::count(run.eventReasons.begin(), run.eventReasons.end(), "FellBack") == 0);
  }
  SUBCASE("6 minutes unschedulable: the next option, the type left recorded at the clock's time") {
    testing::FakeClock clock;
    clock.advance(std::chrono::hours(7) + std::chrono::minutes(12));
    const auto run = reconcile(placed, clock, targetPatched);
    REQUIRE(run.targetPatch);
    REQUIRE(run.status);
    const auto next = instanceTypeOf(run.deployment);
    CHECK(!next.empty());
    CHECK(next != first);
    CHECK((*run.status)["placement"]["instanceType"] == next);
    REQUIRE((*run.status)["unavailable"].size() == 1);
    CHECK((*run.status)["unavailable"][0]["instanceType"] == first);
    CHECK((*run.status)["unavailable"][0]["since"] == "2026-11-22T07:12:00Z");
    CHECK(std::count(run.eventReasons.begin(), run.eventReasons.end(), "FellBack") == 1);
  }
}

TEST_CASE(
    "the reconcile comes back when fallbackAfter runs out: moving the clock moves the workload") {
  auto placed = placedAt0705();
  const auto first = instanceTypeOf(placed.deployment);
  placed.pods.push_back(unschedulablePod("2026-11-22T07:06:00Z"));
  testing::FakeClock clock;
  clock.advance(std::chrono::hours(7) + std::chrono::minutes(10));
  ReconcilerRun run(placed, clock);
  REQUIRE(run.runUntil(statusSent));
  // Real time passes, the clock does not: the requeue the reconcile asked
  // for (07:11, when the 5 minutes run out) is not due, nothing moves.
  run.runFor(std::chrono::seconds(1));
  CHECK_FALSE(targetPatched(run.server()));

  clock.advance(std::chrono::minutes(2));  // 07:12
  REQUIRE(run.runUntil(targetPatched));
  const auto out = run.finish();
  REQUIRE(out.status);
  CHECK(instanceTypeOf(out.deployment) != first);
  REQUIRE((*out.status)["unavailable"].size() == 1);
  CHECK((*out.status)["unavailable"][0]["instanceType"] == first);
  CHECK((*out.status)["unavailable"][0]["since"] == "2026-11-22T07:12:00Z");
  CHECK(std::count(out.eventReasons.begin(), out.eventReasons.end(), "FellBack") == 1);
}

}  // namespace
}  // namespace gpuplacement::app::workload_reconciler_tests
