// The operator against the Kubernetes 1.34 line (tests/controlplane/k8s-1.34),
// the oldest the support matrix (docs/concepts/jobs.md) lists as tested:
// Deployments are placed as on 1.36; a suspended Job's pod resources cannot change there
// (KEP-5440 is on by default only from 1.36), so a Job is placed only when
// its own device requests already match, and otherwise left suspended and
// untouched, with a condition that says why and what to do; the chart's
// validating policy refuses labelled Jobs created unsuspended, since no
// mutating policy can suspend them.
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
using testing::conditionText;
using testing::ControlPlane;
using testing::jobPath;
using testing::json;
using testing::OperatorProcess;
using testing::workloadPath;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;
  options.kubernetes = "1.34";
  ControlPlane::configure(options);
  return true;
}();

std::size_t operatorPatches(const std::string& ns, const std::string& name) {
  return cluster().writesBy(cluster().operatorUser(), "patch", "jobs", ns, name);
}

std::string job(const std::string& name, const std::string& resources, bool suspend = true,
                const std::string& labels = "") {
  return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name + ", namespace: compat" +
         (labels.empty() ? "" : ", labels: {" + labels + "}") + "}\nspec:\n" +
         (suspend ? "  suspend: true\n" : "") + R"(  template:
    spec:
      restartPolicy: Never
      containers:
      - name: train
        image: public.ecr.aws/neuron/pytorch-training-neuronx:2.1.2
)" + resources;
}

void workload(const std::string& name, const std::string& kind, const std::string& target) {
  cluster().apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " + name +
      ", namespace: compat}\nspec:\n  targetRef: {kind: " + kind + ", name: " + target + R"(}
  workload: {kind: Training}
  model: {parameters: 7B, precision: bf16}
  objective: CostOptimized
  constraints: {tiers: [Trainium]}
)");
}

}  // namespace

TEST_CASE("Kubernetes 1.34: Deployments placed; Jobs only where their own requests match") {
  auto& c = cluster();
  const auto version = c.mustGet("/version");
  REQUIRE(version["gitVersion"] == ControlPlane::pinnedVersion("1.34"));
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: compat}\n");
  c.apply(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: chat, namespace: compat}
spec:
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec:
      containers:
      - {name: server, image: vllm/vllm-openai:v0.6.3}
)");
  c.apply(job("bare", "", true, "gpuplacement.io/workload: bare"));
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  // Read once the caches are synced, so after readiness.
  CHECK(c.waitFor([&] { return op.log().find("immutable (before 1.36)") != std::string::npos; }));

  // A Deployment, as on 1.36.
  c.apply(R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: chat, namespace: compat}
spec:
  targetRef: {name: chat}
  workload: {kind: Inference}
  model: {parameters: 7B}
  constraints: {tiers: [NVIDIA]}
)");
  REQUIRE_MESSAGE(c.waitFor([&] {
    return conditionText(workloadPath("compat", "chat"), "Applied") == "True/Applied";
  }),
                  op.log());
  const auto deployment = c.mustGet(Cluster::pathOf("apps/v1", "Deployment", "compat", "chat"));
  CHECK(deployment["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
                  ["nvidia.com/gpu"] == "1");

  // A Job that asks for no devices: the server would refuse them, so
  // nothing is sent; it stays suspended and as it was, and the condition
  // names the server, the field and the fix.
  workload("bare", "Job", "bare");
  REQUIRE_MESSAGE(c.waitFor([&] {
    return conditionText(workloadPath("compat", "bare"), "Applied") ==
           "False/JobResourcesImmutable";
  }),
                  op.log());
  const auto bare = c.mustGet(workloadPath("compat", "bare"));
  const std::string message = c.conditionMessageOf(workloadPath("compat", "bare"), "Applied");
  CHECK(message.find(ControlPlane::pinnedVersion("1.34")) != std::string::npos);
  CHECK(message.find("spec.template.spec.containers[train].resources") != std::string::npos);
  CHECK(message.find("aws.amazon.com/neuron=") != std::string::npos);
  CHECK(message.find("set these in its manifest") != std::string::npos);
  CHECK(c.mustGet(jobPath("compat", "bare"))["spec"]["suspend"] == true);
  CHECK(operatorPatches("compat", "bare") == 0);
  // What the operator would have met, had it sent the devices (a 1.36 with
  // the gate off answers the same): the words it recognizes a refusal by.
  auto refused = c.patch(
      jobPath("compat", "bare"),
      json{{"spec",
            {{"template",
              {{"spec",
                {{"containers",
                  json::array(
                      {{{"name", "train"},
                        {"resources", {{"limits", {{"aws.amazon.com/neuron", "1"}}}}}}})}}}}}}}},
      kube::PatchType::Strategic);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().status == 422);
  CHECK(refused.error().describe().find("spec.template") != std::string::npos);
  CHECK(refused.error().describe().find("immutable") != std::string::npos);

  // The same Job asking for the devices the placement needs: the node
  // selector, tolerations and resume go through in one patch (KEP-2926).
  const int chips = bare["status"]["placement"]["acceleratorCount"];
  const std::string devices = "        resources:\n          limits: {aws.amazon.com/neuron: \"" +
                              std::to_string(chips) + "\"}\n";
  c.apply(job("ready", devices, true, "gpuplacement.io/workload: ready"));
  workload("ready", "Job", "ready");
  REQUIRE_MESSAGE(c.waitFor([&] {
    return conditionText(workloadPath("compat", "ready"), "Applied") == "True/Applied";
  }),
                  op.log());
  const auto ready = c.mustGet(jobPath("compat", "ready"));
  CHECK(ready["spec"]["suspend"] == false);
  CHECK(ready["spec"]["template"]["spec"]["nodeSelector"]["node.kubernetes.io/instance-type"] ==
        bare["status"]["placement"]["instanceType"]);
  CHECK(ready["spec"]["template"]["spec"]["tolerations"][0]["key"] == "aws.amazon.com/neuron");
  CHECK(operatorPatches("compat", "ready") == 1);
  CHECK(op.stop() == 0);
}

TEST_CASE("Kubernetes 1.34: the chart renders no mutating policy, and the validating one refuses") {
  auto& c = cluster();
  auto& plane = c.plane();
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: compat}\n");
  const std::string render = "helm template gpo " + testing::repoRoot() +
                             "/charts/gpu-placement-operator --validate "
                             "--show-only templates/job-admission.yaml";
  const std::string file = plane.dir() + "/job-admission.yaml";
  const auto rendered = plane.withTools(render + " > " + file + " && cat " + file);
  REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
  CHECK(rendered.out.find("kind: MutatingAdmissionPolicy") == std::string::npos);
  CHECK(rendered.out.find("kind: ValidatingAdmissionPolicy") != std::string::npos);
  const auto applied = plane.withTools("kubectl apply -f " + file);
  REQUIRE_MESSAGE(applied.exitCode == 0, applied.err);
  std::string refusal;
  REQUIRE(c.waitFor(
      [&] {
        (void)c.remove(jobPath("compat", "unsuspended") + "?propagationPolicy=Background");
        auto made = c.create(
            Cluster::pathOf("batch/v1", "Job", "compat"),
            *base::parseYaml(job("unsuspended", "", false, "gpuplacement.io/workload: w"), "job"));
        refusal = made ? "" : made.error().describe();
        return !made.ok();
      },
      std::chrono::seconds(60), std::chrono::seconds(1)));
  CHECK(refusal.find("must be created with spec.suspend: true") != std::string::npos);
  CHECK(c.create(Cluster::pathOf("batch/v1", "Job", "compat"),
                 *base::parseYaml(job("labelled", "", true, "gpuplacement.io/workload: w"), "job"))
            .ok());
}

}  // namespace gpuplacement
