// Proves the test fixture: a real kube-apiserver of the pinned release, and
// our own client creating, reading and watching objects through it.
#include "support/control_plane.h"

#include <doctest/doctest.h>

#include "app/caches.h"
#include "app/logging.h"
#include "app/policy_engines.h"
#include "app/resource_paths.h"
#include "kube/client.h"
#include "kube/list_watch_client.h"
#include "runtime/informer.h"
#include "runtime/run_sync.h"
#include "support/engine_fixture.h"
#include "support/offers_text.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using kube::json;
using testing::ControlPlane;

json deploymentManifest(const std::string& name) {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": ")" +
                     name + R"("},
    "spec": {
      "replicas": 1,
      "selector": {"matchLabels": {"app": ")" +
                     name + R"("}},
      "template": {
        "metadata": {"labels": {"app": ")" +
                     name + R"("}},
        "spec": {"containers": [{"name": "server", "image": "vllm/vllm-openai:v0.6.0",
                                  "resources": {"limits": {"cpu": "2"}}}]}
      }
    }
  })");
}

// Runs the context's handlers until the condition holds, for at most 10 s.
bool runUntil(asio::io_context& context, const std::function<bool()>& condition) {
  for (int i = 0; i < 100 && !condition(); ++i) {
    context.restart();  // runSync stops the context when its task is done
    context.run_for(std::chrono::milliseconds(100));
  }
  return condition();
}

}  // namespace

TEST_CASE("the control plane runs the pinned Kubernetes release") {
  auto& plane = ControlPlane::shared();
  asio::io_context context;
  auto client = plane.adminClient(context.get_executor());
  auto version = runtime::runSync(context, client->get("/version"));
  REQUIRE_MESSAGE(version.ok(), gpuplacement::testing::whyNot(version));
  CHECK(version->at("gitVersion").get<std::string>() == ControlPlane::pinnedVersion());
  CHECK(version->at("gitVersion").get<std::string>() != "v0.0.0-master");
}

TEST_CASE("create a namespace and a Deployment, read them back, watch one arrive") {
  auto& plane = ControlPlane::shared();
  asio::io_context context;
  auto client = plane.adminClient(context.get_executor());

  auto ns = runtime::runSync(
      context,
      client->create("/api/v1/namespaces", json{{"apiVersion", "v1"},
                                                {"kind", "Namespace"},
                                                {"metadata", {{"name", "fixture-test"}}}}));
  REQUIRE_MESSAGE(ns.ok(), gpuplacement::testing::whyNot(ns));

  auto readNs = runtime::runSync(context, client->get("/api/v1/namespaces/fixture-test"));
  REQUIRE(readNs.ok());
  CHECK(readNs->at("metadata").at("uid") == ns->at("metadata").at("uid"));

  const std::string deployments = "/apis/apps/v1/namespaces/fixture-test/deployments";
  auto created = runtime::runSync(context, client->create(deployments, deploymentManifest("llm")));
  REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));

  auto read = runtime::runSync(context, client->get(deployments + "/llm"));
  REQUIRE(read.ok());
  const auto& container = read->at("spec").at("template").at("spec").at("containers").at(0);
  CHECK(container.at("image") == "vllm/vllm-openai:v0.6.0");
  CHECK(container.at("resources").at("limits").at("cpu") == "2");

  // The server's errors come back as values with their Kubernetes reason.
  auto duplicate =
      runtime::runSync(context, client->create(deployments, deploymentManifest("llm")));
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.error().alreadyExists());
  auto missing = runtime::runSync(context, client->get(deployments + "/absent"));
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().notFound());

  // A watch from the list's resourceVersion sees the next Deployment arrive.
  auto list = runtime::runSync(context, client->list(deployments));
  REQUIRE(list.ok());
  CHECK(list->at("items").size() == 1);
  const std::string rv = list->at("metadata").at("resourceVersion");
  auto event = runtime::runSync(context, [&]() -> asio::awaitable<kube::ApiResult<json>> {
    auto stream = co_await client->watch(
        deployments + "?watch=1&allowWatchBookmarks=true&resourceVersion=" + rv,
        std::chrono::seconds(30));
    if (!stream) {
      co_return std::move(stream).error();
    }
    auto second = co_await client->create(deployments, deploymentManifest("embedder"));
    if (!second) {
      co_return std::move(second).error();
    }
    for (;;) {
      auto line = co_await (*stream)->nextLine();
      if (!line || !line.value()) {
        kube::ApiError ended;
        ended.message = "the watch ended without the event";
        co_return ended;
      }
      auto parsed = json::parse(*line.value());
      if (parsed.at("type") != "BOOKMARK") {
        co_return parsed;
      }
    }
  }());
  REQUIRE_MESSAGE(event.ok(), gpuplacement::testing::whyNot(event));
  CHECK(event->at("type") == "ADDED");
  CHECK(event->at("object").at("metadata").at("name") == "embedder");
}

TEST_CASE("the operator's pod watch leaves finished pods out; a pod that finishes leaves") {
  auto& plane = ControlPlane::shared();
  asio::io_context context;
  auto client = plane.adminClient(context.get_executor());
  const std::string ns = "pod-phases";
  const std::string pods = "/api/v1/namespaces/" + ns + "/pods";
  auto created = runtime::runSync(
      context, client->create("/api/v1/namespaces",
                              json{{"metadata", {{"name", ns}}}, {"kind", "Namespace"}}));
  REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
  const auto pod = [&](const std::string& name) {
    auto made = runtime::runSync(
        context,
        client->create(pods, json{{"metadata", {{"name", name}}},
                                  {"spec",
                                   {{"nodeName", "absent-node"},
                                    {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}));
    REQUIRE_MESSAGE(made.ok(), gpuplacement::testing::whyNot(made));
  };
  const auto setPhase = [&](const std::string& name, const std::string& phase) {
    auto patched = runtime::runSync(
        context, client->patch(pods + "/" + name + "/status", json{{"status", {{"phase", phase}}}},
                               kube::PatchType::Merge));
    REQUIRE_MESSAGE(patched.ok(), gpuplacement::testing::whyNot(patched));
  };
  pod("running");
  pod("done");
  setPhase("done", "Succeeded");

  runtime::RealClock clock;
  kube::KubeListWatchClient listWatch(*client);
  runtime::InformerOptions options;
  options.resource = "pods";
  options.path = app::unfinishedPodsPath();
  runtime::Informer<std::string> informer(
      context.get_executor(), listWatch, options,
      [](const json& item) { return base::stringMember(item["status"], "phase"); }, clock);
  std::string log;
  informer.setLogger([&log](const std::string& message) { log += message + "\n"; });
  asio::co_spawn(context, informer.run(), asio::detached);
  const auto until = [&](const std::function<bool()>& condition) {
    return runUntil(context, condition);
  };
  REQUIRE_MESSAGE(until([&] { return informer.synced(); }), log);
  CHECK(informer.store().get(ns + "/running") != nullptr);
  CHECK(informer.store().get(ns + "/done") == nullptr);  // never listed

  setPhase("running", "Failed");
  CHECK(until([&] { return informer.store().get(ns + "/running") == nullptr; }));
  pod("next");
  CHECK(until([&] { return informer.store().get(ns + "/next") != nullptr; }));
  informer.stop();
  context.restart();
  context.run_for(std::chrono::milliseconds(100));
}

TEST_CASE("a node's heartbeat does not move the cluster view; a change it reads does") {
  auto& plane = ControlPlane::shared();
  asio::io_context context;
  auto client = plane.adminClient(context.get_executor());
  const std::string node = "view-generation-node";
  auto created = runtime::runSync(
      context, client->create("/api/v1/nodes", json{{"metadata", {{"name", node}}}}));
  REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
  const auto patch = [&](const json& body) {
    auto patched = runtime::runSync(
        context, client->patch("/api/v1/nodes/" + node, body, kube::PatchType::Merge));
    REQUIRE_MESSAGE(patched.ok(), gpuplacement::testing::whyNot(patched));
  };

  runtime::RealClock clock;
  kube::KubeListWatchClient listWatch(*client);
  app::Logger logger(app::LogLevel::Error, app::LogFormat::Json);
  app::ObjectCaches caches(context.get_executor(), listWatch, *testing::shippedCatalog(),
                           *testing::shippedRules(), app::CacheOptions{}, logger, clock);
  const auto& cluster = caches.clusterView();
  asio::co_spawn(context, caches.run(), asio::detached);
  const auto until = [&](const std::function<bool()>& condition) {
    return runUntil(context, condition);
  };
  REQUIRE(until([&] { return cluster.stamp().nodesKnown; }));
  const auto before = cluster.stamp().generation;

  // An annotation (what a heartbeat or another controller writes), then a
  // label the view reads. Watch events arrive in order: once the label's
  // has moved the generation, the annotation's was read before it.
  patch(json{{"metadata", {{"annotations", {{"example.com/heartbeat", "1"}}}}}});
  patch(json{{"metadata", {{"labels", {{"node.kubernetes.io/instance-type", "m5.xlarge"}}}}}});
  REQUIRE(until([&] { return cluster.stamp().generation != before; }));
  CHECK(cluster.stamp().generation == before + 1);

  auto removed = runtime::runSync(context, client->remove("/api/v1/nodes/" + node));
  CHECK_MESSAGE(removed.ok(), gpuplacement::testing::whyNot(removed));
  caches.stop();
  context.restart();
  context.run_for(std::chrono::milliseconds(100));
}

TEST_CASE(
    "pods that come and go are recounted on their nodes; a node that changes is counted whole") {
  auto& plane = ControlPlane::shared();
  asio::io_context context;
  auto client = plane.adminClient(context.get_executor());
  const std::string ns = "view-recount";
  const std::vector<std::string> nodes = {"view-recount-a", "view-recount-b"};
  const auto require = [](const auto& result) {
    REQUIRE_MESSAGE(result.ok(), gpuplacement::testing::whyNot(result));
  };
  require(runtime::runSync(
      context, client->create("/api/v1/namespaces", json{{"metadata", {{"name", ns}}}})));
  for (const auto& name : nodes) {
    require(runtime::runSync(
        context, client->create(
                     "/api/v1/nodes",
                     json{{"metadata",
                           {{"name", name},
                            {"labels", {{"node.kubernetes.io/instance-type", "g6.12xlarge"}}}}}})));
    const json resources = {
        {"cpu", "47810m"}, {"memory", "176052Mi"}, {"pods", "234"}, {"nvidia.com/gpu", "4"}};
    require(runtime::runSync(
        context, client->patch("/api/v1/nodes/" + name + "/status",
                               json{{"status",
                                     {{"capacity", resources},
                                      {"allocatable", resources},
                                      {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}},
                               kube::PatchType::Merge)));
    // The not-ready taint the API server puts on a new node: no kubelet
    // here takes it off.
    require(runtime::runSync(
        context, client->patch("/api/v1/nodes/" + name, json{{"spec", {{"taints", nullptr}}}},
                               kube::PatchType::Merge)));
  }
  const auto pod = [&](const std::string& name, const std::string& node, int gpus) {
    require(runtime::runSync(
        context,
        client->create(
            "/api/v1/namespaces/" + ns + "/pods",
            json{{"metadata", {{"name", name}}},
                 {"spec",
                  {{"nodeName", node},
                   {"containers",
                    {{{"name", "c"},
                      {"image", "busybox"},
                      {"resources",
                       {{"limits",
                         {{"nvidia.com/gpu", std::to_string(gpus)}, {"cpu", "2"}}}}}}}}}}})));
  };

  runtime::RealClock clock;
  kube::KubeListWatchClient listWatch(*client);
  app::Logger logger(app::LogLevel::Error, app::LogFormat::Json);
  app::ObjectCaches caches(context.get_executor(), listWatch, *testing::shippedCatalog(),
                           *testing::shippedRules(), app::CacheOptions{}, logger, clock);
  const auto& cluster = caches.clusterView();
  app::PolicyEngines engines(testing::shippedCatalog(), testing::shippedRules());
  std::vector<app::PolicyEngines::ViewWork> work;
  engines.observeViews(
      clock, [&work](app::PolicyEngines::ViewWork done, double) { work.push_back(done); });
  asio::co_spawn(context, caches.run(), asio::detached);
  const auto until = [&](const std::function<bool()>& condition) {
    return runUntil(context, condition);
  };
  const auto policy = engines.view("default", nullptr);
  REQUIRE(policy.engine != nullptr);
  const auto g6 = testing::shippedCatalog()->indexOf("g6.12xlarge");
  const auto gpusUsed = [&](const core::ClusterView& view) {
    return view.capacity.offer(g6, core::CapacityType::OnDemand)->used;
  };
  // What a whole computation over the caches gives now.
  const auto whole = [&] {
    return testing::offersText(
        core::clusterViewOf(cluster.state(), policy.engine->catalog(), policy.engine->policy())
            .capacity);
  };
  REQUIRE(until([&] {
    return cluster.stamp().nodesKnown && cluster.node(nodes[1]) &&
           cluster.node(nodes[1])->node->allocatable.gpus == 4;
  }));
  const auto first = engines.clusterView("default", policy, cluster);
  REQUIRE(first != nullptr);
  CHECK(work == std::vector{app::PolicyEngines::ViewWork::Whole});
  const auto used = gpusUsed(*first);

  // A pod lands on a node: that node is recounted, and the view is what a
  // whole computation gives.
  auto stamp = cluster.stamp();
  pod("one", nodes[0], 1);
  REQUIRE(until([&] { return cluster.stamp().room != stamp.room; }));
  CHECK(cluster.nodesWithRoomMovedSince(stamp.room) == std::vector<std::string>{nodes[0]});
  const auto firstText = testing::offersText(first->capacity);
  std::shared_ptr<const core::ClusterView> held = first;  // a reconcile still holds it
  const auto second = engines.clusterView("default", policy, cluster);
  CHECK(work.back() == app::PolicyEngines::ViewWork::Recount);
  CHECK(gpusUsed(*second) == used + 1);
  CHECK(testing::offersText(second->capacity) == whole());
  CHECK(testing::offersText(held->capacity) == firstText);  // untouched: it got a copy
  held.reset();

  // Pods on both nodes, one gone: each node once.
  stamp = cluster.stamp();
  pod("two", nodes[1], 2);
  pod("three", nodes[1], 1);
  // No kubelet confirms a graceful deletion here: at once.
  require(runtime::runSync(
      context, client->remove("/api/v1/namespaces/" + ns + "/pods/one?gracePeriodSeconds=0")));
  REQUIRE(until([&] { return cluster.stamp().room >= stamp.room + 3; }));
  auto moved = cluster.nodesWithRoomMovedSince(stamp.room);
  REQUIRE(moved.has_value());
  std::sort(moved->begin(), moved->end());
  CHECK(*moved == nodes);
  const auto third = engines.clusterView("default", policy, cluster);
  CHECK(work.back() == app::PolicyEngines::ViewWork::Recount);
  CHECK(gpusUsed(*third) == used + 3);
  CHECK(testing::offersText(third->capacity) == whole());
  CHECK(engines.clusterView("default", policy, cluster) == third);  // nothing moved: the same

  // A node cordoned: a change of the node, counted whole.
  stamp = cluster.stamp();
  require(runtime::runSync(
      context, client->patch("/api/v1/nodes/" + nodes[1], json{{"spec", {{"unschedulable", true}}}},
                             kube::PatchType::Merge)));
  REQUIRE(until([&] { return cluster.stamp().generation != stamp.generation; }));
  const auto fourth = engines.clusterView("default", policy, cluster);
  CHECK(work.back() == app::PolicyEngines::ViewWork::Whole);
  CHECK(gpusUsed(*fourth) == used);  // "two" and "three" hold no offered node's devices now
  CHECK(testing::offersText(fourth->capacity) == whole());

  // The node deleted before its pods, as the pod garbage collector does
  // it, then a node of the same name: it starts empty.
  require(runtime::runSync(context, client->remove("/api/v1/nodes/" + nodes[1])));
  REQUIRE(until([&] { return !cluster.node(nodes[1]); }));
  stamp = cluster.stamp();
  for (const char* name : {"two", "three"}) {
    require(runtime::runSync(context, client->remove("/api/v1/namespaces/" + ns + "/pods/" + name +
                                                     "?gracePeriodSeconds=0")));
  }
  REQUIRE(until([&] { return cluster.stamp().room >= stamp.room + 2; }));
  require(runtime::runSync(
      context, client->create("/api/v1/nodes", json{{"metadata", {{"name", nodes[1]}}}})));
  REQUIRE(until([&] { return cluster.node(nodes[1]).has_value(); }));
  CHECK(cluster.node(nodes[1])->used == core::Devices{});
  CHECK(cluster.node(nodes[1])->usedPods == 0);

  for (const auto& name : nodes) {
    require(runtime::runSync(context, client->remove("/api/v1/nodes/" + name)));
  }
  require(runtime::runSync(context, client->remove("/api/v1/namespaces/" + ns)));
  caches.stop();
  context.restart();
  context.run_for(std::chrono::milliseconds(100));
}

}  // namespace gpuplacement
