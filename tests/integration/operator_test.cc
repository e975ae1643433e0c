// The operator binary against a real kube-apiserver and etcd: placement,
// drift, conflicts, deletion, policies, re-placement pacing, idle writes
// counted by the API server's audit log, and the watch across restarts and
// 410 Gone.
#include <atomic>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <signal.h>

#include "app/api_writes.h"
#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "runtime/run_sync.h"
#include "support/cluster.h"
#include "support/suite.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::cluster;
using testing::ControlPlane;
using testing::deploymentPath;
using testing::json;
using testing::OperatorProcess;
using testing::workloadPath;

// No watch cache and frequent compaction, so a watch resumed from an old
// resourceVersion gets 410 Gone from etcd, as it would after a long outage.
const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;
  options.apiServerFlags = {"--watch-cache=false", "--etcd-compaction-interval=2s"};
  ControlPlane::configure(options);
  return true;
}();

void createNamespace(const std::string& ns) {
  cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n");
}

// A Deployment with the user's own scheduling fields. Its requests fit the
// 4-vCPU, 16 GiB nodes (g6.xlarge) the tests place on: placement now keeps
// off nodes whose allocatable cannot hold a pod's own requests.
void createDeployment(const std::string& ns, const std::string& name, int replicas = 1,
                      const std::string& extraSelector = "") {
  cluster().apply(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: )" +
                  name + ", namespace: " + ns + R"(}
spec:
  replicas: )" + std::to_string(replicas) +
                  R"(
  selector: {matchLabels: {app: )" +
                  name + R"(}}
  template:
    metadata: {labels: {app: )" +
                  name + R"(}}
    spec:
      nodeSelector: {topology.kubernetes.io/zone: us-east-1a)" +
                  extraSelector + R"(}
      tolerations:
      - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}
      containers:
      - name: server
        image: vllm/vllm-openai:v0.6.3
        resources:
          limits: {memory: 8Gi, example.com/fpga: "1"}
          requests: {cpu: "2", memory: 8Gi}
      - name: sidecar
        image: busybox:1.36
)");
}

void createWorkload(const std::string& ns, const std::string& name, const std::string& target,
                    const std::string& specTail) {
  cluster().apply(R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: )" +
                  name + ", namespace: " + ns + R"(}
spec:
  targetRef: {name: )" +
                  target + "}\n" + specTail);
}

const json* condition(const json& object, const std::string& type) {
  for (const auto& item : base::memberOf(base::memberOf(object, "status"), "conditions")) {
    if (base::stringMember(item, "type") == type) {
      return &item;
    }
  }
  return nullptr;
}

bool conditionIs(const std::string& path, const std::string& type, const std::string& status,
                 const std::string& reason = "") {
  auto object = cluster().get(path);
  if (!object) {
    return false;
  }
  const auto* found = condition(*object, type);
  return found && base::stringMember(*found, "status") == status &&
         (reason.empty() || base::stringMember(*found, "reason") == reason);
}

json podSpec(const std::string& ns, const std::string& name) {
  return cluster().mustGet(deploymentPath(ns, name))["spec"]["template"]["spec"];
}

std::int64_t generationOf(const std::string& path) {
  return cluster().mustGet(path)["metadata"].value("generation", std::int64_t{0});
}

std::vector<std::string> eventReasons(const std::string& ns, const std::string& name) {
  std::vector<std::string> reasons;
  const auto events = cluster().mustGet("/api/v1/namespaces/" + ns + "/events");
  for (const auto& event : events["items"]) {
    if (base::stringMember(event["involvedObject"], "name") == name) {
      reasons.push_back(base::stringMember(event, "reason"));
    }
  }
  return reasons;
}

std::size_t countOf(const std::vector<std::string>& items, const std::string& value) {
  return static_cast<std::size_t>(std::count(items.begin(), items.end(), value));
}

// Events go out behind the writes, on their own budget, so one may follow
// the status it explains: wait for the first, then count them.
std::size_t eventsOnceSent(const std::string& ns, const std::string& name,
                           const std::string& reason) {
  cluster().waitFor([&] { return countOf(eventReasons(ns, name), reason) >= 1; });
  return countOf(eventReasons(ns, name), reason);
}

void applyPolicy(const std::string& name, const std::string& specBody) {
  const std::string path = Cluster::pathOf("gpuplacement.io/v1alpha1", "PlacementPolicy", "", name);
  auto spec = base::parseYaml(specBody, "spec");
  REQUIRE(spec.ok());
  if (cluster().get(path).ok()) {
    auto replaced = cluster().patch(
        path, json::array({{{"op", "replace"}, {"path", "/spec"}, {"value", *spec}}}),
        kube::PatchType::Json);
    REQUIRE_MESSAGE(replaced.ok(), gpuplacement::testing::whyNot(replaced));
    return;
  }
  auto created = cluster().create(path.substr(0, path.rfind('/')),
                                  json{{"apiVersion", "gpuplacement.io/v1alpha1"},
                                       {"kind", "PlacementPolicy"},
                                       {"metadata", {{"name", name}}},
                                       {"spec", *spec}});
  REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
}

// 7B on an NVIDIA GPU, cheapest: one L4 on g6.xlarge (a T4's 15 GiB is too
// small for 15.6 GiB within the 90% fill limit).
const char* kSmallGpu = R"(  workload: {kind: Inference}
  model: {parameters: 7B}
  objective: CostOptimized
  constraints: {tiers: [NVIDIA]}
)";

}  // namespace

TEST_CASE("places a Deployment next to the user's fields, re-places it, and cleans up") {
  auto& c = cluster();
  const std::string ns = "place";
  createNamespace(ns);
  createDeployment(ns, "llm", 2);
  const auto original = podSpec(ns, "llm");
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());

  createWorkload(ns, "llm", "llm", R"(  workload: {kind: Inference, latencyTargetMs: 1000}
  model: {parameters: 13B, precision: fp16, architecture: Diffusion}
  objective: CostOptimized
)");
  REQUIRE_MESSAGE(
      c.waitFor([&] { return conditionIs(workloadPath(ns, "llm"), "Applied", "True"); }), op.log());
  auto workload = c.mustGet(workloadPath(ns, "llm"));
  const auto& status = workload["status"];
  CHECK(status["placement"]["instanceType"] == "g6e.xlarge");  // 29 GiB: one L40S is cheapest
  CHECK(status["placement"]["acceleratorCount"] == 1);
  CHECK(status["placement"]["hourlyCost"] == "1.861");
  CHECK(status["placement"]["replicas"] == 2);
  CHECK(status["rule"] == "mixed-model-inference");
  CHECK(status["alternatives"].size() >= 3);
  CHECK(status["observedGeneration"] == workload["metadata"]["generation"]);
  CHECK(conditionIs(workloadPath(ns, "llm"), "Valid", "True"));
  CHECK(conditionIs(workloadPath(ns, "llm"), "Placed", "True"));
  CHECK(conditionIs(workloadPath(ns, "llm"), "Ready", "False", "RolloutInProgress"));
  // No finalizer by default: the ownership record gives the fields back.
  CHECK_FALSE(workload["metadata"].contains("finalizers"));
  // The status's objects are atomic (the CRD): the server records each as
  // one field the operator owns, not each leaf, and the write costs less.
  asio::io_context context;
  auto admin = c.plane().adminClient(context.get_executor());
  auto withFields =
      runtime::runSync(context, admin->get(workloadPath(ns, "llm"), kube::KubeClient::Keep::All));
  REQUIRE_MESSAGE(withFields.ok(), gpuplacement::testing::whyNot(withFields));
  json ownedStatus;
  for (const auto& entry : (*withFields)["metadata"]["managedFields"]) {
    if (entry.value("subresource", "") == "status") {
      ownedStatus = entry["fieldsV1"]["f:status"];
    }
  }
  CHECK_MESSAGE(ownedStatus["f:placement"] == json::object(), ownedStatus.dump());
  CHECK(ownedStatus["f:memory"] == json::object());
  CHECK(ownedStatus["f:applied"] == json::object());
  CHECK(ownedStatus["f:conditions"].contains("k:{\"type\":\"Placed\"}"));

  auto spec = podSpec(ns, "llm");
  CHECK(spec["nodeSelector"] == json{{"topology.kubernetes.io/zone", "us-east-1a"},
                                     {"node.kubernetes.io/instance-type", "g6e.xlarge"},
                                     {"karpenter.sh/capacity-type", "on-demand"}});
  REQUIRE(spec["tolerations"].size() == 2);
  CHECK(spec["tolerations"][0] == original["tolerations"][0]);
  CHECK(spec["tolerations"][1]["key"] == "nvidia.com/gpu");
  CHECK(spec["containers"][0]["resources"]["limits"] ==
        json{{"memory", "8Gi"}, {"example.com/fpga", "1"}, {"nvidia.com/gpu", "1"}});
  CHECK(spec["containers"][0]["resources"]["requests"] ==
        json{{"cpu", "2"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "1"}});
  CHECK(spec["containers"][1] == original["containers"][1]);
  CHECK(eventsOnceSent(ns, "llm", "Placed") == 1);
  // Kubernetes 1.34 serves streaming lists: the caches filled from watches
  // alone, without one paged LIST.
  CHECK(op.metric("rest_client_requests_total", "verb=\"list\"") == 0);
  CHECK(op.metric("rest_client_requests_total", "verb=\"watch\"") >= 3);

  // The rollout finishes (what kube-controller-manager would report).
  c.completeRollout(ns, "llm");
  CHECK(c.waitFor([&] { return conditionIs(workloadPath(ns, "llm"), "Ready", "True"); }));

  // The user changes intent: a bigger model at int8 on Inferentia is allowed.
  auto patched =
      c.patch(workloadPath(ns, "llm"),
              json{{"spec", {{"model", {{"parameters", "70B"}, {"precision", "int8"}}}}}});
  REQUIRE(patched.ok());
  CHECK(c.waitFor([&] {
    auto current = c.get(workloadPath(ns, "llm"));
    return current &&
           base::stringMember((*current)["status"]["placement"], "instanceType") != "g6e.xlarge" &&
           conditionIs(workloadPath(ns, "llm"), "Applied", "True");
  }));
  spec = podSpec(ns, "llm");
  CHECK(spec["nodeSelector"]["topology.kubernetes.io/zone"] == "us-east-1a");
  CHECK(spec["tolerations"][0] == original["tolerations"][0]);
  CHECK(spec["containers"][0]["resources"]["limits"]["example.com/fpga"] == "1");

  // Deleting the GpuWorkload removes exactly what the operator added. It
  // is gone at once (no finalizer); the Deployment follows.
  REQUIRE(c.remove(workloadPath(ns, "llm")).ok());
  CHECK(c.waitFor([&] { return !c.get(workloadPath(ns, "llm")).ok(); }));
  CHECK_MESSAGE(
      c.waitFor([&] { return podSpec(ns, "llm")["nodeSelector"] == original["nodeSelector"]; }),
      op.log());
  spec = podSpec(ns, "llm");
  CHECK(spec["nodeSelector"] == original["nodeSelector"]);
  CHECK(spec["tolerations"] == original["tolerations"]);
  CHECK(spec["containers"] == original["containers"]);
  CHECK_FALSE(c.mustGet(deploymentPath(ns, "llm"))["metadata"]["annotations"].contains(
      "gpuplacement.io/owned-fields"));
  CHECK(op.stop() == 0);
}

TEST_CASE("a status made for a GpuWorkload since deleted and created again is refused whole") {
  auto& c = cluster();
  const std::string ns = "recreated";
  createNamespace(ns);
  const std::string spec =
      "  workload: {kind: Inference}\n  model: {parameters: 7B, precision: fp16}\n";
  createWorkload(ns, "chat", "chat", spec);
  const std::string oldUid = c.mustGet(workloadPath(ns, "chat"))["metadata"]["uid"];
  REQUIRE(c.remove(workloadPath(ns, "chat")).ok());
  REQUIRE(c.waitFor([&] { return !c.get(workloadPath(ns, "chat")).ok(); }));
  createWorkload(ns, "chat", "chat", spec);
  const std::string newUid = c.mustGet(workloadPath(ns, "chat"))["metadata"]["uid"];
  REQUIRE(newUid != oldUid);

  asio::io_context context;
  runtime::RealClock clock;
  app::Logger logger(app::LogLevel::Error, app::LogFormat::Text);
  auto client = c.plane().adminClient(context.get_executor());
  app::ApiWrites writes(*client, logger, clock, "test");
  const std::string status = R"({"observedGeneration":1})";
  // The server tests the uid and refuses the patch; the writer reads that
  // as the object gone.
  auto refused =
      runtime::runSync(context, writes.replaceWorkloadStatusText(ns, "chat", oldUid, status));
  REQUIRE_FALSE(refused.ok());
  CHECK_MESSAGE(refused.error().notFound(), refused.error().describe());
  CHECK_FALSE(c.mustGet(workloadPath(ns, "chat"))["status"].contains("observedGeneration"));
  auto stored =
      runtime::runSync(context, writes.replaceWorkloadStatusText(ns, "chat", newUid, status));
  REQUIRE_MESSAGE(stored.ok(), gpuplacement::testing::whyNot(stored));
  CHECK((*stored)["observedGeneration"] == 1);
  CHECK(c.mustGet(workloadPath(ns, "chat"))["status"]["observedGeneration"] == 1);
}

TEST_CASE("a GpuWorkload deleted while no operator runs: its fields are taken back") {
  auto& c = cluster();
  // Without a finalizer (the default) the deletion is immediate; with
  // --finalizer someone has to remove it by hand first.
  for (const bool finalizer : {false, true}) {
    CAPTURE(finalizer);
    const std::string ns = finalizer ? "orphans-held" : "orphans";
    const std::vector<std::string> flags =
        finalizer ? std::vector<std::string>{"--finalizer"} : std::vector<std::string>{};
    createNamespace(ns);
    createDeployment(ns, "svc", 1);
    const auto original = podSpec(ns, "svc");
    {
      OperatorProcess op(c.operatorKubeconfig(), flags);
      REQUIRE(op.waitReady());
      createWorkload(ns, "svc", "svc", kSmallGpu);
      REQUIRE_MESSAGE(
          c.waitFor([&] { return conditionIs(workloadPath(ns, "svc"), "Applied", "True"); }),
          op.log());
      CHECK(op.stop() == 0);
    }
    CHECK(podSpec(ns, "svc")["nodeSelector"]["node.kubernetes.io/instance-type"] == "g6.xlarge");
    const auto held = c.mustGet(workloadPath(ns, "svc"))["metadata"];
    CHECK(held.contains("finalizers") == finalizer);
    if (finalizer) {
      REQUIRE(c.patch(workloadPath(ns, "svc"), json{{"metadata", {{"finalizers", nullptr}}}}).ok());
    }
    REQUIRE(c.remove(workloadPath(ns, "svc")).ok());
    REQUIRE(c.waitFor([&] { return !c.get(workloadPath(ns, "svc")).ok(); }));

    OperatorProcess op(c.operatorKubeconfig(), flags);
    REQUIRE(op.waitReady());
    CHECK_MESSAGE(c.waitFor([&] {
      return !c.mustGet(deploymentPath(ns, "svc"))["metadata"].contains("annotations") ||
             !c.mustGet(deploymentPath(ns, "svc"))["metadata"]["annotations"].contains(
                 "gpuplacement.io/owned-fields");
    }),
                  op.log());
    const auto spec = podSpec(ns, "svc");
    CHECK(spec["nodeSelector"] == original["nodeSelector"]);
    CHECK(spec["tolerations"] == original["tolerations"]);
    CHECK(spec["containers"] == original["containers"]);
    CHECK(op.stop() == 0);
  }
}

TEST_CASE("--finalizer: deleting a GpuWorkload that another finalizer also holds") {
  auto& c = cluster();
  const std::string ns = "finalizers";
  createNamespace(ns);
  createDeployment(ns, "held", 1);
  const auto original = podSpec(ns, "held");
  OperatorProcess op(c.operatorKubeconfig(), {"--finalizer"});
  REQUIRE(op.waitReady());
  c.apply(R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: held, namespace: finalizers, finalizers: [example.com/backup]}
spec:
  targetRef: {name: held}
)" + std::string(kSmallGpu));
  REQUIRE_MESSAGE(
      c.waitFor([&] { return conditionIs(workloadPath(ns, "held"), "Applied", "True"); }),
      op.log());
  CHECK(c.mustGet(workloadPath(ns, "held"))["metadata"]["finalizers"] ==
        json::array({"example.com/backup", "gpuplacement.io/finalizer"}));
  REQUIRE(c.remove(workloadPath(ns, "held")).ok());
  // Ours goes once the fields are back; the other one still holds it.
  CHECK_MESSAGE(c.waitFor([&] {
    return c.mustGet(workloadPath(ns, "held"))["metadata"]["finalizers"] ==
           json::array({"example.com/backup"});
  }),
                op.log());
  CHECK(podSpec(ns, "held") == original);
  REQUIRE(c.patch(workloadPath(ns, "held"), json{{"metadata", {{"finalizers", nullptr}}}}).ok());
  CHECK(c.waitFor([&] { return !c.get(workloadPath(ns, "held")).ok(); }));
  CHECK(op.stop() == 0);
}

TEST_CASE("invalid specs, missing targets, conflicts, drift and Recommend mode") {
  auto& c = cluster();
  const std::string ns = "edges";
  createNamespace(ns);
  createDeployment(ns, "conflicted", 1, ", node.kubernetes.io/instance-type: m5.large");
  createDeployment(ns, "drifting");
  createDeployment(ns, "watched");
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());

  // What the schema cannot catch: an instance type outside the catalog.
  createDeployment(ns, "untouched");
  const auto untouchedGeneration = generationOf(deploymentPath(ns, "untouched"));
  createWorkload(ns, "invalid", "untouched", R"(  workload: {kind: Inference}
  model: {parameters: 7B}
  constraints: {instanceTypes: [g99.xlarge]}
)");
  CHECK(c.waitFor(
      [&] { return conditionIs(workloadPath(ns, "invalid"), "Valid", "False", "InvalidSpec"); }));
  const auto invalid = c.mustGet(workloadPath(ns, "invalid"));
  const auto* valid = condition(invalid, "Valid");
  REQUIRE(valid);
  CHECK(base::stringMember(*valid, "message").find("spec.constraints.instanceTypes[0]") !=
        std::string::npos);
  CHECK(eventsOnceSent(ns, "invalid", "InvalidSpec") == 1);

  // The target appears after the GpuWorkload.
  createWorkload(ns, "early", "late", kSmallGpu);
  CHECK(c.waitFor([&] {
    return conditionIs(workloadPath(ns, "early"), "Applied", "False", "TargetNotFound");
  }));
  createDeployment(ns, "late");
  CHECK(c.waitFor([&] { return conditionIs(workloadPath(ns, "early"), "Applied", "True"); }));
  CHECK(podSpec(ns, "late")["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"));

  // The user pinned an instance type: never overwritten, the patch is not
  // half-applied.
  const auto conflictedGeneration = generationOf(deploymentPath(ns, "conflicted"));
  createWorkload(ns, "conflicted", "conflicted", kSmallGpu);
  CHECK(c.waitFor(
      [&] { return conditionIs(workloadPath(ns, "conflicted"), "Applied", "False", "Conflict"); }));
  CHECK(generationOf(deploymentPath(ns, "conflicted")) == conflictedGeneration);
  CHECK(podSpec(ns, "conflicted")["nodeSelector"]["node.kubernetes.io/instance-type"] ==
        "m5.large");

  // Drift: someone (a `helm upgrade` of the app) drops our fields.
  createWorkload(ns, "drifting", "drifting", kSmallGpu);
  CHECK(c.waitFor([&] { return conditionIs(workloadPath(ns, "drifting"), "Applied", "True"); }));
  REQUIRE(
      c.patch(deploymentPath(ns, "drifting"),
              json{{"spec",
                    {{"template",
                      {{"spec",
                        {{"nodeSelector", {{"node.kubernetes.io/instance-type", nullptr}}}}}}}}}},
              kube::PatchType::Strategic)
          .ok());
  // An atomic field taken back: under placeAt Auto the placement moves to
  // the pods, where the next such upgrade cannot take it (docs/gitops.md).
  CHECK(c.waitFor([&] {
    const auto templ = c.mustGet(deploymentPath(ns, "drifting"))["spec"]["template"];
    const auto& gates = base::memberOf(templ["spec"], "schedulingGates");
    return gates.is_array() && gates.size() == 1 &&
           gates[0]["name"] == "gpuplacement.io/placement" &&
           base::stringMember(base::memberOf(templ["metadata"], "annotations"),
                              "gpuplacement.io/scheduling")
                   .find("node.kubernetes.io/instance-type") != std::string::npos;
  }));
  CHECK_FALSE(podSpec(ns, "drifting")["nodeSelector"].contains("node.kubernetes.io/instance-type"));
  CHECK(c.waitFor([&] { return countOf(eventReasons(ns, "drifting"), "Restored") == 1; }));

  // Recommend mode reports and never touches the Deployment.
  const auto watchedGeneration = generationOf(deploymentPath(ns, "watched"));
  createWorkload(ns, "watched", "watched", R"(  mode: Recommend
  workload: {kind: Training}
  model: {parameters: 13B, precision: bf16}
)");
  CHECK(c.waitFor([&] {
    return conditionIs(workloadPath(ns, "watched"), "Applied", "False", "RecommendOnly");
  }));
  CHECK(c.mustGet(workloadPath(ns, "watched"))["status"]["placement"]["tier"] == "NVIDIA");
  CHECK(generationOf(deploymentPath(ns, "watched")) == watchedGeneration);

  // A serving load: the CRD takes a family for the parameters, and the
  // status shows the KV cache it sizes.
  createDeployment(ns, "chat");
  createWorkload(ns, "chat", "chat", R"(  mode: Recommend
  workload: {kind: Inference, serving: {maxContextTokens: 4096, concurrentSequences: 16}}
  model: {family: llama-2-13b}
)");
  CHECK(c.waitFor(
      [&] { return conditionIs(workloadPath(ns, "chat"), "Applied", "False", "RecommendOnly"); }));
  const auto served = c.mustGet(workloadPath(ns, "chat"))["status"];
  CAPTURE(served.dump());
  CHECK(served["memory"]["kvCacheGiB"] == "50");
  CHECK(served["memory"]["kvCacheBytesPerToken"] == 819200);
  CHECK(served["memory"]["parameters"] == "13B");
  CHECK(base::stringMember(served["memory"], "note").starts_with("16 sequences of 4,096 tokens"));
  // Neither parameters nor a family: the API server refuses it.
  const auto nameless =
      c.create("/apis/gpuplacement.io/v1alpha1/namespaces/" + ns + "/gpuworkloads",
               json::parse(R"({"apiVersion": "gpuplacement.io/v1alpha1", "kind": "GpuWorkload",
                      "metadata": {"name": "nameless"},
                      "spec": {"targetRef": {"name": "chat"}, "workload": {"kind": "Inference"},
                               "model": {"precision": "fp16"}}})"));
  REQUIRE_FALSE(nameless.ok());
  CHECK(nameless.error().status == 422);
  CHECK(nameless.error().describe().find(
            "parameters is required unless family names a model the catalog lists") !=
        std::string::npos);

  // A throughput target two replicas cannot carry: the status says how many
  // would, and, once a HorizontalPodAutoscaler scales the Deployment, counts
  // its maxReplicas. The Deployment's replicas are never written.
  createDeployment(ns, "busy");
  const auto busyGeneration = generationOf(deploymentPath(ns, "busy"));
  createWorkload(ns, "busy", "busy", R"(  mode: Recommend
  workload:
    kind: Inference
    serving: {maxContextTokens: 4096, concurrentSequences: 16, requestsPerSecond: "20",
              meanPromptTokens: 1000, meanOutputTokens: 250}
  model: {family: llama-3-8b, framework: vLLM}
  constraints: {tiers: [NVIDIA]}
)");
  json throughput;
  CHECK(c.waitFor([&] {
    throughput = base::memberOf(c.mustGet(workloadPath(ns, "busy"))["status"], "throughput");
    return throughput.contains("enough");
  }));
  CAPTURE(throughput.dump());
  CHECK(throughput["tokensPerSecond"] == "5000");
  CHECK(throughput["enough"] == false);
  const int needed = throughput["replicasNeeded"];
  CHECK(needed > 1);
  CHECK(base::stringMember(throughput, "message")
            .find("kubectl scale deployment/busy --replicas=" + std::to_string(needed)) !=
        std::string::npos);
  auto hpa = c.create(
      "/apis/autoscaling/v2/namespaces/" + ns + "/horizontalpodautoscalers",
      {{"apiVersion", "autoscaling/v2"},
       {"kind", "HorizontalPodAutoscaler"},
       {"metadata", {{"name", "busy"}}},
       {"spec",
        {{"scaleTargetRef", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "busy"}}},
         {"minReplicas", 1},
         {"maxReplicas", needed + 1}}}});
  REQUIRE_MESSAGE(hpa.ok(), gpuplacement::testing::whyNot(hpa));
  CHECK(c.waitFor([&] {
    throughput = base::memberOf(c.mustGet(workloadPath(ns, "busy"))["status"], "throughput");
    return base::stringMember(throughput, "replicasFrom") ==
           "maxReplicas of HorizontalPodAutoscaler busy";
  }));
  CHECK(throughput["enough"] == true);
  CHECK(throughput["replicas"] == needed + 1);
  CHECK(generationOf(deploymentPath(ns, "busy")) == busyGeneration);
  // A request rate without its mean lengths: the API server refuses it.
  const auto rateless =
      c.create("/apis/gpuplacement.io/v1alpha1/namespaces/" + ns + "/gpuworkloads",
               json::parse(R"({"apiVersion": "gpuplacement.io/v1alpha1", "kind": "GpuWorkload",
                      "metadata": {"name": "rateless"},
                      "spec": {"targetRef": {"name": "chat"},
                               "workload": {"kind": "Inference", "serving": {
                                   "maxContextTokens": 4096, "requestsPerSecond": "2"}},
                               "model": {"family": "llama-3-8b"}}})"));
  REQUIRE_FALSE(rateless.ok());
  CHECK(rateless.error().status == 422);
  CHECK(rateless.error().describe().find(
            "requestsPerSecond needs meanPromptTokens and meanOutputTokens") != std::string::npos);
  CHECK(generationOf(deploymentPath(ns, "untouched")) == untouchedGeneration);
  CHECK(op.stop() == 0);
}

TEST_CASE("policies: invalid ones keep the last good; price changes re-place at a paced rate") {
  auto& c = cluster();
  const std::string ns = "pricing";
  createNamespace(ns);
  // Six 13B inference workloads (29.1 GiB each), cheapest on g6e.xlarge.
  for (int i = 0; i < 6; ++i) {
    createDeployment(ns, "svc-" + std::to_string(i));
  }
  // This team packs shared nodes: a replica pays its devices' share of a
  // node (AcceleratorShare), not the whole node.
  applyPolicy("team-pricing",
              "costModel: AcceleratorShare\n"
              "replacement: {minSavingsPercent: 10, cooldown: 0s, maxConcurrentRollouts: 2}\n");
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  for (int i = 0; i < 6; ++i) {
    // Four may use any type; two are pinned to two G6e sizes.
    const std::string constraints =
        i < 4 ? "" : "  constraints: {instanceTypes: [g6e.xlarge, g6e.2xlarge]}\n";
    createWorkload(ns, "svc-" + std::to_string(i), "svc-" + std::to_string(i),
                   R"(  policyRef: {name: team-pricing}
  workload: {kind: Inference}
  model: {parameters: 13B, architecture: Diffusion}
  objective: CostOptimized
)" + constraints);
  }
  std::map<std::string, std::int64_t> placedGeneration;
  for (int i = 0; i < 6; ++i) {
    const std::string name = "svc-" + std::to_string(i);
    REQUIRE(c.waitFor([&] { return conditionIs(workloadPath(ns, name), "Applied", "True"); }));
    CHECK(c.mustGet(workloadPath(ns, name))["status"]["placement"]["instanceType"] == "g6e.xlarge");
    c.completeRollout(ns, name);
    placedGeneration[name] = generationOf(deploymentPath(ns, name));
  }
  const auto policyPath =
      Cluster::pathOf("gpuplacement.io/v1alpha1", "PlacementPolicy", "", "team-pricing");
  CHECK(c.waitFor([&] {
    auto policy = c.get(policyPath);
    return policy && conditionIs(policyPath, "Accepted", "True") &&
           (*policy)["status"].value("workloads", 0) == 6;
  }));

  // An invalid policy (the schema cannot know instance types) is refused;
  // the last good version stays in force and nothing moves.
  applyPolicy("team-pricing", R"(costModel: AcceleratorShare
prices: [{instanceType: g99.xlarge, onDemand: "0.01"}]
replacement: {minSavingsPercent: 10, cooldown: 0s, maxConcurrentRollouts: 2}
)");
  CHECK(c.waitFor([&] { return conditionIs(policyPath, "Accepted", "False", "Invalid"); }));
  const auto rejected = c.mustGet(policyPath);
  const auto* accepted = condition(rejected, "Accepted");
  REQUIRE(accepted);
  CHECK(base::stringMember(*accepted, "message").find("spec.prices[0].instanceType") !=
        std::string::npos);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  for (const auto& [name, generation] : placedGeneration) {
    CHECK(generationOf(deploymentPath(ns, name)) == generation);
  }

  // New prices: L40S dearer, L4 cheaper. The four free workloads are best
  // on two of g6.12xlarge's four L4s ($3.60 / 2 = $1.80/h), 28% below the
  // $2.50/h they now pay: they move, two at a time. The two pinned to G6e
  // could save 4% on g6e.2xlarge ($2.40/h), below the 10% threshold: they
  // stay.
  applyPolicy("team-pricing", R"(costModel: AcceleratorShare
prices:
- {instanceType: g6e.xlarge, onDemand: "2.50"}
- {instanceType: g6e.2xlarge, onDemand: "2.40"}
- {instanceType: g6.12xlarge, onDemand: "3.60"}
replacement: {minSavingsPercent: 10, cooldown: 0s, maxConcurrentRollouts: 2}
)");
  const auto moved = [&] {
    std::set<std::string> names;
    for (int i = 0; i < 6; ++i) {
      const std::string name = "svc-" + std::to_string(i);
      if (generationOf(deploymentPath(ns, name)) != placedGeneration[name]) {
        names.insert(name);
      }
    }
    return names;
  };
  REQUIRE(c.waitFor([&] { return moved().size() == 2; }));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  auto first = moved();
  CHECK(first.size() == 2);  // no third rollout while two are in progress
  for (const auto& name : first) {
    const auto status = c.mustGet(workloadPath(ns, name))["status"];
    CHECK(status["placement"]["instanceType"] == "g6.12xlarge");
    CHECK(status["lastReplacement"]["from"] == "g6e.xlarge");
    CHECK(status["lastReplacement"]["to"] == "g6.12xlarge");
    CHECK(status["lastReplacement"]["monthlySaving"] == "511");  // ($2.50 - $1.80) x 730
    CHECK(eventsOnceSent(ns, name, "Replaced") == 1);
  }
  // A waiting one says why.
  for (int i = 0; i < 4; ++i) {
    const std::string name = "svc-" + std::to_string(i);
    if (!first.count(name)) {
      const auto status = c.mustGet(workloadPath(ns, name))["status"];
      CHECK(base::stringMember(status["recommendation"], "note")
                .find("waiting for one of 2 rollouts") != std::string::npos);
    }
  }
  // Finishing the rollouts lets the next two go.
  for (const auto& name : first) {
    c.completeRollout(ns, name);
  }
  REQUIRE(c.waitFor([&] { return moved().size() == 4; }));
  for (const auto& name : moved()) {
    c.completeRollout(ns, name);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto all = moved();
  CHECK(all == std::set<std::string>{"svc-0", "svc-1", "svc-2", "svc-3"});
  for (const char* pinned : {"svc-4", "svc-5"}) {
    const auto status = c.mustGet(workloadPath(ns, pinned))["status"];
    CHECK(status["placement"]["instanceType"] == "g6e.xlarge");
    CHECK(status["placement"]["hourlyCost"] == "2.5");
    CHECK(base::stringMember(status["recommendation"], "note").find("below minSavingsPercent") !=
          std::string::npos);
  }
  CHECK(op.metric("gpu_placement_replacements_total") == doctest::Approx(4));
  CHECK(op.stop() == 0);
}

TEST_CASE("an idle operator with resyncs writes and reads nothing, by the API server's count") {
  auto& c = cluster();
  const std::string ns = "idle";
  createNamespace(ns);
  for (int i = 0; i < 5; ++i) {
    createDeployment(ns, "idle-" + std::to_string(i));
  }
  OperatorProcess op(c.operatorKubeconfig(), {"--resync", "10s"});
  REQUIRE(op.waitReady());
  for (int i = 0; i < 5; ++i) {
    createWorkload(ns, "idle-" + std::to_string(i), "idle-" + std::to_string(i),
                   "  workload: {kind: Inference}\n  model: {parameters: 7B}\n");
  }
  for (int i = 0; i < 5; ++i) {
    REQUIRE(c.waitFor([&] {
      return conditionIs(workloadPath(ns, "idle-" + std::to_string(i)), "Applied", "True");
    }));
    c.completeRollout(ns, "idle-" + std::to_string(i));
    REQUIRE(c.waitFor([&] {
      return conditionIs(workloadPath(ns, "idle-" + std::to_string(i)), "Ready", "True");
    }));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const auto before = testing::readAudit(c.plane(), c.operatorUser()).size();
  const double reconcilesBefore = op.metric("controller_runtime_reconcile_total");
  std::this_thread::sleep_for(std::chrono::seconds(25));  // two resyncs
  const auto entries = testing::readAudit(c.plane(), c.operatorUser());
  const double reconciles = op.metric("controller_runtime_reconcile_total") - reconcilesBefore;
  CHECK(reconciles >= 10);  // the resyncs did run...
  std::vector<std::string> requests;
  for (std::size_t i = before; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    if (entry.verb == "watch" || entry.stage != "ResponseComplete") {
      continue;  // watches held open (and renewed) are how it listens
    }
    requests.push_back(entry.verb + " " + entry.resource + "/" + entry.name);
  }
  CHECK_MESSAGE(requests.empty(), "requests while idle: " << requests.size() << " e.g. "
                                                          << (requests.empty() ? "" : requests[0]));
  CHECK(op.stop() == 0);
}

TEST_CASE("the watch survives an API server restart, and a 410 after compaction re-lists") {
  auto& c = cluster();
  const std::string ns = "restart";
  createNamespace(ns);
  createDeployment(ns, "a");
  createDeployment(ns, "b");
  OperatorProcess op(c.operatorKubeconfig(), {"--watch-timeout", "2s"});
  REQUIRE(op.waitReady());
  createWorkload(ns, "a", "a", "  workload: {kind: Inference}\n  model: {parameters: 7B}\n");
  REQUIRE(c.waitFor([&] { return conditionIs(workloadPath(ns, "a"), "Applied", "True"); }));

  c.plane().restartApiServer();
  // An update as soon as the API server takes it (custom resources are
  // served a moment after /readyz) must not be lost. (8B stays on the same
  // inf2.xlarge, as 13B did before the fill limit: this checks the update,
  // not a Deployment patch right after the restart.)
  REQUIRE(c.waitFor([&] {
    return c.patch(workloadPath(ns, "a"), json{{"spec", {{"model", {{"parameters", "8B"}}}}}}).ok();
  }));
  CHECK(c.waitFor(
      [&] {
        auto current = c.get(workloadPath(ns, "a"));
        return current && (*current)["status"].value("observedGeneration", 0) == 2 &&
               conditionIs(workloadPath(ns, "a"), "Applied", "True");
      },
      std::chrono::seconds(60)));
  CHECK(op.running());

  // Freeze the operator past its watch timeout while the world changes and
  // etcd compacts: on waking, its resume point is gone (410) and it must
  // list again to see everything.
  const double relistsBefore = op.metric("gpu_placement_informer_relists_total");
  op.pause();
  createWorkload(ns, "b", "b", "  workload: {kind: Inference}\n  model: {parameters: 3B}\n");
  for (int i = 0; i < 5; ++i) {
    REQUIRE(c.patch(deploymentPath(ns, "a"),
                    json{{"metadata", {{"annotations", {{"touch", std::to_string(i)}}}}}})
                .ok());
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  op.resume();
  CHECK(c.waitFor([&] { return conditionIs(workloadPath(ns, "b"), "Applied", "True"); },
                  std::chrono::seconds(60)));
  CHECK(
      c.waitFor([&] { return op.metric("gpu_placement_informer_relists_total") > relistsBefore; }));
  CHECK(op.log().find("410") != std::string::npos);
  CHECK(op.stop() == 0);
}

TEST_CASE("a concurrent writer's 409s resolve") {
  auto& c = cluster();
  const std::string ns = "conflicts";
  createNamespace(ns);
  createDeployment(ns, "busy");
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  // Another controller keeps writing the Deployment while ours places it.
  std::atomic<bool> writing{true};
  std::thread writer([&] {
    Cluster other(c.plane());
    for (int i = 0; writing && i < 400; ++i) {
      // Results ignored on purpose: only the operator's side is under test.
      (void)other.patch(
          deploymentPath(ns, "busy"),
          json{{"metadata", {{"annotations", {{"other-controller", std::to_string(i)}}}}}});
    }
  });
  createWorkload(ns, "busy", "busy", kSmallGpu);
  const bool applied =
      c.waitFor([&] { return conditionIs(workloadPath(ns, "busy"), "Applied", "True"); },
                std::chrono::seconds(60));
  writing = false;
  writer.join();
  CHECK(applied);
  CHECK(podSpec(ns, "busy")["nodeSelector"]["node.kubernetes.io/instance-type"] == "g6.xlarge");
  INFO("409 answers seen by the operator: " << op.metric("rest_client_requests_total",
                                                         "code=\"409\""));
  CHECK(op.stop() == 0);
}

TEST_CASE("SIGTERM: stop taking work, finish what is in flight, exit 0") {
  auto& c = cluster();
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  CHECK(OperatorProcess::httpGet(op.healthPort(), "/healthz").first == 200);
  CHECK(op.stop(SIGTERM) == 0);
  CHECK(op.log().find("stopping: finishing in-flight work") != std::string::npos);
}

// Helm does not upgrade CRDs: an operator newer than its CRD writes status
// fields the server prunes. It must not take the difference for news and
// write the same status on every reconcile.
TEST_CASE("a CRD older than the operator: a pruned status is not written again and again") {
  auto& c = cluster();
  const std::string crd =
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gpuworkloads.gpuplacement.io";
  const std::string field =
      "/spec/versions/0/schema/openAPIV3Schema/properties/status/properties/placement/"
      "properties/costNote";
  const auto schema =
      c.mustGet(crd)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
                    ["properties"]["placement"]["properties"]["costNote"];
  REQUIRE(
      c.patch(crd, json::array({{{"op", "remove"}, {"path", field}}}), kube::PatchType::Json).ok());
  const std::string ns = "old-crd";
  createNamespace(ns);
  createDeployment(ns, "svc", 1);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE(op.waitReady());
  createWorkload(ns, "svc", "svc", kSmallGpu);
  REQUIRE_MESSAGE(
      c.waitFor([&] { return conditionIs(workloadPath(ns, "svc"), "Applied", "True"); }), op.log());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  CHECK_FALSE(c.mustGet(workloadPath(ns, "svc"))["status"]["placement"].contains("costNote"));
  const auto patches = op.metric("rest_client_requests_total", "verb=\"patch\"");
  const auto reconciles =
      op.metric("controller_runtime_reconcile_total", "controller=\"gpuworkload\"");
  // Three changes to the Deployment, three reconciles of the workload.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(c.patch(deploymentPath(ns, "svc"),
                    json{{"metadata", {{"annotations", {{"touch", std::to_string(i)}}}}}})
                .ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  CHECK(op.metric("controller_runtime_reconcile_total", "controller=\"gpuworkload\"") >=
        reconciles + 3);
  CHECK(op.metric("rest_client_requests_total", "verb=\"patch\"") == patches);
  CHECK(op.log().find("stores a GpuWorkload status other than the one written") !=
        std::string::npos);
  CHECK(op.stop() == 0);
  REQUIRE(c.patch(crd, json::array({{{"op", "add"}, {"path", field}, {"value", schema}}}),
                  kube::PatchType::Json)
              .ok());
}

TEST_CASE("a burst: each placed once and its status written once, by the writer") {
  auto& c = cluster();
  const std::string ns = "burst";
  constexpr int kWorkloads = 40;
  createNamespace(ns);
  for (int i = 0; i < kWorkloads; ++i) {
    createDeployment(ns, "b-" + std::to_string(i));
    createWorkload(ns, "b-" + std::to_string(i), "b-" + std::to_string(i), kSmallGpu);
  }
  const auto before = testing::readAudit(c.plane(), c.operatorUser()).size();
  // All forty queued at the start, one worker. The statuses start at one
  // each five seconds and from there follow the placements' latency (its
  // halving and growth are the status writer's tests, on a scripted
  // server: a real one cannot be made slow on cue).
  OperatorProcess op(c.operatorKubeconfig(), {"--workers", "1", "--busy-status-qps", "0.2"});
  REQUIRE(op.waitReady());
  for (int i = 0; i < kWorkloads; ++i) {
    REQUIRE_MESSAGE(c.waitFor([&] {
      return conditionIs(workloadPath(ns, "b-" + std::to_string(i)), "Applied", "True");
    }),
                    op.log());
    CHECK(podSpec(ns, "b-" + std::to_string(i))["nodeSelector"].contains(
        "node.kubernetes.io/instance-type"));
  }
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const auto entries = testing::readAudit(c.plane(), c.operatorUser());
  std::map<std::string, int> deploymentPatches;
  std::map<std::string, int> statusPatches;
  for (std::size_t i = before; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    if (entry.ns != ns || entry.verb != "patch" || entry.stage != "ResponseComplete") {
      continue;
    }
    if (entry.resource == "deployments") {
      ++deploymentPatches[entry.name];
    } else if (entry.resource == "gpuworkloads" && entry.subresource == "status") {
      ++statusPatches[entry.name];
    }
  }
  // Each placed once and its status written once: reconciles that ran
  // while a status waited read it, and decided nothing again.
  CHECK(deploymentPatches.size() == kWorkloads);
  CHECK(statusPatches.size() == kWorkloads);
  for (const auto& [name, count] : deploymentPatches) {
    CHECK_MESSAGE(count == 1, name << ": " << count << " Deployment patches");
  }
  for (const auto& [name, count] : statusPatches) {
    CHECK_MESSAGE(count == 1, name << ": " << count << " status patches");
  }
  CHECK(op.metric("gpu_placement_statuses_written_inline_total") == 0);
  // The rate the statuses may go at, between its floor (the start, here)
  // and --qps (100 by default).
  const double allowed = op.metric("gpu_placement_status_writes_allowed_per_second");
  CHECK(allowed >= 0.2);
  CHECK(allowed <= 100);
  CHECK(op.metric("gpu_placement_status_writes_total", "result=\"ok\"") >= kWorkloads);
  CHECK(op.metric("gpu_placement_statuses_waiting") == 0);
  // No pod came or went here: the cluster view was computed whole, for
  // the first decision, and never recounted.
  CHECK(op.metric("gpu_placement_cluster_view_seconds_count", "work=\"whole\"") >= 1);
  CHECK(op.metric("gpu_placement_cluster_view_seconds_count", "work=\"recount\"") == 0);
  CHECK(op.stop() == 0);
}

}  // namespace gpuplacement
