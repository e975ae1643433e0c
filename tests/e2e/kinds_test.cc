// The kinds GPU work runs as on EKS, each with its real controller beside
// the simulated cluster with Karpenter (scripts/controlplane start --kinds
// kuberay,lws,jobset,trainer: KubeRay v1.5.0, LeaderWorkerSet v0.7.0, JobSet
// v0.10.1, Kubeflow Trainer v2.0.0): the samples of
// config/samples/rayservices.yaml, leaderworkerset.yaml, jobset.yaml,
// rayjob.yaml and trainjob.yaml, and a RayCluster waiting
// suspended, are placed pod set by pod set and their pods run on nodes of
// the type each GpuWorkload's status names; the pod sets that carry no
// model run where the team's template lets them.
#include <chrono>
#include <cstdlib>
#include <set>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/suite.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::cluster;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using testing::readFile;
using testing::repoRoot;
using testing::workloadPath;
using namespace std::chrono_literals;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/demo.yaml";
  options.karpenter = true;
  options.prices = "config/samples/placementpolicy.yaml";
  options.kinds = {"kuberay", "lws", "jobset", "trainer"};
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "ml-serving";
const std::string kSamples = repoRoot() + "/config/samples";

std::string rayPath(const std::string& kind, const std::string& name = "") {
  return Cluster::pathOf("ray.io/v1", kind, kNamespace, name);
}
std::string lwsPath(const std::string& name = "") {
  return Cluster::pathOf("leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet", kNamespace, name);
}

// The policy and the namespace, once for the suite; the operator for each
// test case.
void prepare(Cluster& c) {
  static const bool done = [&c] {
    (void)c.create(
        "/api/v1/namespaces",
        {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", kNamespace}}}});
    c.apply(readFile(kSamples + "/placementpolicy.yaml"));
    return true;
  }();
  (void)done;
}

struct PodOnNode {
  std::string name;
  std::string phase;
  std::string instanceType;  // of its node; empty while unscheduled
  std::string nodePool;      // the node's karpenter.sh/nodepool
  bool terminating = false;
};

std::vector<PodOnNode> podsSelected(const std::string& selector,
                                    const std::string& ns = kNamespace) {
  std::vector<PodOnNode> pods;
  auto list = cluster().get("/api/v1/namespaces/" + ns + "/pods?labelSelector=" + selector);
  if (!list) {
    return pods;
  }
  for (const auto& pod : (*list)["items"]) {
    PodOnNode entry;
    entry.name = base::stringMember(pod["metadata"], "name");
    entry.phase = base::stringMember(pod["status"], "phase");
    entry.terminating = pod["metadata"].contains("deletionTimestamp");
    const auto node = base::stringMember(pod["spec"], "nodeName");
    if (!node.empty()) {
      if (auto object = cluster().get("/api/v1/nodes/" + node)) {
        const auto& labels = (*object)["metadata"]["labels"];
        entry.instanceType = base::stringMember(labels, "node.kubernetes.io/instance-type");
        entry.nodePool = base::stringMember(labels, "karpenter.sh/nodepool");
      }
    }
    pods.push_back(std::move(entry));
  }
  return pods;
}

// Why the pods the selector picks are not `count`, Running, on nodes of
// `instanceType` (or, empty, on nodes of the pool `pool`); empty once they are.
std::string notRunningOn(const std::string& selector, std::size_t count,
                         const std::string& instanceType, const std::string& pool = "",
                         const std::string& ns = kNamespace) {
  const auto pods = podsSelected(selector, ns);
  std::string why;
  std::size_t live = 0;
  for (const auto& pod : pods) {
    if (pod.terminating) {
      continue;
    }
    ++live;
    const bool where =
        instanceType.empty() ? pod.nodePool == pool : pod.instanceType == instanceType;
    if (pod.phase != "Running" || !where) {
      why += pod.name + " is " + pod.phase + " on " +
             (pod.instanceType.empty() ? std::string("no node")
                                       : pod.instanceType + " (" + pod.nodePool + ")") +
             "; ";
    }
  }
  if (live != count) {
    why += std::to_string(live) + " pods of " + std::to_string(count) + " (" + selector + ")";
  }
  return why;
}

// The instance type a GpuWorkload placed its target on, once it says
// Placed and Applied; empty before.
std::string placedType(const std::string& name, const std::string& ns = kNamespace) {
  const auto path = workloadPath(ns, name);
  if (cluster().conditionOf(path, "Placed") != "True/Placed" ||
      cluster().conditionOf(path, "Applied").rfind("True/", 0) != 0) {
    return "";
  }
  const auto workload = cluster().mustGet(path);
  return base::stringMember(base::memberOf(base::memberOf(workload, "status"), "placement"),
                            "instanceType");
}

std::string conditions(const std::string& name, const std::string& ns = kNamespace) {
  const auto path = workloadPath(ns, name);
  return "Placed " + cluster().conditionOf(path, "Placed") + ": " +
         cluster().conditionMessageOf(path, "Placed") + "; Applied " +
         cluster().conditionOf(path, "Applied") + ": " +
         cluster().conditionMessageOf(path, "Applied");
}

json podTemplateAt(const json& object, const std::string& pointer) {
  return object.value(json::json_pointer(pointer), json::object());
}

// Waits up to 240 s for `count` pods the selector picks in `ns` Running on
// nodes of `type`; empty once they are, else what was seen while any were
// there (a Job's pods go once they complete) and what is seen last.
std::string awaitRunningOn(Cluster& c, const std::string& selector, std::size_t count,
                           const std::string& type, const std::string& ns) {
  std::string why;
  std::string seen;
  const bool running = c.waitFor(
      [&] {
        why = notRunningOn(selector, count, type, "", ns);
        if (why.rfind("0 pods", 0) != 0) {
          seen = why;
        }
        return why.empty();
      },
      240s, 500ms);
  return running ? "" : "on " + type + ": " + seen + " / " + why;
}

// Waits up to 180 s for a run to end Complete; its status.run as last read.
json awaitRunComplete(Cluster& c, const std::string& name, const std::string& ns) {
  json run;
  (void)c.waitFor(
      [&] {
        run = base::memberOf(c.mustGet(workloadPath(ns, name))["status"], "run");
        return base::stringMember(run, "outcome") == "Complete";
      },
      180s, 500ms);
  return run;
}

// The zones of the nodes the selected pods in `ns` are bound to.
std::set<std::string> zonesOf(Cluster& c, const std::string& selector, const std::string& ns) {
  std::set<std::string> zones;
  const auto pods = c.mustGet("/api/v1/namespaces/" + ns + "/pods?labelSelector=" + selector);
  for (const auto& pod : pods["items"]) {
    const auto node = base::stringMember(pod["spec"], "nodeName");
    const auto labels = c.mustGet("/api/v1/nodes/" + node)["metadata"]["labels"];
    zones.insert(base::stringMember(labels, "topology.kubernetes.io/zone"));
  }
  return zones;
}

TEST_CASE("a LeaderWorkerSet's leader and workers are placed and its group rolls onto the type") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  c.apply(readFile(kSamples + "/leaderworkerset.yaml"));

  std::string type;
  REQUIRE_MESSAGE(
      c.waitFor([&] { return !(type = placedType("llama-70b-group")).empty(); }, 120s, 250ms),
      conditions("llama-70b-group") << "\n"
                                    << op.log());
  const auto lws = c.mustGet(lwsPath("llama-70b-group"));
  for (const char* pointer :
       {"/spec/leaderWorkerTemplate/leaderTemplate", "/spec/leaderWorkerTemplate/workerTemplate"}) {
    CAPTURE(pointer);
    const auto templ = podTemplateAt(lws, pointer);
    CHECK(templ["spec"]["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"));
    CHECK(templ["spec"].contains("nodeSelector"));
    // The team's own sizing stands beside the placement.
    CHECK(templ["spec"]["containers"][0]["resources"]["requests"]["memory"] == "64Gi");
  }
  const auto record =
      base::stringMember(lws["metadata"]["annotations"], "gpuplacement.io/owned-fields");
  CHECK(json::parse(record)["podSets"] == json({"leader", "worker"}));
  // The status prices each pod set: one leader and one worker.
  const auto status = c.mustGet(workloadPath(kNamespace, "llama-70b-group"))["status"];
  REQUIRE(status["podSets"].size() == 2);
  CHECK(status["podSets"][0]["name"] == "leader");
  CHECK(status["podSets"][1]["pods"] == 1);
  CHECK(status["podSets"][0]["hourlyCost"] == status["placement"]["hourlyCost"]);

  // LeaderWorkerSet rolls its group over to the new templates: both pods
  // end up Running on the type placed.
  std::string why;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      why = notRunningOn("leaderworkerset.sigs.k8s.io%2Fname%3Dllama-70b-group", 2,
                                         type);
                      return why.empty();
                    },
                    240s, 500ms),
                "on " << type << ": " << why);
  // Its own write, read back from the cache, is never taken for a revert.
  CHECK_MESSAGE(
      c.conditionOf(workloadPath(kNamespace, "llama-70b-group"), "Applied").rfind("True/", 0) == 0,
      conditions("llama-70b-group"));
  CHECK_FALSE(c.mustGet(workloadPath(kNamespace, "llama-70b-group"))["status"].contains("reverts"));
  MESSAGE("llama-70b-group: leader and worker on " << type);
  op.stop();
}

TEST_CASE("a model no node holds: a LeaderWorkerSet group across two Trainium nodes, EFA asked") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  const std::string name = "llama-405b-trainium";
  c.apply(readFile(kSamples + "/leaderworkerset-405b-trainium.yaml"));

  std::string type;
  REQUIRE_MESSAGE(c.waitFor([&] { return !(type = placedType(name)).empty(); }, 120s, 250ms),
                  conditions(name) << "\n"
                                   << op.log());
  CHECK(type == "trn1.32xlarge");
  const auto placement = c.mustGet(workloadPath(kNamespace, name))["status"]["placement"];
  CHECK(placement["acrossNodes"]["nodes"] == 2);
  CHECK(placement["acrossNodes"]["efaInterfaces"] == 8);
  CHECK(placement["acceleratorCount"] == 16);
  CHECK(placement["nodes"] == 2);
  const auto templ =
      podTemplateAt(c.mustGet(lwsPath(name)), "/spec/leaderWorkerTemplate/workerTemplate");
  const auto& limits = templ["spec"]["containers"][0]["resources"]["limits"];
  CHECK(limits["aws.amazon.com/neuron"] == "16");
  CHECK(limits["vpc.amazonaws.com/efa"] == "8");
  // The group kept in one zone, by its own group key.
  const auto terms =
      base::memberOf(base::memberOf(base::memberOf(templ["spec"], "affinity"), "podAffinity"),
                     "requiredDuringSchedulingIgnoredDuringExecution");
  REQUIRE_MESSAGE(terms.is_array(), templ.dump());
  REQUIRE(terms.size() == 1);
  CHECK(terms[0]["topologyKey"] == "topology.kubernetes.io/zone");
  CHECK(terms[0]["matchLabelKeys"] == json::array({"leaderworkerset.sigs.k8s.io/group-key"}));

  // Karpenter launches a node for each pod of the group; both Running.
  std::string why;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      why = notRunningOn("leaderworkerset.sigs.k8s.io%2Fname%3D" + name, 2, type);
                      return why.empty();
                    },
                    240s, 500ms),
                "on " << type << ": " << why);
  std::set<std::string> nodes;
  auto pods = c.get("/api/v1/namespaces/" + kNamespace +
                    "/pods?labelSelector=leaderworkerset.sigs.k8s.io%2Fname%3D" + name);
  REQUIRE(pods);
  for (const auto& pod : (*pods)["items"]) {
    nodes.insert(base::stringMember(pod["spec"], "nodeName"));
    // The API server made the group's key part of each pod's selector.
    const auto key =
        base::stringMember(pod["metadata"]["labels"], "leaderworkerset.sigs.k8s.io/group-key");
    CHECK_FALSE(key.empty());
    CHECK(pod["spec"]["affinity"].dump().find(key) != std::string::npos);
  }
  CHECK(nodes.size() == 2);  // one pod on each node of the group
  const auto zones = zonesOf(c, "leaderworkerset.sigs.k8s.io%2Fname%3D" + name, kNamespace);
  REQUIRE(zones.size() == 1);  // in one zone
  CHECK_FALSE(zones.begin()->empty());
  MESSAGE(name << ": a group of two pods Running on two " << type << " nodes in zone "
               << *zones.begin());

  // Bad input: a group of one pod, as a LeaderWorkerSet defaults. Nothing
  // is written, and the status names the field and the size it needs.
  const std::string single = "llama-405b-single";
  auto manifest = readFile(kSamples + "/leaderworkerset-405b-trainium.yaml");
  for (std::size_t at = 0; (at = manifest.find(name, at)) != std::string::npos;) {
    manifest.replace(at, name.size(), single);
    at += single.size();
  }
  manifest.replace(manifest.find("size: 2"), 7, "size: 1");
  c.apply(manifest);
  const auto singlePath = workloadPath(kNamespace, single);
  REQUIRE_MESSAGE(
      c.waitFor([&] { return c.conditionOf(singlePath, "Applied") == "False/GroupSizeNeeded"; },
                120s, 250ms),
      conditions(single) << "\n"
                         << op.log());
  CHECK(c.conditionMessageOf(singlePath, "Applied")
            .find("spec.leaderWorkerTemplate.size is 1: set it to 2") != std::string::npos);
  const auto untouched =
      podTemplateAt(c.mustGet(lwsPath(single)), "/spec/leaderWorkerTemplate/workerTemplate");
  CHECK_FALSE(untouched["spec"].contains("nodeSelector"));
  CHECK_FALSE(
      untouched["spec"]["containers"][0]["resources"]["limits"].contains("aws.amazon.com/neuron"));

  // spec.scaling.groupSize: Set lets the operator write the size: 2, in the
  // write that places the group; the LeaderWorkerSet controller takes it
  // and runs both pods (on the nodes the first group leaves).
  (void)c.remove(lwsPath(name));
  REQUIRE(c.patch(singlePath, {{"spec", {{"scaling", {{"groupSize", "Set"}}}}}}).ok());
  REQUIRE_MESSAGE(
      c.waitFor([&] { return c.conditionOf(singlePath, "Applied").rfind("True/", 0) == 0; }, 120s,
                250ms),
      conditions(single) << "\n"
                         << op.log());
  CHECK(c.mustGet(lwsPath(single))["spec"]["leaderWorkerTemplate"]["size"] == 2);
  CHECK(c.conditionMessageOf(singlePath, "Placed")
            .find("groups of 2 pods set in spec.leaderWorkerTemplate.size (was 1)") !=
        std::string::npos);
  const auto singleSelector = "leaderworkerset.sigs.k8s.io%2Fname%3D" + single;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      why = notRunningOn(singleSelector, 2, type);
                      return why.empty();
                    },
                    240s, 500ms),
                "on " << type << ": " << why);
  // The GpuWorkload deleted: the team's size is back.
  (void)c.remove(singlePath);
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      const auto lws = c.get(lwsPath(single));
                      return lws && (*lws)["spec"]["leaderWorkerTemplate"]["size"] == 1;
                    },
                    60s, 250ms),
                op.log());
  MESSAGE(single << ": size 1 set to 2 by the operator, both pods Running on " << type
                 << ", and 1 again once released");
  (void)c.remove(lwsPath(single));
  op.stop();
}

TEST_CASE("a RayCluster waiting suspended: its worker group placed and resumed, its head on CPU") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  const auto manifest = R"(
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: batch-embed
  namespace: ml-serving
  labels: {gpuplacement.io/workload: batch-embed}
spec:
  suspend: true
  rayVersion: "2.46.0"
  headGroupSpec:
    rayStartParams: {num-cpus: "0"}
    template:
      spec:
        containers:
        - name: head
          image: rayproject/ray:2.46.0-py311
          resources: {requests: {cpu: "1", memory: 4Gi}, limits: {memory: 4Gi}}
  workerGroupSpecs:
  - groupName: gpu
    replicas: 2
    minReplicas: 2
    maxReplicas: 2
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: worker
          image: rayproject/ray-ml:2.46.0-py311-gpu
          resources: {requests: {cpu: "3", memory: 12Gi}, limits: {memory: 12Gi}}
---
apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: batch-embed, namespace: ml-serving}
spec:
  targetRef: {apiVersion: ray.io/v1, kind: RayCluster, name: batch-embed}
  containers: [worker]
  workload: {kind: Inference}
  model: {family: mistral-7b, precision: fp16, architecture: Transformer}
  objective: CostOptimized
  constraints: {tiers: [NVIDIA]}
)";
  c.apply(manifest);
  std::string type;
  REQUIRE_MESSAGE(
      c.waitFor([&] { return !(type = placedType("batch-embed")).empty(); }, 120s, 250ms),
      conditions("batch-embed") << "\n"
                                << op.log());
  const auto ray = c.mustGet(rayPath("RayCluster", "batch-embed"));
  CHECK(ray["spec"]["suspend"] == false);  // resumed by the write that placed it
  const auto head = podTemplateAt(ray, "/spec/headGroupSpec/template");
  CHECK_FALSE(head["spec"].contains("nodeSelector"));
  CHECK_FALSE(head["spec"]["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"));
  // KubeRay made no pod while it waited suspended: every worker it made
  // carries the placement's node selector.
  const auto placedSelector =
      podTemplateAt(ray, "/spec/workerGroupSpecs/0/template")["spec"]["nodeSelector"];
  REQUIRE(placedSelector.is_object());
  const auto workers = c.get("/api/v1/namespaces/" + kNamespace +
                             "/pods?labelSelector=ray.io%2Fcluster%3Dbatch-embed,ray.io%2Fnode-"
                             "type%3Dworker");
  REQUIRE(workers);
  for (const auto& pod : (*workers)["items"]) {
    for (const auto& [key, value] : placedSelector.items()) {
      CHECK(base::memberOf(pod["spec"], "nodeSelector").value(key, json()) == value);
    }
  }

  std::string why;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      why =
                          notRunningOn("ray.io%2Fcluster%3Dbatch-embed,ray.io%2Fnode-type%3Dworker",
                                       2, type) +
                          notRunningOn("ray.io%2Fcluster%3Dbatch-embed,ray.io%2Fnode-type%3Dhead",
                                       1, "", "cpu");
                      return why.empty();
                    },
                    240s, 500ms),
                why);
  CHECK_MESSAGE(
      c.conditionOf(workloadPath(kNamespace, "batch-embed"), "Applied").rfind("True/", 0) == 0,
      conditions("batch-embed"));
  CHECK_FALSE(c.mustGet(workloadPath(kNamespace, "batch-embed"))["status"].contains("reverts"));
  MESSAGE("batch-embed: workers on " << type << ", head on the cpu pool");
  op.stop();
}

TEST_CASE(
    "seed 002's RayServices: each worker group placed from intent, on NVIDIA and Inferentia") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  c.apply(readFile(kSamples + "/rayservices.yaml"));

  struct Service {
    std::string name;
    std::string group;
    std::string device;
    std::string type = "";
  };
  std::vector<Service> services = {{"mistral-gpu", "vllm", "nvidia.com/gpu"},
                                   {"mistral-inf2", "inf2", "aws.amazon.com/neuron"}};
  for (auto& service : services) {
    CAPTURE(service.name);
    REQUIRE_MESSAGE(
        c.waitFor([&] { return !(service.type = placedType(service.name)).empty(); }, 120s, 250ms),
        conditions(service.name) << "\n"
                                 << op.log());
    const auto object = c.mustGet(rayPath("RayService", service.name));
    const auto worker = podTemplateAt(object, "/spec/rayClusterConfig/workerGroupSpecs/0/template");
    CHECK(worker["spec"]["containers"][0]["resources"]["limits"].contains(service.device));
    const auto head = podTemplateAt(object, "/spec/rayClusterConfig/headGroupSpec/template");
    CHECK_FALSE(head["spec"].contains("nodeSelector"));
  }
  CHECK(services[1].type.rfind("inf2.", 0) == 0);

  // A new cluster spec reaches the pods through a new RayCluster, which
  // KubeRay switches to once Ray Serve answers on it: no Ray runs in the
  // simulated pods, so the switch never comes. What it would make is what
  // KubeRay makes when its pending cluster is gone: that cluster again,
  // from the RayService's spec as it is now.
  for (const auto& service : services) {
    const auto selector = "ray.io%2Foriginated-from-cr-name%3D" + service.name;
    const auto clusters = c.get(rayPath("RayCluster") + "?labelSelector=" + selector);
    REQUIRE(clusters);
    for (const auto& item : (*clusters)["items"]) {
      (void)c.remove(rayPath("RayCluster", item["metadata"]["name"].get<std::string>()));
    }
  }
  for (const auto& service : services) {
    CAPTURE(service.name);
    std::string why;
    CHECK_MESSAGE(
        c.waitFor(
            [&] {
              const auto object = c.mustGet(rayPath("RayService", service.name));
              const auto cluster = base::stringMember(
                  base::memberOf(base::memberOf(object, "status"), "pendingServiceStatus"),
                  "rayClusterName");
              if (cluster.empty()) {
                why = "no pending cluster";
                return false;
              }
              const auto prefix = "ray.io%2Fcluster%3D" + cluster;
              why = notRunningOn(prefix + ",ray.io%2Fnode-type%3Dworker", 1, service.type) +
                    notRunningOn(prefix + ",ray.io%2Fnode-type%3Dhead", 1, "", "cpu");
              return why.empty();
            },
            240s, 500ms),
        why);
    CHECK_MESSAGE(
        c.conditionOf(workloadPath(kNamespace, service.name), "Applied").rfind("True/", 0) == 0,
        conditions(service.name));
    MESSAGE(service.name << ": worker group " << service.group << " on " << service.type);
  }
  op.stop();
}

TEST_CASE("a JobSet waiting suspended: its workers placed and resumed in one write, Running") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  // kwok completes a Job's pods as soon as they run, unless they say how
  // long to run: 60 s here, to see both workers Running before the end.
  auto manifest = readFile(kSamples + "/jobset.yaml");
  const std::string labels = "metadata: {labels: {app: mistral-lora}}";
  const auto at = manifest.find(labels);
  REQUIRE(at != std::string::npos);
  manifest.replace(at, labels.size(),
                   "metadata: {labels: {app: mistral-lora}, annotations: "
                   "{pod-complete.stage.kwok.x-k8s.io/delay: 60s}}");
  c.apply(manifest);
  const std::string ns = "research";
  const std::string name = "mistral-lora";
  const auto selector = "jobset.sigs.k8s.io%2Fjobset-name%3D" + name;
  std::string type;
  REQUIRE_MESSAGE(c.waitFor([&] { return !(type = placedType(name, ns)).empty(); }, 120s, 250ms),
                  conditions(name, ns) << "\n"
                                       << op.log());
  const auto path = Cluster::pathOf("jobset.x-k8s.io/v1alpha2", "JobSet", ns, name);
  const auto jobSet = c.mustGet(path);
  CHECK(jobSet["spec"]["suspend"] == false);  // resumed by the write that placed it
  const auto workers = podTemplateAt(jobSet, "/spec/replicatedJobs/0/template/spec/template");
  CHECK(workers["spec"].contains("nodeSelector"));
  // The devices are the team's, as its manifest wrote them (JobSet's
  // defaulting webhook writes the quantity back as text).
  CHECK(workers["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "1");
  const auto placement = c.mustGet(workloadPath(ns, name))["status"]["placement"];
  CHECK(placement["replicas"] == 2);  // two Jobs of one pod
  CHECK(placement["acceleratorCount"] == 1);

  // The JobSet controller resumes its Jobs with the placement copied into
  // them: both workers Running on the type placed.
  const auto why = awaitRunningOn(c, selector, 2, type, ns);
  CHECK_MESSAGE(why.empty(), why);
  CHECK_MESSAGE(c.conditionOf(workloadPath(ns, name), "Applied").rfind("True/", 0) == 0,
                conditions(name, ns));
  CHECK_FALSE(c.mustGet(workloadPath(ns, name))["status"].contains("reverts"));
  // Its workers complete, and so does the JobSet: the run is priced from
  // its resume to its Completed condition, at the two pods' price.
  const auto run = awaitRunComplete(c, name, ns);
  CHECK_MESSAGE(base::stringMember(run, "outcome") == "Complete", conditions(name, ns)
                                                                      << "; run: " << run.dump());
  CHECK(c.conditionOf(workloadPath(ns, name), "Ready") == "True/JobComplete");
  CHECK(run["pods"] == 2);
  CHECK(run["instanceType"] == type);
  CHECK(run["durationSeconds"].get<std::int64_t>() >= 60);
  CHECK(std::atof(base::stringMember(run, "cost").c_str()) > 0);
  MESSAGE(name << ": both workers on " << type << ", the run " << run.dump());
  op.stop();
}

// kwok completes a Job's pods as soon as they run unless they say how long
// (an annotation), and a TrainJob has no field for its pods' annotations:
// the e2e's runtime is the Trainer's torch-distributed (which the launcher
// applied as a ClusterTrainingRuntime) with that annotation, a
// TrainingRuntime of the namespace.
const char* kTorchDistributed60s = R"(
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch-distributed-60s, namespace: research}
spec:
  mlPolicy:
    numNodes: 1
    torch: {numProcPerNode: auto}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              metadata:
                annotations: {pod-complete.stage.kwok.x-k8s.io/delay: 60s}
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                  command: [/bin/bash, -c, "echo Torch Distributed Runtime"]
)";

TEST_CASE("a TrainJob waiting suspended: placed in its podSpecOverrides, then resumed, Running") {
  auto& c = cluster();
  prepare(c);
  // The launcher applied the Trainer's runtimes through its webhook.
  REQUIRE(c.get("/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-distributed"));
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  auto manifest = readFile(kSamples + "/trainjob.yaml");
  const std::string runtime = "runtimeRef: {name: torch-distributed}";
  const auto at = manifest.find(runtime);
  REQUIRE(at != std::string::npos);
  manifest.replace(at, runtime.size(),
                   "runtimeRef: {name: torch-distributed-60s, kind: TrainingRuntime}");
  const std::string ns = "research";
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: research}\n");
  c.apply(kTorchDistributed60s);
  const auto applied = std::chrono::steady_clock::now();
  c.apply(manifest);
  const std::string name = "llama-finetune";
  const auto path = Cluster::pathOf("trainer.kubeflow.org/v1alpha1", "TrainJob", ns, name);
  std::string type;
  REQUIRE_MESSAGE(c.waitFor([&] { return !(type = placedType(name, ns)).empty(); }, 120s, 250ms),
                  conditions(name, ns) << "\n"
                                       << op.log());
  // The placing write leaves it suspended; the next one resumes it.
  REQUIRE_MESSAGE(
      c.waitFor([&] { return c.mustGet(path)["spec"]["suspend"] == false; }, 60s, 250ms),
      conditions(name, ns));
  const auto trainJob = c.mustGet(path);
  const auto& overrides = trainJob["spec"]["podSpecOverrides"];
  REQUIRE(overrides.size() == 1);
  CHECK(overrides[0]["targetJobs"] == json::array({{{"name", "node"}}}));
  CHECK(overrides[0]["nodeSelector"].contains("karpenter.k8s.aws/instance-gpu-name"));
  // The devices are the team's, as its manifest wrote them.
  CHECK(trainJob["spec"]["trainer"]["resourcesPerNode"]["limits"]["nvidia.com/gpu"] == 1);
  // The status follows the resuming write.
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      return c.conditionMessageOf(workloadPath(ns, name), "Applied")
                                 .find("resumed by a write of its own") != std::string::npos;
                    },
                    30s, 250ms),
                conditions(name, ns) << "\n"
                                     << op.log());
  // The Trainer's webhook is the one that refuses the placement and the
  // resume in one write: a change of podSpecOverrides on the TrainJob that
  // is no longer suspended is refused (a dry run).
  auto refused =
      c.patch(path + "?dryRun=All",
              {{"spec",
                {{"podSpecOverrides",
                  {{{"targetJobs", {{{"name", "node"}}}}, {"nodeSelector", {{"a", "b"}}}}}}}}});
  REQUIRE_FALSE(refused.ok());
  CHECK_MESSAGE(refused.error().message.find(
                    "PodSpecOverrides can only be modified when the TrainJob is suspended") !=
                    std::string::npos,
                refused.error().message);
  // The Trainer's JobSet carries the placement into the trainer's pods.
  const auto jobSet = c.mustGet(Cluster::pathOf("jobset.x-k8s.io/v1alpha2", "JobSet", ns, name));
  const auto node = podTemplateAt(jobSet, "/spec/replicatedJobs/0/template/spec/template");
  CHECK(node["spec"]["nodeSelector"] == overrides[0]["nodeSelector"]);
  const auto placement = c.mustGet(workloadPath(ns, name))["status"]["placement"];
  CHECK(placement["replicas"] == 2);  // numNodes
  CHECK(placement["acceleratorCount"] == 1);

  const auto why = awaitRunningOn(c, "jobset.sigs.k8s.io%2Fjobset-name%3D" + name, 2, type, ns);
  CHECK_MESSAGE(why.empty(), why);
  const auto running = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - applied);
  CHECK_MESSAGE(c.conditionOf(workloadPath(ns, name), "Applied").rfind("True/", 0) == 0,
                conditions(name, ns));
  CHECK_FALSE(c.mustGet(workloadPath(ns, name))["status"].contains("reverts"));
  // Its nodes complete, the Trainer copies the JobSet's Completed: the run
  // priced from its resume to its Complete condition, at the two pods' price.
  const auto run = awaitRunComplete(c, name, ns);
  CHECK_MESSAGE(base::stringMember(run, "outcome") == "Complete", conditions(name, ns)
                                                                      << "; run: " << run.dump());
  CHECK(c.conditionOf(workloadPath(ns, name), "Ready") == "True/JobComplete");
  CHECK(run["pods"] == 2);
  CHECK(run["instanceType"] == type);
  CHECK(run["durationSeconds"].get<std::int64_t>() >= 60);
  CHECK(std::atof(base::stringMember(run, "cost").c_str()) > 0);
  MESSAGE(name << ": both nodes Running on " << type << " " << running.count()
               << " ms after the apply; the run " << run.dump());
  op.stop();
}

TEST_CASE("a 70B model trained in full: a JobSet across three Trainium nodes, its run priced") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  auto manifest = readFile(kSamples + "/jobset-trainium-70b.yaml");
  const std::string labels = "metadata: {labels: {app: llama-70b-full}}";
  const auto at = manifest.find(labels);
  REQUIRE(at != std::string::npos);
  manifest.replace(at, labels.size(),
                   "metadata: {labels: {app: llama-70b-full}, annotations: "
                   "{pod-complete.stage.kwok.x-k8s.io/delay: 30s}}");
  c.apply(manifest);
  const std::string ns = "research";
  const std::string name = "llama-70b-full";
  std::string type;
  REQUIRE_MESSAGE(c.waitFor([&] { return !(type = placedType(name, ns)).empty(); }, 120s, 250ms),
                  conditions(name, ns) << "\n"
                                       << op.log());
  CHECK(type == "trn1.32xlarge");
  const auto placement = c.mustGet(workloadPath(ns, name))["status"]["placement"];
  CHECK(placement["acrossNodes"]["nodes"] == 3);
  // Each stage on one node's 16 Trainium, three stages, one copy: the
  // API server keeps the layout the status writes.
  CHECK(placement["acrossNodes"]["training"]["tensorParallel"] == 16);
  CHECK(placement["acrossNodes"]["training"]["pipelineParallel"] == 3);
  CHECK(placement["acrossNodes"]["training"]["dataParallel"] == 1);
  CHECK(placement["acceleratorCount"] == 16);
  CHECK(placement["replicas"] == 1);  // one replica of the model: a group of three pods
  // Three pods, one on each of three nodes of the type.
  // The reason says the zone is the team's to keep: the sample keeps it.
  CHECK(c.conditionMessageOf(workloadPath(ns, name), "Placed")
            .find("a group stays in one zone only where the team keeps it there") !=
        std::string::npos);
  const auto why = awaitRunningOn(c, "jobset.sigs.k8s.io%2Fjobset-name%3D" + name, 3, type, ns);
  CHECK_MESSAGE(why.empty(), why);
  CHECK(zonesOf(c, "jobset.sigs.k8s.io%2Fjobset-name%3D" + name, ns).size() == 1);
  // The run: three nodes at $21.50/h for as long as it ran.
  const auto run = awaitRunComplete(c, name, ns);
  CHECK_MESSAGE(base::stringMember(run, "outcome") == "Complete", conditions(name, ns)
                                                                      << "; run: " << run.dump());
  CHECK(run["pods"] == 3);
  CHECK(run["hourlyCost"] == "64.5");
  const auto seconds = run["durationSeconds"].get<std::int64_t>();
  CHECK(std::atof(base::stringMember(run, "cost").c_str()) ==
        doctest::Approx(64.5 * static_cast<double>(seconds) / 3600).epsilon(0.001));
  MESSAGE(name << ": three workers on three " << type << " nodes, the run " << run.dump());
  op.stop();
}

TEST_CASE("a RayJob waiting suspended: placed and resumed, its cluster's workers Running, priced") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  const auto start = std::chrono::steady_clock::now();
  c.apply(readFile(kSamples + "/rayjob.yaml"));
  const std::string ns = "research";
  const std::string name = "llama-qlora";
  std::string type;
  REQUIRE_MESSAGE(c.waitFor([&] { return !(type = placedType(name, ns)).empty(); }, 120s, 250ms),
                  conditions(name, ns) << "\n"
                                       << op.log());
  const auto path = Cluster::pathOf("ray.io/v1", "RayJob", ns, name);
  const auto rayJob = c.mustGet(path);
  // Resumed by the write that placed it. KubeRay's own writes of the RayJob
  // drop a false suspend (omitempty): absent is false.
  CHECK(rayJob["spec"].value("suspend", false) == false);
  const auto head = podTemplateAt(rayJob, "/spec/rayClusterSpec/headGroupSpec/template");
  CHECK_FALSE(head["spec"].contains("nodeSelector"));
  // The manifest asks for no GPU: the count is the intent's, written with
  // the node selector while it waited suspended (KubeRay takes it).
  const auto workers =
      podTemplateAt(rayJob, "/spec/rayClusterSpec/workerGroupSpecs/0/template")["spec"];
  REQUIRE(workers["nodeSelector"].is_object());
  const auto placement = c.mustGet(workloadPath(ns, name))["status"]["placement"];
  CHECK(placement["replicas"] == 2);
  const auto gpus = placement["acceleratorCount"].get<std::int64_t>();
  CHECK(gpus >= 1);
  CHECK(workers["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == std::to_string(gpus));

  // KubeRay makes the cluster from the placed spec on resume: the pods
  // name only the cluster (ray.io/cluster), which the RayJob's status names.
  std::string clusterName;
  REQUIRE_MESSAGE(c.waitFor(
                      [&] {
                        clusterName = base::stringMember(base::memberOf(c.mustGet(path), "status"),
                                                         "rayClusterName");
                        return !clusterName.empty();
                      },
                      60s, 250ms),
                  c.mustGet(path).dump());
  const auto bySelector = "ray.io%2Fcluster%3D" + clusterName;
  std::string why;
  std::string seen;
  CHECK_MESSAGE(
      c.waitFor(
          [&] {
            why = notRunningOn(bySelector + ",ray.io%2Fnode-type%3Dworker", 2, type, "", ns) +
                  notRunningOn(bySelector + ",ray.io%2Fnode-type%3Dhead", 1, "", "cpu", ns);
            if (why.find(" is ") != std::string::npos) {
              seen = why;
            }
            return why.empty();
          },
          240s, 500ms),
      "on " << type << ": " << seen << " / " << why);
  const auto running = std::chrono::steady_clock::now() - start;
  // The cluster carries the RayJob's labels and annotations, the ownership
  // record among them, copied by KubeRay: the operator never writes it.
  const auto made = c.mustGet(Cluster::pathOf("ray.io/v1", "RayCluster", ns, clusterName));
  CHECK(base::stringMember(made["metadata"]["labels"], "ray.io/originated-from-crd") == "RayJob");
  CHECK(made["metadata"]["annotations"].contains("gpuplacement.io/owned-fields"));
  for (const auto& entry : made["metadata"]["managedFields"]) {
    CHECK(base::stringMember(entry, "manager") != "gpu-placement-operator");
  }

  // KubeRay submits the Ray job with its submitter Job once the cluster is
  // ready; no Ray runs in a kwok pod, so what ends the run is whatever
  // KubeRay makes of that: the run is priced from its start to its end.
  json run;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      run = base::memberOf(c.mustGet(workloadPath(ns, name))["status"], "run");
                      return !base::stringMember(run, "outcome").empty();
                    },
                    180s, 500ms),
                conditions(name, ns) << "; RayJob status: " << c.mustGet(path)["status"].dump());
  const auto status = c.mustGet(path)["status"];
  CHECK(run["pods"] == 2);
  CHECK(run["instanceType"] == type);
  CHECK(run["durationSeconds"].get<std::int64_t>() >= 0);
  CHECK(std::atof(base::stringMember(run, "cost").c_str()) >= 0);
  CHECK(base::stringMember(run, "startTime") == base::stringMember(status, "startTime"));
  CHECK(base::stringMember(run, "endTime") == base::stringMember(status, "endTime"));
  MESSAGE(name << ": workers on " << type << " " << gpus << " GPU(s) each, Running "
               << std::chrono::duration_cast<std::chrono::milliseconds>(running).count()
               << " ms after the apply; KubeRay ended it "
               << base::stringMember(status, "jobDeploymentStatus") << " ("
               << base::stringMember(status, "reason") << ": "
               << base::stringMember(status, "message") << "); the run " << run.dump() << "; Ready "
               << c.conditionOf(workloadPath(ns, name), "Ready") << ": "
               << c.conditionMessageOf(workloadPath(ns, name), "Ready"));
  op.stop();
}

TEST_CASE("bad input: a JobSet whose devices the placement must change is left as it is, said") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  // Its workers ask for no GPU, and its webhook would refuse the operator
  // writing one: nothing is written, the JobSet stays suspended.
  c.apply(R"(
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: no-devices
  namespace: ml-serving
  labels: {gpuplacement.io/workload: no-devices}
spec:
  suspend: true
  replicatedJobs:
  - name: workers
    template:
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - {name: trainer, image: nvcr.io/nvidia/pytorch:24.10-py3}
---
apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: no-devices, namespace: ml-serving}
spec:
  targetRef: {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, name: no-devices}
  workload: {kind: FineTuning}
  model: {family: mistral-7b, precision: bf16, architecture: Transformer}
  constraints: {tiers: [NVIDIA]}
)");
  const auto path = Cluster::pathOf("jobset.x-k8s.io/v1alpha2", "JobSet", kNamespace, "no-devices");
  const auto before = c.mustGet(path);
  std::string said;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      // Its reason and message, read whole (one GET each).
                      said = conditions("no-devices");
                      return said.find(
                                 "Applied False/ResourcesFixed: the controller of JobSet "
                                 "no-devices") != std::string::npos;
                    },
                    60s, 250ms),
                said);
  // What to write: the device the decision needs (on demand.yaml's nodes,
  // the DRA DeviceClass's extended resource, or nvidia.com/gpu), where.
  CHECK_MESSAGE(said.find("containers[trainer].resources ") != std::string::npos, said);
  CHECK_MESSAGE(said.find("in the pod template of workers") != std::string::npos, said);
  const auto after = c.mustGet(path);
  CHECK(after["spec"] == before["spec"]);
  CHECK(after["spec"]["suspend"] == true);
  CHECK(podsSelected("jobset.sigs.k8s.io%2Fjobset-name%3Dno-devices").empty());
  op.stop();
}

TEST_CASE("bad input: a pod set the kind does not have is named in the status, nothing written") {
  auto& c = cluster();
  prepare(c);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  c.apply(R"(
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: typo, namespace: ml-serving}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - {name: vllm, image: vllm/vllm-openai:v0.9.2}
---
apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: typo, namespace: ml-serving}
spec:
  targetRef: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: typo,
    podSets: [leader]}
  workload: {kind: Inference}
  model: {family: mistral-7b, precision: fp16, architecture: Transformer}
  constraints: {tiers: [NVIDIA]}
)");
  const auto before = c.mustGet(lwsPath("typo"));
  std::string said;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      said = conditions("typo");
                      return said.find(
                                 "spec.targetRef.podSets: the LeaderWorkerSet has no pod set "
                                 "named leader (it has worker)") != std::string::npos;
                    },
                    60s, 250ms),
                said);
  // The LeaderWorkerSet controller writes its status; the operator wrote
  // nothing: the templates as created, no ownership record.
  const auto after = c.mustGet(lwsPath("typo"));
  CHECK(after["spec"] == before["spec"]);
  // What the operator's JSON patches rely on: one made against an older
  // resourceVersion is refused whole with 409 Conflict, as a strategic
  // merge patch stating it is.
  const auto read = c.mustGet(lwsPath("typo"));
  REQUIRE(c.patch(lwsPath("typo"), {{"metadata", {{"labels", {{"team", "ml"}}}}}}).ok());
  const auto stale =
      c.patch(lwsPath("typo"),
              json::array({{{"op", "replace"},
                            {"path", "/metadata/resourceVersion"},
                            {"value", read["metadata"]["resourceVersion"]}},
                           {{"op", "add"},
                            {"path", "/spec/leaderWorkerTemplate/workerTemplate/spec/nodeSelector"},
                            {"value", {{"disk", "ssd"}}}}}),
              kube::PatchType::Json);
  REQUIRE_FALSE(stale.ok());
  CHECK(stale.error().conflict());
  CHECK(c.mustGet(lwsPath("typo"))["spec"] == before["spec"]);
  CHECK_FALSE(base::memberOf(base::memberOf(after["metadata"], "annotations"),
                             "gpuplacement.io/owned-fields")
                  .is_string());
  op.stop();
}

TEST_CASE("bad input: a template the cluster refuses is said with the refusal, nothing written") {
  // As a kind's validating webhook or the platform's policy would: this
  // one refuses a LeaderWorkerSet labelled refuse-gpus whose workers are
  // sent to GPU nodes, and names the field.
  auto& c = cluster();
  prepare(c);
  c.apply(R"(
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: no-gpu-workers}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - apiGroups: [leaderworkerset.x-k8s.io]
      apiVersions: [v1]
      operations: [UPDATE]
      resources: [leaderworkersets]
    objectSelector: {matchLabels: {refuse-gpus: "true"}}
  validations:
  - expression: >-
      !has(object.spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector) ||
      !('karpenter.k8s.aws/instance-gpu-name' in object.spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector)
    message: "spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector: GPU nodes are not for this team"
    reason: Invalid
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: no-gpu-workers}
spec:
  policyName: no-gpu-workers
  validationActions: [Deny]
)");
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  // The policy takes effect once the API server has loaded it: the
  // LeaderWorkerSet is created only then, so its first placement meets it.
  const auto refusesGpus = [&c] {
    (void)c.remove(lwsPath("probe"));
    auto created = c.create(lwsPath(), json::parse(R"({
      "apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
      "metadata": {"name": "probe", "namespace": "ml-serving", "labels": {"refuse-gpus": "true"}},
      "spec": {"leaderWorkerTemplate": {"size": 1, "workerTemplate": {"spec": {
        "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}})"));
    if (!created) {
      return false;
    }
    auto patched = c.patch(
        lwsPath("probe"),
        {{"spec",
          {{"leaderWorkerTemplate",
            {{"workerTemplate",
              {{"spec",
                {{"nodeSelector", {{"karpenter.k8s.aws/instance-gpu-name", "l4"}}}}}}}}}}}});
    return !patched.ok() && patched.error().status == 422;
  };
  REQUIRE(c.waitFor(refusesGpus, 60s, 500ms));
  (void)c.remove(lwsPath("probe"));
  c.apply(R"(
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: refused, namespace: ml-serving, labels: {refuse-gpus: "true"}}
spec:
  replicas: 1
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - {name: vllm, image: vllm/vllm-openai:v0.9.2}
---
apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: refused, namespace: ml-serving}
spec:
  targetRef: {apiVersion: leaderworkerset.x-k8s.io/v1, kind: LeaderWorkerSet, name: refused}
  workload: {kind: Inference}
  model: {family: mistral-7b, precision: fp16, architecture: Transformer}
  constraints: {tiers: [NVIDIA]}
)");
  const auto before = c.mustGet(lwsPath("refused"));
  std::string said;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      said = conditions("refused");
                      return said.find(
                                 "Applied False/InvalidTarget: the API server refused the "
                                 "patch of LeaderWorkerSet refused") != std::string::npos &&
                             said.find(
                                 "spec.leaderWorkerTemplate.workerTemplate.spec.nodeSelector: "
                                 "GPU nodes are not for this team") != std::string::npos;
                    },
                    60s, 250ms),
                said);
  const auto after = c.mustGet(lwsPath("refused"));
  CHECK(after["spec"] == before["spec"]);
  CHECK_FALSE(base::memberOf(base::memberOf(after["metadata"], "annotations"),
                             "gpuplacement.io/owned-fields")
                  .is_string());
  CHECK(op.running());
  op.stop();
}

}  // namespace
}  // namespace gpuplacement
