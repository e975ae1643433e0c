// StatefulSets and Jobs as targets, the operator binary against a real
// kube-apiserver (the pinned 1.36 release; no controller-manager runs, so
// the tests write what it would): a StatefulSet placed, rolled out and
// given back; a suspended Job placed and resumed in one patch, counted in
// the audit log; a started Job held through a price change; a Job created
// unsuspended left alone; and the chart's admission policies for labelled
// Jobs.
#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/cluster.h"
#include "support/suite.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::cluster;
using testing::ControlPlane;
using testing::jobPath;
using testing::json;
using testing::OperatorProcess;
using testing::statefulSetPath;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;  // counts the operator's writes to each Job
  ControlPlane::configure(options);
  return true;
}();

void createNamespace(const std::string& ns) {
  cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n");
}

// Seed 002's training Job, as a team writes it: its own zone selector and
// toleration, no devices yet. `suspend`: what the manifest says.
std::string trainingJob(const std::string& ns, const std::string& name, bool suspend,
                        const std::string& labels = "", const std::string& resources = "") {
  return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name + ", namespace: " + ns +
         (labels.empty() ? "" : ", labels: {" + labels + "}") + "}\nspec:\n" +
         (suspend ? "  suspend: true\n" : "") + R"(  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {topology.kubernetes.io/zone: us-east-1a}
      tolerations:
      - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}
      containers:
      - name: train
        image: public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2
        command: [torchrun, train.py]
)" + resources;
}

void createWorkload(const std::string& ns, const std::string& name, const std::string& kind,
                    const std::string& target, const std::string& specTail) {
  cluster().apply("apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " +
                  name + ", namespace: " + ns + "}\nspec:\n  targetRef: {kind: " + kind +
                  ", name: " + target + "}\n" + specTail);
}

// Seed 002's answer for training: Trainium.
const char* kTraining = R"(  workload: {kind: Training}
  model: {parameters: 7B, precision: bf16}
  objective: CostOptimized
  constraints: {tiers: [Trainium]}
)";

std::string conditionText(const std::string& path, const std::string& type) {
  return cluster().conditionOf(path, type);
}
std::string conditionMessage(const std::string& path, const std::string& type) {
  return cluster().conditionMessageOf(path, type);
}
// The operator's writes of one verb to one object, by the audit log.
std::size_t operatorCalls(const std::string& verb, const std::string& resource,
                          const std::string& ns, const std::string& name) {
  return cluster().writesBy(cluster().operatorUser(), verb, resource, ns, name);
}

// What the Job controller writes when it starts a Job, since none runs here.
void markStarted(const std::string& ns, const std::string& name) {
  auto written =
      cluster().patch(jobPath(ns, name) + "/status",
                      json{{"status", {{"startTime", "2026-11-25T10:00:00Z"}, {"active", 1}}}});
  REQUIRE_MESSAGE(written.ok(), gpuplacement::testing::whyNot(written));
}

}  // namespace

TEST_CASE("a StatefulSet is placed next to the team's fields, rolled out, and given back") {
  auto& c = cluster();
  const std::string ns = "sts";
  createNamespace(ns);
  c.apply(R"(apiVersion: apps/v1
kind: StatefulSet
metadata: {name: cache, namespace: sts}
spec:
  replicas: 2
  serviceName: cache
  selector: {matchLabels: {app: cache}}
  template:
    metadata: {labels: {app: cache}}
    spec:
      nodeSelector: {topology.kubernetes.io/zone: us-east-1a}
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.3
        resources:
          requests: {cpu: "2", memory: 8Gi}
)");
  const auto original = c.mustGet(statefulSetPath(ns, "cache"))["spec"]["template"]["spec"];
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  createWorkload(ns, "cache", "StatefulSet", "cache", R"(  workload: {kind: Inference}
  model: {parameters: 7B}
  objective: CostOptimized
  constraints: {tiers: [NVIDIA]}
)");
  REQUIRE_MESSAGE(c.waitFor([&] {
    return conditionText(workloadPath(ns, "cache"), "Applied") == "True/Applied";
  }),
                  op.log());
  const auto status = c.mustGet(workloadPath(ns, "cache"))["status"];
  CHECK(status["applied"]["targetKind"] == "StatefulSet");
  CHECK(status["applied"]["targetName"] == "cache");
  CHECK(status["placement"]["replicas"] == 2);
  const auto placed = c.mustGet(statefulSetPath(ns, "cache"));
  const auto& spec = placed["spec"]["template"]["spec"];
  CHECK(spec["nodeSelector"]["topology.kubernetes.io/zone"] == "us-east-1a");
  CHECK(spec["nodeSelector"]["node.kubernetes.io/instance-type"] ==
        status["placement"]["instanceType"]);
  CHECK(spec["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
  CHECK(spec["containers"][0]["resources"]["requests"]["cpu"] == "2");
  CHECK(placed["metadata"]["annotations"].contains("gpuplacement.io/owned-fields"));
  CHECK(conditionText(workloadPath(ns, "cache"), "Ready") == "False/RolloutInProgress");
  CHECK(conditionMessage(workloadPath(ns, "cache"), "Ready").find("StatefulSet cache") !=
        std::string::npos);

  // What the StatefulSet controller reports once both pods run the new
  // revision: the rollout is followed through its own status.
  c.completeRollout(ns, "cache", "StatefulSet");
  CHECK(c.waitFor(
      [&] { return conditionText(workloadPath(ns, "cache"), "Ready") == "True/RolloutComplete"; }));

  REQUIRE(c.remove(workloadPath(ns, "cache")).ok());
  CHECK_MESSAGE(c.waitFor([&] {
    return c.mustGet(statefulSetPath(ns, "cache"))["spec"]["template"]["spec"]["nodeSelector"] ==
           original["nodeSelector"];
  }),
                op.log());
  const auto released = c.mustGet(statefulSetPath(ns, "cache"));
  CHECK(released["spec"]["template"]["spec"]["containers"] == original["containers"]);
  CHECK_FALSE(
      base::memberOf(released["metadata"], "annotations").contains("gpuplacement.io/owned-fields"));
  CHECK(op.stop() == 0);
}

TEST_CASE("a suspended Job: placed and resumed in one patch, held once it runs, then released") {
  auto& c = cluster();
  const std::string ns = "jobs";
  createNamespace(ns);
  c.apply(trainingJob(ns, "llama-training", true, "gpuplacement.io/workload: llama-training"));
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  createWorkload(ns, "llama-training", "Job", "llama-training", kTraining);
  REQUIRE_MESSAGE(c.waitFor([&] {
    return conditionText(workloadPath(ns, "llama-training"), "Applied") == "True/Applied";
  }),
                  op.log());
  const auto job = c.mustGet(jobPath(ns, "llama-training"));
  CHECK(job["spec"]["suspend"] == false);
  const auto& pod = job["spec"]["template"]["spec"];
  const auto status = c.mustGet(workloadPath(ns, "llama-training"))["status"];
  const std::string type = status["placement"]["instanceType"];
  CHECK(type.rfind("trn", 0) == 0);
  CHECK(pod["nodeSelector"]["node.kubernetes.io/instance-type"] == type);
  CHECK(pod["nodeSelector"]["topology.kubernetes.io/zone"] == "us-east-1a");  // the team's
  REQUIRE(pod["tolerations"].size() == 2);
  CHECK(pod["tolerations"][1]["key"] == "aws.amazon.com/neuron");
  const auto& limits = pod["containers"][0]["resources"]["limits"];
  CHECK(limits["aws.amazon.com/neuron"] ==
        std::to_string(status["placement"]["acceleratorCount"].get<int>()));
  // Devices requested and limited alike; the host memory (the runtime and
  // a checkpoint shard, status.placement.hostMemoryGiB) requested only.
  const auto& requests = pod["containers"][0]["resources"]["requests"];
  CHECK(requests["aws.amazon.com/neuron"] == limits["aws.amazon.com/neuron"]);
  CHECK(requests["memory"] == "5888Mi");
  CHECK(status["placement"]["hostMemoryGiB"] == "5.75");
  CHECK_FALSE(limits.contains("memory"));
  CHECK(status["applied"]["targetKind"] == "Job");
  CHECK(conditionMessage(workloadPath(ns, "llama-training"), "Applied")
            .find("resumed in the same write") != std::string::npos);
  // The directives, the devices and the resume: one write, by the audit log.
  CHECK(operatorCalls("patch", "jobs", ns, "llama-training") == 1);

  // It starts; then its type's price rises tenfold. A running Job is not
  // moved: no other write, the better placement only a note.
  markStarted(ns, "llama-training");
  CHECK(c.waitFor([&] {
    return conditionText(workloadPath(ns, "llama-training"), "Ready") == "True/JobRunning";
  }));
  const std::string price = status["placement"]["nodeHourlyCost"];
  c.apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: PlacementPolicy\nmetadata: {name: "
      "default}\nspec:\n  prices:\n  - {instanceType: " +
      type + ", onDemand: \"" + std::to_string(std::stod(price) * 10) + "\"}\n");
  REQUIRE_MESSAGE(c.waitFor([&] {
    auto current = c.get(workloadPath(ns, "llama-training"));
    return current && (*current)["status"].contains("recommendation");
  }),
                  op.log());
  const auto held = c.mustGet(workloadPath(ns, "llama-training"))["status"];
  CHECK(held["placement"]["instanceType"] == type);
  CHECK(held["recommendation"]["note"].get<std::string>().find("a running Job is never moved") !=
        std::string::npos);
  CHECK(operatorCalls("patch", "jobs", ns, "llama-training") == 1);

  // Deleting the GpuWorkload: a started Job's template cannot change; only
  // the ownership record goes, and the pods run on as placed.
  REQUIRE(c.remove(workloadPath(ns, "llama-training")).ok());
  CHECK_MESSAGE(c.waitFor([&] {
    const auto job = c.mustGet(jobPath(ns, "llama-training"));
    return !base::memberOf(job["metadata"], "annotations").contains("gpuplacement.io/owned-fields");
  }),
                op.log());
  CHECK(c.mustGet(jobPath(ns, "llama-training"))["spec"]["template"]["spec"]["nodeSelector"] ==
        pod["nodeSelector"]);
  REQUIRE(
      c.remove(Cluster::pathOf("gpuplacement.io/v1alpha1", "PlacementPolicy", "", "default")).ok());
  CHECK(op.stop() == 0);
}

TEST_CASE("a Job created unsuspended is never patched, and the condition says how to create it") {
  auto& c = cluster();
  const std::string ns = "jobs-unsuspended";
  createNamespace(ns);
  c.apply(trainingJob(ns, "eager", false));
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  createWorkload(ns, "eager", "Job", "eager", kTraining);
  REQUIRE_MESSAGE(c.waitFor([&] {
    return conditionText(workloadPath(ns, "eager"), "Applied") == "False/JobStartedUnplaced";
  }),
                  op.log());
  CHECK(conditionMessage(workloadPath(ns, "eager"), "Applied")
            .find("label the Job gpuplacement.io/workload=eager") != std::string::npos);
  CHECK(operatorCalls("patch", "jobs", ns, "eager") == 0);
  CHECK(op.stop() == 0);
}

TEST_CASE("the chart's admission policies: labelled Jobs are created suspended, or refused") {
  auto& c = cluster();
  auto& plane = c.plane();
  const std::string ns = "jobs-admission";
  createNamespace(ns);
  // The policies as `helm install` renders them against this server, which
  // serves MutatingAdmissionPolicy v1 (Kubernetes 1.36).
  const std::string render = "helm template gpo " + testing::repoRoot() +
                             "/charts/gpu-placement-operator --validate "
                             "--show-only templates/job-admission.yaml";
  const std::string file = plane.dir() + "/job-admission.yaml";
  const auto rendered = plane.withTools(render + " > " + file + " && cat " + file);
  REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
  CHECK(rendered.out.find("kind: MutatingAdmissionPolicy") != std::string::npos);
  const auto applied = plane.withTools("kubectl apply -f " + file);
  REQUIRE_MESSAGE(applied.exitCode == 0, applied.err);

  // A policy takes effect once the API server has loaded it: try until it has.
  const std::string labelled = trainingJob(ns, "labelled", false, "gpuplacement.io/workload: w");
  json created;
  REQUIRE(c.waitFor(
      [&] {
        (void)c.remove(jobPath(ns, "labelled") + "?propagationPolicy=Background");
        auto made =
            c.create(Cluster::pathOf("batch/v1", "Job", ns), *base::parseYaml(labelled, "job"));
        if (!made) {
          return false;
        }
        created = *made;
        return base::memberOf(created["spec"], "suspend") == true;
      },
      std::chrono::seconds(60), std::chrono::seconds(1)));
  CHECK(created["spec"]["suspend"] == true);

  // Without the mutating policy (a server before 1.36, or the value off),
  // the validating one refuses a labelled Job created unsuspended, and
  // says why; an unlabelled Job is none of its business.
  const auto removed = plane.withTools(
      "kubectl delete mutatingadmissionpolicybinding,mutatingadmissionpolicy "
      "gpo-gpu-placement-operator-suspend-jobs");
  REQUIRE_MESSAGE(removed.exitCode == 0, removed.err);
  std::string refusal;
  REQUIRE(c.waitFor(
      [&] {
        (void)c.remove(jobPath(ns, "unsuspended") + "?propagationPolicy=Background");
        auto made = c.create(
            Cluster::pathOf("batch/v1", "Job", ns),
            *base::parseYaml(trainingJob(ns, "unsuspended", false, "gpuplacement.io/workload: w"),
                             "job"));
        refusal = made ? "" : made.error().describe();
        return !made.ok();
      },
      std::chrono::seconds(60), std::chrono::seconds(1)));
  CHECK(refusal.find("must be created with spec.suspend: true") != std::string::npos);
  CHECK(refusal.find("gpuplacement.io/workload=w") != std::string::npos);
  CHECK(c.create(Cluster::pathOf("batch/v1", "Job", ns),
                 *base::parseYaml(trainingJob(ns, "plain", false), "job"))
            .ok());
  CHECK(c.create(Cluster::pathOf("batch/v1", "Job", ns),
                 *base::parseYaml(trainingJob(ns, "suspended", true, "gpuplacement.io/workload: w"),
                                  "job"))
            .ok());
  (void)plane.withTools("kubectl delete -f " + file + " --ignore-not-found");
}

}  // namespace gpuplacement
