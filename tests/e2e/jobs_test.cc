// Jobs and StatefulSets end to end on the simulated EKS cluster (a real
// kube-scheduler, kube-controller-manager with its Job and StatefulSet
// controllers, kwok nodes labelled as Karpenter labels them): the samples
// of config/samples/jobs.yaml, the chart's admission policies for labelled
// Jobs, and the API server's audit log, which shows what every pod was
// created from.
//
// - Seed 002's training Job, created without `suspend`, is suspended by the
//   chart's MutatingAdmissionPolicy, placed and resumed in one write, runs
//   on a trn1.32xlarge with its 16 Neuron devices, and no pod of it is ever
//   created from an unplaced template; when it completes, its run is priced.
// - The fine-tune Job gets its eight GPUs from the operator.
// - A StatefulSet's pods run on nodes of the placed type.
// - A Job still running when prices change is not moved.
// - Without the mutating policy, a labelled Job created unsuspended is
//   refused by the validating one.
#include <chrono>
#include <fstream>
#include <iomanip>
#include <sstream>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "base/time_format.h"
#include "support/cluster.h"
#include "support/suite.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::cluster;
using testing::conditionText;
using testing::ControlPlane;
using testing::jobPath;
using testing::json;
using testing::OperatorProcess;
using testing::readFile;
using testing::repoRoot;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;  // what each pod was created from, and the operator's writes
  options.pools = "config/sim/e2e-jobs.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kChart = repoRoot() + "/charts/gpu-placement-operator";
const std::string kAdmission =
    "helm template gpo " + kChart + " --validate --show-only templates/job-admission.yaml";

// The pods of an app label, and the instance type of the node each runs on.
struct PodOnNode {
  json pod;
  std::string phase;
  std::string instanceType;
};
std::vector<PodOnNode> podsOf(const std::string& ns, const std::string& app) {
  std::vector<PodOnNode> pods;
  auto list = cluster().get("/api/v1/namespaces/" + ns + "/pods?labelSelector=app%3D" + app);
  if (!list) {
    return pods;
  }
  for (const auto& pod : (*list)["items"]) {
    PodOnNode entry{pod, base::stringMember(pod["status"], "phase"), ""};
    const auto node = base::stringMember(pod["spec"], "nodeName");
    if (!node.empty()) {
      if (auto object = cluster().get("/api/v1/nodes/" + node)) {
        entry.instanceType =
            base::stringMember((*object)["metadata"]["labels"], "node.kubernetes.io/instance-type");
      }
    }
    pods.push_back(std::move(entry));
  }
  return pods;
}

// Pods of `app` running (or run to completion) on nodes of `type`: every
// one of them, and at least `count`.
bool podsRanOn(const std::string& ns, const std::string& app, const std::string& type,
               std::size_t count = 1) {
  const auto pods = podsOf(ns, app);
  if (pods.size() < count) {
    return false;
  }
  return std::all_of(pods.begin(), pods.end(), [&](const PodOnNode& pod) {
    return (pod.phase == "Running" || pod.phase == "Succeeded") && pod.instanceType == type;
  });
}

// The audit log's events, parsed (one JSON object a line).
std::vector<json> auditEvents() {
  std::vector<json> events;
  std::ifstream in(cluster().plane().dir() + "/logs/audit.log");
  std::string line;
  while (std::getline(in, line)) {
    auto event = json::parse(line, nullptr, false);
    if (!event.is_discarded()) {
      events.push_back(std::move(event));
    }
  }
  return events;
}

// The uid of the Job that owns a pod; empty when no Job does.
std::string jobOwner(const json& pod) {
  for (const auto& owner : base::memberOf(base::memberOf(pod, "metadata"), "ownerReferences")) {
    if (base::stringMember(owner, "kind") == "Job") {
      return base::stringMember(owner, "uid");
    }
  }
  return "";
}

// The operator's patches of one Job, by the audit log: their times.
std::vector<std::string> operatorPatchesOf(const std::string& ns, const std::string& job) {
  std::vector<std::string> times;
  for (const auto& event : auditEvents()) {
    const auto& ref = base::memberOf(event, "objectRef");
    if (base::stringMember(event, "stage") == "ResponseComplete" &&
        base::stringMember(event, "verb") == "patch" &&
        base::stringMember(base::memberOf(event, "user"), "username") == cluster().operatorUser() &&
        base::stringMember(ref, "resource") == "jobs" &&
        base::stringMember(ref, "namespace") == ns && base::stringMember(ref, "name") == job &&
        base::integerMember(base::memberOf(event, "responseStatus"), "code") == 200) {
      times.push_back(base::stringMember(event, "stageTimestamp"));
    }
  }
  return times;
}

// Every pod created for the Job (by its uid), by the audit log: when, and
// from what.
struct PodCreation {
  std::string time;
  json requested;  // the pod as the Job controller asked for it
};
std::vector<PodCreation> podCreationsOf(const std::string& ns, const std::string& jobUid) {
  std::vector<PodCreation> created;
  for (const auto& event : auditEvents()) {
    const auto& ref = base::memberOf(event, "objectRef");
    const auto& requested = base::memberOf(event, "requestObject");
    if (base::stringMember(event, "stage") == "ResponseComplete" &&
        base::stringMember(event, "verb") == "create" &&
        base::stringMember(ref, "resource") == "pods" &&
        base::stringMember(ref, "subresource").empty() &&
        base::stringMember(ref, "namespace") == ns && jobOwner(requested) == jobUid) {
      created.push_back({base::stringMember(event, "stageTimestamp"), requested});
    }
  }
  return created;
}

std::unique_ptr<OperatorProcess> startOperator() {
  auto op = std::make_unique<OperatorProcess>(cluster().operatorKubeconfig());
  REQUIRE_MESSAGE(op->waitReady(std::chrono::seconds(60)), op->log());
  return op;
}

// The samples, the chart's admission policies, and the operator.
struct Fixture {
  std::unique_ptr<OperatorProcess> op;
  json samples;  // config/samples/jobs.yaml's documents, as an array

  Fixture() {
    auto& plane = cluster().plane();
    const std::string file = plane.dir() + "/job-admission.yaml";
    const auto rendered = plane.withTools(kAdmission + " > " + file + " && cat " + file);
    REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
    REQUIRE_MESSAGE(rendered.out.find("kind: MutatingAdmissionPolicy") != std::string::npos,
                    "Kubernetes 1.36 serves MutatingAdmissionPolicy v1: the chart renders it");
    const auto policies = plane.withTools("kubectl apply -f " + file);
    REQUIRE_MESSAGE(policies.exitCode == 0, policies.err);
    op = startOperator();
    auto documents =
        base::parseYamlDocuments(readFile(repoRoot() + "/config/samples/jobs.yaml"), "jobs.yaml");
    REQUIRE_MESSAGE(documents.ok(), gpuplacement::testing::whyNot(documents));
    samples = json(*documents);
    REQUIRE_MESSAGE(policyInForce(), "the mutating policy never took effect");
    for (auto document : samples) {
      if (document["kind"] == "Job" && document["metadata"]["name"] == "llama-training") {
        // Seed 002's Job as a team writes it, without `suspend`: the
        // chart's policy suspends it.
        document["spec"].erase("suspend");
        auto created = cluster().create(Cluster::pathOf("batch/v1", "Job", "research"), document);
        REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
        REQUIRE((*created)["spec"]["suspend"] == true);
        continue;
      }
      cluster().apply(document.dump());  // JSON is YAML
    }
  }
  ~Fixture() {
    if (op) {
      op->stop();  // after the tests: nothing is checked from a destructor at exit
    }
  }

  // Policies load into the API server asynchronously: probe with a
  // labelled Job of a namespace of its own until one comes back suspended.
  static bool policyInForce() {
    auto& c = cluster();
    c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: admission-probe}\n");
    const auto probe = *base::parseYaml(R"(apiVersion: batch/v1
kind: Job
metadata: {name: probe, namespace: admission-probe, labels: {gpuplacement.io/workload: probe}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: probe, image: busybox:1.36}]
)",
                                        "probe");
    return c.waitFor(
        [&] {
          (void)c.remove(jobPath("admission-probe", "probe") + "?propagationPolicy=Background");
          auto made = c.create(Cluster::pathOf("batch/v1", "Job", "admission-probe"), probe);
          return made && base::memberOf((*made)["spec"], "suspend") == true;
        },
        std::chrono::seconds(90), std::chrono::seconds(1));
  }
};

Fixture& fixture() {
  static Fixture instance;
  return instance;
}

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

}  // namespace

TEST_CASE(
    "seed 002's training Job: suspended by the chart, placed and resumed in one write, run "
    "on trn1 with its Neuron devices, no pod from an unplaced template, its run priced") {
  auto& f = fixture();
  auto& c = cluster();
  const std::string ns = "research";
  const auto start = std::chrono::steady_clock::now();
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        return conditionText(workloadPath(ns, "llama-training"), "Applied") ==
                               "True/Applied";
                      },
                      std::chrono::seconds(60)),
                  f.op->log());
  const auto placedAfter = std::chrono::steady_clock::now() - start;
  const auto status = c.mustGet(workloadPath(ns, "llama-training"))["status"];
  CHECK(status["placement"]["instanceType"] == "trn1.32xlarge");
  CHECK(status["placement"]["acceleratorCount"] == 16);

  REQUIRE_MESSAGE(c.waitFor([&] { return podsRanOn(ns, "llama-training", "trn1.32xlarge"); },
                            std::chrono::seconds(60)),
                  f.op->log());
  const auto pods = podsOf(ns, "llama-training");
  const auto& pod = pods.front().pod["spec"];
  CHECK(pod["containers"][0]["resources"]["limits"]["aws.amazon.com/neuron"] == "16");
  bool tolerates = false;
  for (const auto& toleration : pod["tolerations"]) {
    tolerates = tolerates || toleration["key"] == "aws.amazon.com/neuron";
  }
  CHECK(tolerates);

  // The audit log: the operator wrote the Job once, and every pod the Job
  // controller created came after that write, from the placed template.
  const auto patches = operatorPatchesOf(ns, "llama-training");
  REQUIRE(patches.size() == 1);
  const auto job = c.mustGet(jobPath(ns, "llama-training"));
  const auto creations = podCreationsOf(ns, job["metadata"]["uid"]);
  REQUIRE_FALSE(creations.empty());
  // Karpenter's labels here (the policy's Auto scheme detects them).
  const auto placedSelector = job["spec"]["template"]["spec"]["nodeSelector"];
  CHECK(placedSelector["karpenter.k8s.aws/instance-accelerator-count"] == "16");
  for (const auto& creation : creations) {
    CAPTURE(creation.time);
    CHECK(*base::parseRfc3339(creation.time) > *base::parseRfc3339(patches.front()));
    CHECK(base::memberOf(base::memberOf(creation.requested, "spec"), "nodeSelector") ==
          placedSelector);
  }

  // kwok runs its pod to completion: the run is priced at the placement.
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        return conditionText(workloadPath(ns, "llama-training"), "Ready") ==
                               "True/JobComplete";
                      },
                      std::chrono::seconds(60)),
                  f.op->log());
  CHECK(c.waitFor(
      [&] { return c.mustGet(workloadPath(ns, "llama-training"))["status"].contains("run"); }));
  const auto run = c.mustGet(workloadPath(ns, "llama-training"))["status"]["run"];
  CHECK(run["outcome"] == "Complete");
  CHECK(run["instanceType"] == "trn1.32xlarge");
  const double hourly = std::stod(run["hourlyCost"].get<std::string>());
  CHECK(hourly == doctest::Approx(21.50));
  CHECK(std::stod(run["cost"].get<std::string>()) ==
        doctest::Approx(hourly * run["durationSeconds"].get<double>() / 3600).epsilon(0.01));
  MESSAGE("llama-training: placed " << fixed(std::chrono::duration<double>(placedAfter).count(), 1)
                                    << " s after the test began; " << creations.size()
                                    << " pod(s) created, the first " << creations.front().time
                                    << ", after the operator's patch at " << patches.front()
                                    << "; run " << run.dump());
}

TEST_CASE("the fine-tune Job gets its eight GPUs from the operator, on the placed p4d") {
  auto& f = fixture();
  auto& c = cluster();
  REQUIRE_MESSAGE(c.waitFor([&] { return podsRanOn("research", "llama-finetune", "p4d.24xlarge"); },
                            std::chrono::seconds(60)),
                  f.op->log());
  const auto pods = podsOf("research", "llama-finetune");
  const auto& container = pods.front().pod["spec"]["containers"][0];
  CHECK(container["resources"]["limits"]["nvidia.com/gpu"] == "8");
  CHECK(container["resources"]["requests"]["cpu"] == "8");  // the team's own, kept
  CHECK(operatorPatchesOf("research", "llama-finetune").size() == 1);
}

TEST_CASE("a StatefulSet's pods run on nodes of the placed type; Ready from its rollout") {
  auto& f = fixture();
  auto& c = cluster();
  REQUIRE_MESSAGE(c.waitFor([&] { return podsRanOn("ml-serving", "reranker", "g4dn.xlarge"); },
                            std::chrono::seconds(60)),
                  f.op->log());
  CHECK(c.waitFor(
      [&] {
        return conditionText(workloadPath("ml-serving", "reranker"), "Ready") ==
               "True/RolloutComplete";
      },
      std::chrono::seconds(60)));
  CHECK(c.mustGet(workloadPath("ml-serving", "reranker"))["status"]["applied"]["targetKind"] ==
        "StatefulSet");
}

TEST_CASE("a Job still running when prices change is not moved; the better type is a note") {
  auto& f = fixture();
  auto& c = cluster();
  const std::string ns = "research";
  // A long training run: kwok lets its pod run for ten minutes.
  c.apply(R"(apiVersion: batch/v1
kind: Job
metadata: {name: long-train, namespace: research, labels: {gpuplacement.io/workload: long-train}}
spec:
  suspend: true
  template:
    metadata:
      labels: {app: long-train}
      annotations: {pod-complete.stage.kwok.x-k8s.io/delay: 10m}
    spec:
      restartPolicy: Never
      containers:
      - {name: train, image: public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2}
---
apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: long-train, namespace: research}
spec:
  targetRef: {kind: Job, name: long-train}
  workload: {kind: Training}
  model: {parameters: 7B, precision: bf16}
  objective: CostOptimized
  constraints: {tiers: [Trainium, NVIDIA]}
)");
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        return conditionText(workloadPath(ns, "long-train"), "Ready") ==
                               "True/JobRunning";
                      },
                      std::chrono::seconds(60)),
                  f.op->log());
  const std::string type =
      c.mustGet(workloadPath(ns, "long-train"))["status"]["placement"]["instanceType"];
  REQUIRE(podsRanOn(ns, "long-train", type));
  const std::string node =
      base::stringMember(podsOf(ns, "long-train").front().pod["spec"], "nodeName");

  // Its type becomes five times dearer: a pending workload would move.
  c.apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: PlacementPolicy\nmetadata: {name: default}\n"
      "spec:\n  replacement: {cooldown: 0s, minSavingsPercent: 1}\n  prices:\n"
      "  - {instanceType: " +
      type + ", onDemand: \"107.50\"}\n");
  REQUIRE_MESSAGE(
      c.waitFor(
          [&] {
            return c.mustGet(workloadPath(ns, "long-train"))["status"].contains("recommendation");
          },
          std::chrono::seconds(60)),
      f.op->log());
  const auto status = c.mustGet(workloadPath(ns, "long-train"))["status"];
  CHECK(status["placement"]["instanceType"] == type);
  CHECK(status["recommendation"]["instanceType"] != type);
  CHECK(status["recommendation"]["note"].get<std::string>().find("a running Job is never moved") !=
        std::string::npos);
  CHECK(operatorPatchesOf(ns, "long-train").size() == 1);
  const auto pods = podsOf(ns, "long-train");
  REQUIRE(pods.size() == 1);
  CHECK(pods.front().phase == "Running");
  CHECK(base::stringMember(pods.front().pod["spec"], "nodeName") == node);
  MESSAGE("long-train held on " << type << " (" << node << "); recommended "
                                << status["recommendation"]["instanceType"]);
  REQUIRE(c.remove(jobPath(ns, "long-train") + "?propagationPolicy=Background").ok());
  REQUIRE(
      c.remove(Cluster::pathOf("gpuplacement.io/v1alpha1", "PlacementPolicy", "", "default")).ok());
}

TEST_CASE("without the mutating policy, a labelled Job created unsuspended is refused") {
  fixture();
  auto& c = cluster();
  auto& plane = c.plane();
  const auto removed = plane.withTools(
      "kubectl delete mutatingadmissionpolicybinding,mutatingadmissionpolicy "
      "gpo-gpu-placement-operator-suspend-jobs");
  REQUIRE_MESSAGE(removed.exitCode == 0, removed.err);
  const auto job = *base::parseYaml(R"(apiVersion: batch/v1
kind: Job
metadata: {name: eager, namespace: research, labels: {gpuplacement.io/workload: eager}}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: train, image: busybox:1.36}]
)",
                                    "job");
  std::string refusal;
  REQUIRE(c.waitFor(
      [&] {
        auto made = c.create(Cluster::pathOf("batch/v1", "Job", "research"), job);
        if (made) {  // the mutating policy still loaded: it came back suspended
          (void)c.remove(jobPath("research", "eager") + "?propagationPolicy=Background");
          return false;
        }
        refusal = made.error().describe();
        return true;
      },
      std::chrono::seconds(60), std::chrono::seconds(1)));
  CHECK(refusal.find("must be created with spec.suspend: true") != std::string::npos);
}

}  // namespace gpuplacement
