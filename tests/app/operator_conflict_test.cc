// The one reconcile path a real API server will not produce on demand: a
// 409 Conflict on the Deployment patch. The operator must read the
// Deployment again, plan again on the fresh resourceVersion, and succeed.
#include <doctest/doctest.h>

#include "app/manager.h"
#include "kube/beast_transport.h"
#include "support/engine_fixture.h"
#include "support/fake_api_server.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

json deployment(const std::string& resourceVersion, std::int64_t generation) {
  return json{{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata",
               {{"namespace", "ns"},
                {"name", "d"},
                {"uid", "u-d"},
                {"resourceVersion", resourceVersion},
                {"generation", generation}}},
              {"spec",
               {{"replicas", 1},
                {"template", {{"spec", {{"containers", json::array({{{"name", "server"}}})}}}}}}}};
}

FakeApiServer::Response reply(unsigned status, const json& body) {
  FakeApiServer::Response response;
  response.status = status;
  response.body = body.dump();
  return response;
}

}  // namespace

TEST_CASE("a 409 on the Deployment patch: read it again, plan again, patch again") {
  asio::io_context context;
  runtime::RealClock clock;
  const json workload = {{"apiVersion", "gpuplacement.io/v1alpha1"},
                         {"kind", "GpuWorkload"},
                         {"metadata",
                          {{"namespace", "ns"},
                           {"name", "w"},
                           {"uid", "u-w"},
                           {"resourceVersion", "3"},
                           {"generation", 1},
                           {"finalizers", json::array({"gpuplacement.io/finalizer"})}}},
                         {"spec",
                          {{"targetRef", {{"name", "d"}}},
                           {"workload", {{"kind", "Inference"}}},
                           {"model", {{"parameters", "7B"}}},
                           {"objective", "CostOptimized"},
                           {"constraints", {{"tiers", json::array({"NVIDIA"})}}}}}};
  int deploymentPatches = 0;
  std::vector<std::string> patchedVersions;
  std::vector<std::string> patchTargets;
  bool statusWritten = false;
  Manager* running = nullptr;

  FakeApiServer server(context, [&](const FakeApiServer::Request& request) {
    const auto& target = request.target;
    if (target.find("watch=1") != std::string::npos) {
      FakeApiServer::Response hold;
      hold.holdOpen = true;
      return hold;
    }
    if (request.method == "GET" && target.find("limit=") != std::string::npos) {
      json items = json::array();
      if (target.find("/gpuworkloads") != std::string::npos) {
        items.push_back(workload);
      } else if (target.find("/deployments") != std::string::npos) {
        items.push_back(deployment("5", 1));
      }
      return reply(200, {{"items", items}, {"metadata", {{"resourceVersion", "10"}}}});
    }
    if (target.substr(0, target.find('?')) == "/apis/apps/v1/namespaces/ns/deployments/d") {
      if (request.method == "GET") {
        return reply(200, deployment("6", 1));  // someone else wrote it meanwhile
      }
      ++deploymentPatches;
      patchTargets.push_back(target);
      const auto body = json::parse(request.body);
      patchedVersions.push_back(body["metadata"]["resourceVersion"]);
      if (deploymentPatches == 1) {
        return reply(409, {{"kind", "Status"},
                           {"code", 409},
                           {"reason", "Conflict"},
                           {"message", "the object has been modified"}});
      }
      auto patched = deployment("7", 2);
      patched["spec"]["template"]["spec"] = body["spec"]["template"]["spec"];
      patched["metadata"]["annotations"] = body["metadata"]["annotations"];
      return reply(200, patched);
    }
    if (target.rfind("/apis/gpuplacement.io/v1alpha1/namespaces/ns/gpuworkloads/w/status", 0) ==
        0) {
      statusWritten = true;
      running->stop();
      return reply(200, workload);
    }
    if (request.method == "POST") {
      return reply(201, json::parse(request.body));
    }
    return reply(404, {{"kind", "Status"}, {"code", 404}, {"reason", "NotFound"}});
  });

  auto transport =
      kube::BeastTransport::create(context.get_executor(), *kube::parseServerUrl(server.url()), {});
  REQUIRE(transport.ok());
  kube::KubeClient client(std::move(transport).value(), kube::makeCredentialSource({}, clock), {},
                          clock);
  Logger logger(LogLevel::Error, LogFormat::Text);
  MetricsRegistry metrics;
  ManagerOptions options;
  options.workers = 1;
  Manager manager(context.get_executor(), client, testing::shippedCatalog(),
                  testing::shippedRules(), options, logger, metrics, clock);
  running = &manager;
  // Until the manager has stopped (the status write stops it), 15 s at most.
  asio::co_spawn(context, manager.run(), [&context](std::exception_ptr) { context.stop(); });
  context.run_for(std::chrono::seconds(15));
  server.stop();

  REQUIRE(statusWritten);
  CHECK(deploymentPatches == 2);
  // The first patch carried the cached version, the second the fresh one,
  // both under the operator's field manager.
  CHECK(patchedVersions == std::vector<std::string>{"5", "6"});
  CHECK(patchTargets ==
        std::vector<std::string>(
            2, "/apis/apps/v1/namespaces/ns/deployments/d?fieldManager=gpu-placement-operator"));
  // Between them, exactly one read of the Deployment.
  int reads = 0;
  for (const auto& request : server.requests()) {
    reads +=
        request.method == "GET" && request.target == "/apis/apps/v1/namespaces/ns/deployments/d";
  }
  CHECK(reads == 1);
}

}  // namespace gpuplacement::app
