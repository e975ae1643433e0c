// A real Kueue beside the simulated cluster with Karpenter (scripts/
// controlplane start --kinds kueue: Kueue v0.19.2, its webhooks reached
// through a Service naming 127.0.0.1): the team's queue of
// config/samples/kueue/queues.yaml (an L4 on-demand and an L40S spot
// flavor, two GPUs of each) and Jobs as config/samples/kueue/jobs.yaml
// writes them, not suspended. Kueue's webhook suspends each when it is
// created and makes its Workload; Kueue admits the first on the L4 flavor
// and the second, the L4 quota used, on the L40S spot one, writing the
// flavor's nodeLabels and toleration into the Job's template, and their
// pods run on nodes of that flavor that Karpenter launches; a third waits,
// unadmitted and suspended, until the first is deleted, and then runs on the
// L4s. No operator there (the sample's gpu-placement check taken out of
// the ClusterQueue): the ground the operator's Kueue integration stands on.
//
// Then the operator as the admission check controller of that check: a
// queued Job with a GpuWorkload is never written by the operator; the
// check goes Ready with the placement's selector as podSetUpdates, Kueue
// admits it on the L4 flavor and merges them, and its pods run on L4s.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/cluster.h"
#include "support/control_plane.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using testing::readFile;
using testing::repoRoot;
using namespace std::chrono_literals;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/demo.yaml";
  options.karpenter = true;
  options.kinds = {"kueue"};
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "research";
const std::string kSamples = repoRoot() + "/config/samples/kueue";
const std::string kGpuName = "karpenter.k8s.aws/instance-gpu-name";
const std::string kCapacityType = "karpenter.sh/capacity-type";

// The suite's cluster as the admin, this project's CRDs installed (the
// operator's case).
Cluster& cluster() {
  return Cluster::withCrds();
}

std::string kueuePath(const std::string& kind, const std::string& ns = "",
                      const std::string& name = "") {
  return Cluster::pathOf("kueue.x-k8s.io/v1beta2", kind, ns, name);
}
std::string jobPath(const std::string& name = "") {
  return Cluster::pathOf("batch/v1", "Job", kNamespace, name);
}

// The condition `type` of an object as "Status/Reason"; empty when absent.
std::string conditionOf(const json& object, const std::string& type) {
  for (const auto& condition :
       base::memberOf(base::memberOf(object, "status"), "conditions").items()) {
    if (base::stringMember(condition.value(), "type") == type) {
      return base::stringMember(condition.value(), "status") + "/" +
             base::stringMember(condition.value(), "reason");
    }
  }
  return "";
}
// The Job of the sample under `name`, its pods completing `runFor` after
// they start (kwok's pod-complete delay).
json sampleJob(const std::string& name, const std::string& runFor) {
  auto documents = base::parseYamlDocuments(readFile(kSamples + "/jobs.yaml"), "jobs.yaml");
  REQUIRE_MESSAGE(documents.ok(), testing::whyNot(documents));
  REQUIRE(documents->size() == 1);
  json job = documents->front();
  job["metadata"]["name"] = name;
  job["spec"]["template"]["metadata"]["labels"]["app"] = name;
  job["spec"]["template"]["metadata"]["annotations"]["pod-complete.stage.kwok.x-k8s.io/delay"] =
      runFor;
  return job;
}

// Creates the Job; what the API server stored, after Kueue's webhook.
json createJob(Cluster& c, const json& job) {
  auto created = c.create(jobPath(), job);
  REQUIRE_MESSAGE(created.ok(), testing::whyNot(created));
  return *created;
}

// The Workload Kueue made for the Job `name` (owned by it); null while
// there is none.
json workloadOf(Cluster& c, const std::string& job) {
  const auto list = c.mustGet(kueuePath("Workload", kNamespace));
  for (const auto& workload : list["items"]) {
    for (const auto& owner : base::memberOf(workload["metadata"], "ownerReferences").items()) {
      if (base::stringMember(owner.value(), "kind") == "Job" &&
          base::stringMember(owner.value(), "name") == job) {
        return workload;
      }
    }
  }
  return nullptr;
}

// The flavor Kueue admitted the Job's GPUs on; empty until admitted.
std::string admittedFlavor(Cluster& c, const std::string& job) {
  const auto workload = workloadOf(c, job);
  if (workload.is_null() || conditionOf(workload, "Admitted").rfind("True/", 0) != 0) {
    return "";
  }
  const auto& assignments =
      base::memberOf(base::memberOf(workload["status"], "admission"), "podSetAssignments");
  if (!assignments.is_array() || assignments.empty()) {
    return "";
  }
  return base::stringMember(base::memberOf(assignments[0], "flavors"), "nvidia.com/gpu");
}

struct Where {
  std::string gpuName;
  std::string capacityType;
};

// Why the Job's pods are not `count`, Running, on nodes of the GPU and
// capacity type; empty once they are.
std::string notRunningOn(Cluster& c, const std::string& job, std::size_t count,
                         const Where& where) {
  const auto pods = c.mustGet("/api/v1/namespaces/" + kNamespace +
                              "/pods?labelSelector=batch.kubernetes.io%2Fjob-name%3D" + job);
  std::string why;
  std::size_t live = 0;
  for (const auto& pod : pods["items"]) {
    if (pod["metadata"].contains("deletionTimestamp")) {
      continue;
    }
    ++live;
    const auto name = base::stringMember(pod["metadata"], "name");
    const auto phase = base::stringMember(pod["status"], "phase");
    const auto node = base::stringMember(pod["spec"], "nodeName");
    if (node.empty()) {
      why += name + " is " + phase + " on no node; ";
      continue;
    }
    const auto labels = c.mustGet("/api/v1/nodes/" + node)["metadata"]["labels"];
    const auto gpu = base::stringMember(labels, kGpuName.c_str());
    const auto capacity = base::stringMember(labels, kCapacityType.c_str());
    if (phase != "Running" || gpu != where.gpuName || capacity != where.capacityType) {
      why += name + " is " + phase + " on " + node + " (" + gpu + ", " + capacity + "); ";
    }
  }
  if (live != count) {
    why += std::to_string(live) + " pods of " + std::to_string(count);
  }
  return why;
}

// The Job's template carries what Kueue's admission on the flavor writes:
// the flavor's nodeLabels as its nodeSelector and the flavor's toleration.
void checkTemplateOf(Cluster& c, const std::string& job, const Where& where) {
  const auto object = c.mustGet(jobPath(job));
  CAPTURE(job);
  CHECK(object["spec"]["suspend"] == false);
  const auto& spec = object["spec"]["template"]["spec"];
  CHECK(base::stringMember(base::memberOf(spec, "nodeSelector"), kGpuName.c_str()) ==
        where.gpuName);
  CHECK(base::stringMember(base::memberOf(spec, "nodeSelector"), kCapacityType.c_str()) ==
        where.capacityType);
  bool tolerated = false;
  for (const auto& toleration : base::memberOf(spec, "tolerations").items()) {
    tolerated |= base::stringMember(toleration.value(), "key") == "nvidia.com/gpu";
  }
  CHECK_MESSAGE(tolerated, spec.dump());
}

// Kueue keeps the sample's ClusterQueue inactive until its flavors exist
// and each of its admission checks is Active.
void waitForActiveQueue(Cluster& c) {
  const auto queue = kueuePath("ClusterQueue", "", "gpu-training");
  REQUIRE_MESSAGE(
      c.waitFor([&] { return conditionOf(c.mustGet(queue), "Active").rfind("True/", 0) == 0; }, 60s,
                250ms),
      c.mustGet(queue).dump());
}

// Waits until `count` pods of the Job run on nodes of `where`.
void requireRunningOn(Cluster& c, const std::string& job, std::size_t count, const Where& where) {
  std::string why;
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        why = notRunningOn(c, job, count, where);
                        return why.empty();
                      },
                      180s, 500ms),
                  why);
}

TEST_CASE("Kueue suspends queued Jobs, admits them on the flavors with quota, holds the rest") {
  auto& c = cluster();
  c.apply(readFile(kSamples + "/queues.yaml"));
  // Kueue alone: no operator answers the sample's gpu-placement check.
  auto unchecked = c.patch(kueuePath("ClusterQueue", "", "gpu-training"),
                           {{"spec", {{"admissionChecksStrategy", nullptr}}}});
  REQUIRE_MESSAGE(unchecked.ok(), testing::whyNot(unchecked));
  waitForActiveQueue(c);
  const Where l4{"l4", "on-demand"};
  const Where l40sSpot{"l40s", "spot"};

  // The first Job, created running as the team writes it: Kueue's webhook
  // suspends it on creation, and Kueue makes its Workload, admits it on
  // the first flavor and resumes it there.
  const auto first = createJob(c, sampleJob("finetune-a", "10m"));
  CHECK_MESSAGE(first["spec"]["suspend"] == true, first["spec"].dump());
  std::string flavor;
  REQUIRE_MESSAGE(
      c.waitFor([&] { return !(flavor = admittedFlavor(c, "finetune-a")).empty(); }, 60s, 250ms),
      workloadOf(c, "finetune-a").dump());
  CHECK(flavor == "l4-on-demand");
  checkTemplateOf(c, "finetune-a", l4);
  requireRunningOn(c, "finetune-a", 2, l4);

  // The second: the L4 quota is used, so Kueue admits it on the L40S spot
  // flavor, and Karpenter launches spot L40S nodes for it.
  const auto second = createJob(c, sampleJob("finetune-b", "10m"));
  CHECK(second["spec"]["suspend"] == true);
  REQUIRE_MESSAGE(
      c.waitFor([&] { return !(flavor = admittedFlavor(c, "finetune-b")).empty(); }, 60s, 250ms),
      workloadOf(c, "finetune-b").dump());
  CHECK(flavor == "l40s-spot");
  checkTemplateOf(c, "finetune-b", l40sSpot);
  requireRunningOn(c, "finetune-b", 2, l40sSpot);

  // The third finds no quota on either flavor: its Workload waits, not
  // admitted, and its Job stays suspended with no pod, while the first
  // runs (for 10 minutes: no machine is slow enough to end it first).
  const auto third = createJob(c, sampleJob("finetune-c", "10m"));
  CHECK(third["spec"]["suspend"] == true);
  REQUIRE(c.waitFor([&] { return !workloadOf(c, "finetune-c").is_null(); }, 30s, 250ms));
  REQUIRE(c.waitFor(
      [&] {
        return conditionOf(workloadOf(c, "finetune-c"), "QuotaReserved").rfind("False/", 0) == 0;
      },
      30s, 250ms));
  for (int i = 0; i < 5; ++i) {
    const auto waiting = workloadOf(c, "finetune-c");
    CHECK_MESSAGE(conditionOf(waiting, "Admitted").rfind("True/", 0) != 0, waiting.dump());
    CHECK(c.mustGet(jobPath("finetune-c"))["spec"]["suspend"] == true);
    CHECK(notRunningOn(c, "finetune-c", 0, l4).empty());
    std::this_thread::sleep_for(1s);
  }

  // The first is deleted: its quota goes back to the L4 flavor, where
  // Kueue admits the third, not before.
  auto removed = c.remove(jobPath("finetune-a") + "?propagationPolicy=Background");
  REQUIRE_MESSAGE(removed.ok(), testing::whyNot(removed));
  REQUIRE_MESSAGE(
      c.waitFor([&] { return !(flavor = admittedFlavor(c, "finetune-c")).empty(); }, 120s, 250ms),
      workloadOf(c, "finetune-c").dump());
  CHECK(flavor == "l4-on-demand");
  checkTemplateOf(c, "finetune-c", l4);
  requireRunningOn(c, "finetune-c", 2, l4);
  MESSAGE("finetune-a and finetune-c on l4-on-demand, finetune-b on l40s-spot");

  for (const char* job : {"finetune-a", "finetune-b", "finetune-c"}) {
    (void)c.remove(jobPath(job) + "?propagationPolicy=Background");
  }
}

// Our check's entry on the Job's Workload; null while there is none.
json checkOf(Cluster& c, const std::string& job) {
  const auto workload = workloadOf(c, job);
  if (workload.is_null()) {
    return nullptr;
  }
  for (const auto& check :
       base::memberOf(base::memberOf(workload, "status"), "admissionChecks").items()) {
    if (base::stringMember(check.value(), "name") == "gpu-placement") {
      return check.value();
    }
  }
  return nullptr;
}

TEST_CASE("the operator places a queued Job through Kueue's admission check, never writing it") {
  auto& c = cluster();
  c.apply(readFile(kSamples + "/queues.yaml"));
  // The sample's ClusterQueue, with its gpu-placement check again.
  auto checked = c.patch(kueuePath("ClusterQueue", "", "gpu-training"),
                         {{"spec",
                           {{"admissionChecksStrategy",
                             {{"admissionChecks", json::array({{{"name", "gpu-placement"}}})}}}}}});
  REQUIRE_MESSAGE(checked.ok(), testing::whyNot(checked));
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  // The operator sets its AdmissionCheck Active, and with it Kueue the
  // ClusterQueue.
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        return conditionOf(
                                   c.mustGet(kueuePath("AdmissionCheck", "", "gpu-placement")),
                                   "Active") == "True/Ready";
                      },
                      60s, 250ms),
                  c.mustGet(kueuePath("AdmissionCheck", "", "gpu-placement")).dump() << op.log());
  waitForActiveQueue(c);

  // The GpuWorkload first, then the Job as the team writes it.
  const std::string name = "finetune-placed";
  const std::string gpuWorkloadPath =
      Cluster::pathOf("gpuplacement.io/v1alpha1", "GpuWorkload", kNamespace, name);
  auto created = c.create(
      Cluster::pathOf("gpuplacement.io/v1alpha1", "GpuWorkload", kNamespace),
      {{"apiVersion", "gpuplacement.io/v1alpha1"},
       {"kind", "GpuWorkload"},
       {"metadata", {{"name", name}, {"namespace", kNamespace}}},
       {"spec",
        {{"targetRef", {{"kind", "Job"}, {"name", name}}},
         {"workload", {{"kind", "FineTuning"}}},
         {"model", {{"parameters", "1B"}, {"precision", "bf16"}, {"framework", "PyTorch"}}},
         {"objective", "CostOptimized"},
         {"constraints",
          {{"capacityType", "OnDemand"},
           {"instanceTypes", json::array({"g6.xlarge", "g6.2xlarge"})}}}}}});
  REQUIRE_MESSAGE(created.ok(), testing::whyNot(created));
  createJob(c, sampleJob(name, "60s"));

  // The check goes Ready with what the L4 flavor does not give: the
  // placement's other node labels (under Karpenter's, one L4 of 22888 MiB).
  json check;
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        check = checkOf(c, name);
                        return !check.is_null() && base::stringMember(check, "state") == "Ready";
                      },
                      120s, 250ms),
                  workloadOf(c, name).dump() << "\n"
                                             << c.mustGet(gpuWorkloadPath)["status"].dump());
  REQUIRE_MESSAGE(check.contains("podSetUpdates"), check.dump());
  const auto selector = check["podSetUpdates"][0]["nodeSelector"];
  REQUIRE_MESSAGE(selector.is_object(), check.dump());
  CHECK_MESSAGE(!selector.empty(), check.dump());
  CHECK_MESSAGE(base::stringMember(selector, "karpenter.k8s.aws/instance-gpu-count") == "1",
                check.dump());
  CHECK_FALSE(selector.contains(kGpuName));  // the flavor's: never said twice

  std::string flavor;
  REQUIRE_MESSAGE(
      c.waitFor([&] { return !(flavor = admittedFlavor(c, name)).empty(); }, 120s, 250ms),
      workloadOf(c, name).dump());
  CHECK(flavor == "l4-on-demand");
  // Kueue merged the flavor's labels and the operator's selector.
  const auto job = c.mustGet(jobPath(name));
  const auto& templateSelector = job["spec"]["template"]["spec"]["nodeSelector"];
  CHECK(base::stringMember(templateSelector, kGpuName.c_str()) == "l4");
  for (const auto& [key, value] : selector.items()) {
    CAPTURE(key);
    CHECK(base::memberOf(templateSelector, key.c_str()) == value);
  }
  requireRunningOn(c, name, 2, {"l4", "on-demand"});
  CHECK_MESSAGE(
      c.waitFor([&] { return c.conditionOf(gpuWorkloadPath, "Applied") == "True/ThroughKueue"; },
                60s, 250ms),
      c.mustGet(gpuWorkloadPath)["status"].dump());
  CHECK(c.conditionMessageOf(gpuWorkloadPath, "Applied").find("gpu-placement") !=
        std::string::npos);

  // Never written by the operator: no ownership record, no patch.
  const auto annotations = base::memberOf(c.mustGet(jobPath(name))["metadata"], "annotations");
  CHECK_FALSE(annotations.contains("gpuplacement.io/owned-fields"));
  CHECK(c.writesBy(c.operatorUser(), "patch", "jobs", kNamespace, name) == 0);
  const auto workload = workloadOf(c, name);
  CHECK_MESSAGE(workload.dump().find("FailedToStart") == std::string::npos, workload.dump());
  MESSAGE(name << " admitted on " << flavor << " with " << selector.dump()
               << " from the gpu-placement check");

  (void)c.remove(jobPath(name) + "?propagationPolicy=Background");
  (void)c.remove(gpuWorkloadPath);
  op.stop();
}

}  // namespace
}  // namespace gpuplacement
