// The operator as Kueue's admission check controller, on the event loop as
// the manager runs it: its caches filled by a scripted list/watch (Kueue's
// AdmissionChecks, ResourceFlavors and Workloads, and the GpuWorkloads
// that target the Workloads' Jobs), what the GpuWorkload reconciles hand
// over set directly, its server-side applies answered by a scripted
// server. The work queue's waits are real timers, so the clock is the
// real one.
#include "app/kueue_admission.h"

#include <algorithm>
#include <map>

#include <doctest/doctest.h>

#include "app/resource_paths.h"
#include "support/engine_fixture.h"
#include "support/scripted_caches.h"
#include "support/scripted_writes.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

const std::string kGpuName = "karpenter.k8s.aws/instance-gpu-name";
const std::string kCapacity = "karpenter.sh/capacity-type";

json admissionCheck(const std::string& name, const std::string& controller) {
  return {{"apiVersion", "kueue.x-k8s.io/v1beta2"},
          {"kind", "AdmissionCheck"},
          {"metadata", {{"name", name}, {"resourceVersion", "3"}}},
          {"spec", {{"controllerName", controller}}}};
}

json flavor(const std::string& name, const std::string& gpu, const std::string& capacity) {
  return {
      {"metadata", {{"name", name}, {"resourceVersion", "4"}}},
      {"spec",
       {{"nodeLabels", {{kGpuName, gpu}, {kCapacity, capacity}}},
        {"tolerations",
         json::array(
             {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}})}}}};
}

// The Workload Kueue makes for the Job `job`: quota reserved on the L4
// flavor, our check Pending.
json kueueWorkload(const std::string& job) {
  return {
      {"metadata",
       {{"namespace", "research"},
        {"name", "job-" + job + "-1a2b3"},
        {"resourceVersion", "5"},
        {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "Job"},
                                          {"name", job},
                                          {"uid", "u-" + job},
                                          {"controller", true}}})}}},
      {"spec", {{"podSets", json::array({{{"name", "main"}, {"count", 2}}})}}},
      {"status",
       {{"admission",
         {{"clusterQueue", "gpu-training"},
          {"podSetAssignments",
           json::array({{{"name", "main"},
                         {"flavors", {{"nvidia.com/gpu", "l4-on-demand"}, {"cpu", "l4-on-demand"}}},
                         {"count", 2}}})}}},
        {"admissionChecks",
         json::array({{{"name", "gpu-placement"}, {"state", "Pending"}, {"message", ""}}})},
        {"conditions", json::array({{{"type", "QuotaReserved"}, {"status", "True"}}})}}}};
}

json gpuWorkload(const std::string& name, const std::string& job) {
  return {{"apiVersion", "gpuplacement.io/v1alpha1"},
          {"kind", "GpuWorkload"},
          {"metadata", {{"namespace", "research"}, {"name", name}, {"resourceVersion", "6"}}},
          {"spec", {{"targetRef", {{"kind", "Job"}, {"name", job}}}}}};
}

// Decided while Kueue had reserved `reserved` (the Workloads here: L4).
core::KueueHandOff placedOn(const std::string& gpu, const std::string& capacity,
                            const std::string& reserved = "l4-on-demand") {
  core::Scheduling scheduling;
  scheduling.nodeSelector = {
      {kGpuName, gpu}, {kCapacity, capacity}, {"karpenter.k8s.aws/instance-gpu-count", "1"}};
  scheduling.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule"}};
  return {scheduling, {"main"}, "", reserved};
}

TEST_CASE(
    "Kueue's admission check: Active, Ready with the placement, Retry on a flavor that "
    "disagrees, Ready with nothing for a Job no GpuWorkload places") {
  std::map<std::string, json> applied;  // path -> body
  testing::ScriptedWrites rig([&](const FakeApiServer::Request& request) {
    applied[request.target.substr(0, request.target.find('?'))] = json::parse(request.body);
    FakeApiServer::Response response;
    response.body = request.body;
    return response;
  });
  auto lists = testing::scriptedCaches(
      {{admissionChecksPath(),
        {admissionCheck("gpu-placement", core::kKueueCheckController),
         admissionCheck("provisioning", "kueue.x-k8s.io/provisioning-request")}},
       {resourceFlavorsPath(),
        {flavor("l4-on-demand", "l4", "on-demand"), flavor("l40s-spot", "l40s", "spot")}},
       {kueueWorkloadsPath(""),
        {kueueWorkload("train-a"), kueueWorkload("train-b"), kueueWorkload("train-c"),
         kueueWorkload("train-d")}},
       {workloadsPath(""),
        {gpuWorkload("a", "train-a"), gpuWorkload("b", "train-b"), gpuWorkload("d", "train-d")}}});
  ObjectCaches caches(rig.context.get_executor(), lists, *testing::shippedCatalog(),
                      *testing::shippedRules(), CacheOptions{}, rig.logger, rig.clock);
  runtime::ControllerSet controllers(rig.context.get_executor(), rig.clock);
  KueueHandOffs handOffs;
  handOffs.set({core::TargetKind::Job, {"research", "train-a"}}, placedOn("l4", "on-demand"));
  // Placed on L40S spot, where Kueue reserved L4 quota.
  handOffs.set({core::TargetKind::Job, {"research", "train-b"}}, placedOn("l40s", "spot"));
  // Decided for an earlier reservation: not answered until its GpuWorkload
  // decides within this one.
  handOffs.set({core::TargetKind::Job, {"research", "train-d"}},
               placedOn("l40s", "spot", "l40s-spot"));
  KueueAdmissionReconciler reconciler(controllers, caches, handOffs, *rig.writes, rig.logger,
                                      rig.metrics, rig.clock);
  CHECK(controllers.size() == 2);

  asio::co_spawn(rig.context, caches.run(), asio::detached);
  bool ended = false;
  asio::co_spawn(rig.context, controllers.run(), [&](std::exception_ptr) { ended = true; });
  for (int i = 0; i < 100 && applied.size() < 4; ++i) {
    rig.context.restart();
    rig.context.run_for(std::chrono::milliseconds(100));
  }
  // Time for an answer train-d must not get.
  rig.context.restart();
  rig.context.run_for(std::chrono::milliseconds(300));
  controllers.stop();
  caches.stop();
  rig.context.restart();
  rig.context.run_for(std::chrono::milliseconds(200));
  CHECK(ended);
  REQUIRE(applied.size() == 4);
  for (const auto& request : rig.server.requests()) {
    CHECK(request.method == "PATCH");
    CHECK(request.target.find("fieldManager=gpu-placement-operator") != std::string::npos);
    CHECK(request.target.find("force=true") != std::string::npos);
  }

  // Our AdmissionCheck is set Active; the other controller's is left alone.
  const auto& check = applied.at(admissionChecksPath() + "/gpu-placement/status");
  CHECK(check["status"]["conditions"][0]["type"] == "Active");
  CHECK(check["status"]["conditions"][0]["status"] == "True");
  CHECK_FALSE(applied.count(admissionChecksPath() + "/provisioning/status"));

  const auto stateOf = [&](const std::string& job) {
    const auto& body = applied.at(kueueWorkloadStatusPath({"research", "job-" + job + "-1a2b3"}));
    REQUIRE(body["status"]["admissionChecks"].size() == 1);
    return body["status"]["admissionChecks"][0];
  };
  // Ready, with what the L4 flavor does not already give.
  const auto a = stateOf("train-a");
  CHECK(a["name"] == "gpu-placement");
  CHECK(a["state"] == "Ready");
  REQUIRE(a["podSetUpdates"].size() == 1);
  CHECK(a["podSetUpdates"][0]["name"] == "main");
  CHECK(a["podSetUpdates"][0]["nodeSelector"] ==
        json({{"karpenter.k8s.aws/instance-gpu-count", "1"}}));
  CHECK_FALSE(a["podSetUpdates"][0].contains("tolerations"));  // the flavor gives it
  // Retry, naming the key the flavor disagrees on.
  const auto b = stateOf("train-b");
  CHECK(b["state"] == "Retry");
  CHECK(b["requeueAfterSeconds"] == 30);
  CHECK(b["message"].get<std::string>().find(kGpuName + "=l4") != std::string::npos);
  CHECK_FALSE(b.contains("podSetUpdates"));
  // No GpuWorkload places train-c: Ready, nothing added.
  const auto c = stateOf("train-c");
  CHECK(c["state"] == "Ready");
  CHECK_FALSE(c.contains("podSetUpdates"));
  CHECK(c["message"].get<std::string>().find("no GpuWorkload targets Job train-c") !=
        std::string::npos);
  CHECK_FALSE(applied.count(kueueWorkloadStatusPath({"research", "job-train-d-1a2b3"})));

  const auto text = rig.metrics.render();
  CHECK(text.find("gpu_placement_kueue_admission_answers_total{state=\"Ready\"} 2") !=
        std::string::npos);
  CHECK(text.find("gpu_placement_kueue_admission_answers_total{state=\"Retry\"} 1") !=
        std::string::npos);
}

}  // namespace
}  // namespace gpuplacement::app
