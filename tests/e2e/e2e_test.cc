// End to end on the simulated EKS cluster (scripts/controlplane start
// --cluster): a real kube-scheduler, kube-controller-manager and kwok nodes
// labelled as one provisioner labels them. The samples are applied, the
// operator places them, and what is checked is where the pods run: on nodes
// whose labels match status.placement, with Ready=True from the real
// rollout; then a price change moves pods, a deletion gives the team's
// Deployment back, and a pool with too few devices leaves pods Pending with
// the scheduler's message in the GpuWorkload.
//
// One label scheme per process (the fixture starts one control plane per
// process), chosen by the environment; ctest runs one entry per scheme:
//   GPUPLACEMENT_E2E_SCHEME  InstanceType | Karpenter | GPUFeatureDiscovery
//   GPUPLACEMENT_E2E_POOLS   the pool file, relative to the repository
//   GPUPLACEMENT_E2E_KARPENTER  1: Karpenter launches the nodes (the pool
//                               file's NodePools create none)
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
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
using testing::readFile;
using testing::repoRoot;
using testing::workloadPath;
using Clock = std::chrono::steady_clock;

// The label scheme under test and the capacity-type label its nodes carry.
struct Scheme {
  std::string name;
  std::string pools;
  bool karpenter = false;  // Karpenter launches the nodes
  std::string capacityKey;
  std::string onDemand;
  std::string spot;
};

const Scheme& scheme() {
  static const Scheme instance = [] {
    const char* name = std::getenv("GPUPLACEMENT_E2E_SCHEME");
    const char* pools = std::getenv("GPUPLACEMENT_E2E_POOLS");
    Scheme s;
    s.name = name && *name ? name : "InstanceType";
    if (s.name == "Karpenter") {
      s.pools = "config/sim/e2e-karpenter.yaml";
      s.capacityKey = "karpenter.sh/capacity-type";
      s.onDemand = "on-demand";
      s.spot = "spot";
    } else {
      s.pools = s.name == "GPUFeatureDiscovery" ? "config/sim/e2e-gfd.yaml"
                                                : "config/sim/e2e-managed-nodegroups.yaml";
      s.capacityKey = "eks.amazonaws.com/capacityType";
      s.onDemand = "ON_DEMAND";
      s.spot = "SPOT";
    }
    if (pools && *pools) {
      s.pools = pools;
    }
    const char* karpenter = std::getenv("GPUPLACEMENT_E2E_KARPENTER");
    s.karpenter = karpenter && std::string(karpenter) == "1";
    return s;
  }();
  return instance;
}

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = scheme().pools;
  options.karpenter = scheme().karpenter;
  // Karpenter launches at the prices of the policy the tests apply.
  options.prices = "config/samples/placementpolicy.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kWorkloads = "gpuplacement.io/v1alpha1";

const std::string kPolicyPath = Cluster::pathOf(kWorkloads, "PlacementPolicy", "", "default");

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string fixed(double value, int digits = 1) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

// The sample policy with this scheme's node labels and short durations: a
// platform team running these pools would set them so.
json samplePolicy(const std::string& file) {
  auto documents = base::parseYamlDocuments(readFile(repoRoot() + "/config/samples/" + file), file);
  REQUIRE_MESSAGE(documents.ok(), gpuplacement::testing::whyNot(documents));
  REQUIRE(documents->size() == 1);
  json policy = documents->front();
  policy["spec"]["nodeLabels"] = {
      {"scheme", scheme().name},
      {"capacityType",
       {{"key", scheme().capacityKey}, {"onDemand", scheme().onDemand}, {"spot", scheme().spot}}}};
  policy["spec"]["replacement"]["cooldown"] = "0s";
  return policy;
}

struct Sample {
  std::string ns;
  std::string name;
  bool apply = true;  // mode Apply: the operator patches the Deployment
};

// The shared control plane with the CRDs; each suite's fixture below
// starts one operator on it.
// A team's model server: a Deployment of `replicas` pods of one vLLM
// container with no requests of its own, the target the tests place.
std::string serverDeployment(const std::string& ns, const std::string& name, int replicas = 1) {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name + ", namespace: " + ns +
         "}\nspec:\n  replicas: " + std::to_string(replicas) +
         "\n  selector: {matchLabels: {app: " + name +
         "}}\n  template:\n    metadata: {labels: {app: " + name +
         "}}\n    spec:\n      containers:\n      - {name: server, image: "
         "vllm/vllm-openai:v0.6.3}\n";
}

void createNamespaces(std::initializer_list<const char*> names) {
  for (const char* ns : names) {
    cluster().apply(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: ") + ns + "}\n");
  }
}

void createPolicy(const json& policy) {
  auto created = cluster().create(Cluster::pathOf(kWorkloads, "PlacementPolicy", ""), policy);
  REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
}

std::unique_ptr<OperatorProcess> startOperator(std::vector<std::string> extraArgs = {}) {
  auto op = std::make_unique<OperatorProcess>(cluster().operatorKubeconfig(), std::move(extraArgs));
  REQUIRE_MESSAGE(op->waitReady(std::chrono::seconds(60)), op->log());
  return op;
}

// The samples suite: the sample policy (this scheme's labels), a second
// policy "auto" that detects them, the samples applied.
struct Fixture {
  std::unique_ptr<OperatorProcess> op;
  std::vector<Sample> samples;
  std::map<std::string, json> teamTemplates;  // ns/name: the Deployment as the team wrote it
  Clock::time_point workloadsCreated;

  Fixture() {
    createNamespaces({"ml-serving", "research", "starved"});
    createPolicy(samplePolicy("placementpolicy.yaml"));
    json detecting = samplePolicy("placementpolicy.yaml");
    detecting["metadata"] = {{"name", "auto"}};
    detecting["spec"]["nodeLabels"] = {{"scheme", "Auto"}};
    createPolicy(detecting);
    op = startOperator();

    const auto deployments = readFile(repoRoot() + "/config/samples/deployments.yaml");
    auto documents = base::parseYamlDocuments(deployments, "deployments.yaml");
    REQUIRE(documents.ok());
    for (const auto& d : *documents) {
      teamTemplates[base::memberOf(base::memberOf(d, "metadata"), "namespace").get<std::string>() +
                    "/" +
                    base::memberOf(base::memberOf(d, "metadata"), "name").get<std::string>()] =
          base::memberOf(base::memberOf(d, "spec"), "template");
    }
    cluster().apply(deployments);
    const auto workloads = readFile(repoRoot() + "/config/samples/gpuworkloads.yaml");
    documents = base::parseYamlDocuments(workloads, "gpuworkloads.yaml");
    REQUIRE(documents.ok());
    for (const auto& w : *documents) {
      samples.push_back({base::memberOf(base::memberOf(w, "metadata"), "namespace"),
                         base::memberOf(base::memberOf(w, "metadata"), "name"),
                         base::stringMember(base::memberOf(w, "spec"), "mode") != "Recommend"});
    }
    workloadsCreated = Clock::now();
    cluster().apply(workloads);
  }

  ~Fixture() {
    if (op) {
      op->stop();
    }
  }
};

Fixture& fixture() {
  static Fixture instance;
  return instance;
}

const json* condition(const json& object, const std::string& type) {
  for (const auto& item : base::memberOf(base::memberOf(object, "status"), "conditions")) {
    if (base::stringMember(item, "type") == type) {
      return &item;
    }
  }
  return nullptr;
}

std::string conditionText(const json& object, const std::string& type) {
  const auto* found = condition(object, type);
  if (!found) {
    return type + " absent";
  }
  return type + "=" + base::stringMember(*found, "status") + " " +
         base::stringMember(*found, "reason") + ": " + base::stringMember(*found, "message");
}

bool conditionIs(const json& object, const std::string& type, const std::string& status,
                 const std::string& reason) {
  const auto* found = condition(object, type);
  return found && base::stringMember(*found, "status") == status &&
         base::stringMember(*found, "reason") == reason;
}

const json& nodeNamed(const std::string& name) {
  static std::map<std::string, json> nodes;  // a node's labels never change here
  auto it = nodes.find(name);
  if (it == nodes.end()) {
    it = nodes.emplace(name, cluster().mustGet("/api/v1/nodes/" + name)).first;
  }
  return it->second;
}

std::string label(const json& node, const std::string& key) {
  const auto& labels = base::memberOf(base::memberOf(node, "metadata"), "labels");
  return labels.contains(key) ? labels[key].get<std::string>() : "";
}

// The scheduling fields a team sets on its pod template, as the API server
// returns them (defaults it adds elsewhere left out): the node selector,
// the tolerations and each container's resources.
json teamFields(const json& podTemplate) {
  const auto& spec = base::memberOf(podTemplate, "spec");
  json fields = {{"nodeSelector", base::memberOf(spec, "nodeSelector")},
                 {"tolerations", base::memberOf(spec, "tolerations")},
                 {"resources", json::object()}};
  for (const auto& container : base::memberOf(spec, "containers")) {
    json resources = base::memberOf(container, "resources");
    fields["resources"][base::stringMember(container, "name")] =
        resources.is_object() && !resources.empty() ? resources : json::object();
  }
  return fields;
}

std::int64_t allocatable(const json& node, const std::string& resource) {
  const auto& value = base::memberOf(base::memberOf(node, "status"), "allocatable");
  return value.contains(resource) ? std::atoll(value[resource].get<std::string>().c_str()) : 0;
}

std::string alnumLower(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

std::string deviceResource(const std::string& tier) {
  if (tier == "NVIDIA") {
    return "nvidia.com/gpu";
  }
  if (tier == "Trainium" || tier == "Inferentia") {
    return "aws.amazon.com/neuron";
  }
  return "";
}

// Why a node does not match the placement: empty when it does (instance
// type, accelerator model and count, capacity type).
std::string mismatch(const json& node, const json& placement) {
  std::vector<std::string> problems;
  const std::string type = base::stringMember(placement, "instanceType");
  if (label(node, "node.kubernetes.io/instance-type") != type) {
    problems.push_back("instance type " + label(node, "node.kubernetes.io/instance-type"));
  }
  const std::string capacity = label(node, scheme().capacityKey);
  const std::string asked = base::stringMember(placement, "capacityType");
  const std::string wantCapacity = asked == "Spot" ? scheme().spot : scheme().onDemand;
  if (asked == "Mixed" ? capacity != scheme().spot && capacity != scheme().onDemand
                       : capacity != wantCapacity) {
    problems.push_back(scheme().capacityKey + "=" + capacity);
  }
  const std::string tier = base::stringMember(placement, "tier");
  const auto count = base::integerMember(placement, "acceleratorCount");
  if (const auto resource = deviceResource(tier); !resource.empty()) {
    if (allocatable(node, resource) < count) {
      problems.push_back(std::to_string(allocatable(node, resource)) + " " + resource);
    }
    // The model, where the node's labels name it.
    const std::string model = alnumLower(base::stringMember(placement, "accelerator"));
    for (const char* key :
         {"karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-accelerator-name",
          "nvidia.com/gpu.product"}) {
      const auto value = alnumLower(label(node, key));
      if (!value.empty() && value.find(model) == std::string::npos &&
          model.find(value) == std::string::npos) {
        problems.push_back(std::string(key) + "=" + label(node, key));
      }
    }
  } else {
    for (const char* resource : {"nvidia.com/gpu", "aws.amazon.com/neuron"}) {
      if (allocatable(node, resource) > 0) {
        problems.push_back("a CPU placement on a node with " + std::string(resource));
      }
    }
  }
  std::string text;
  for (const auto& problem : problems) {
    text += (text.empty() ? "" : ", ") + problem;
  }
  return text;
}

// The node-selector key the scheme selects the shape by, for a tier.
std::string shapeKey(const std::string& tier) {
  if (scheme().name == "Karpenter" && tier == "NVIDIA") {
    return "karpenter.k8s.aws/instance-gpu-name";
  }
  if (scheme().name == "Karpenter" && (tier == "Trainium" || tier == "Inferentia")) {
    return "karpenter.k8s.aws/instance-accelerator-name";
  }
  if (scheme().name == "GPUFeatureDiscovery" && tier == "NVIDIA") {
    return "nvidia.com/gpu.product";
  }
  return "node.kubernetes.io/instance-type";
}

json podsOf(const std::string& ns, const std::string& app) {
  return cluster().mustGet("/api/v1/namespaces/" + ns + "/pods?labelSelector=app%3D" +
                           app)["items"];
}

bool running(const json& pod) {
  if (base::stringMember(base::memberOf(pod, "status"), "phase") != "Running") {
    return false;
  }
  for (const auto& c : base::memberOf(base::memberOf(pod, "status"), "conditions")) {
    if (base::stringMember(c, "type") == "Ready") {
      return base::stringMember(c, "status") == "True";
    }
  }
  return false;
}

bool terminating(const json& pod) {
  return base::memberOf(pod, "metadata").contains("deletionTimestamp");
}

// Every pod of the Deployment, where it is and why, for failure messages.
std::string describePods(const std::string& ns, const std::string& app) {
  std::string text;
  for (const auto& pod : podsOf(ns, app)) {
    const std::string node = base::stringMember(base::memberOf(pod, "spec"), "nodeName");
    text += "\n  " + base::stringMember(base::memberOf(pod, "metadata"), "name") + " " +
            base::stringMember(base::memberOf(pod, "status"), "phase") +
            (terminating(pod) ? " (terminating)" : "") + " on " +
            (node.empty()
                 ? "-"
                 : node + " (" + label(nodeNamed(node), "node.kubernetes.io/instance-type") + ")");
    for (const auto& c : base::memberOf(base::memberOf(pod, "status"), "conditions")) {
      if (base::stringMember(c, "type") == "PodScheduled" &&
          base::stringMember(c, "status") == "False") {
        text += ": " + base::stringMember(c, "message");
      }
    }
  }
  return text;
}

// The rollout of the Deployment's current pod template is over, as the
// controller-manager reports it: every replica updated and available, no
// pod of an older ReplicaSet left.
bool rolledOut(const json& deployment) {
  const auto replicas =
      base::integerOf(base::memberOf(base::memberOf(deployment, "spec"), "replicas"), 1);
  const auto& status = base::memberOf(deployment, "status");
  return base::integerMember(status, "observedGeneration") ==
             base::integerMember(base::memberOf(deployment, "metadata"), "generation") &&
         base::integerMember(status, "updatedReplicas") == replicas &&
         base::integerMember(status, "availableReplicas") == replicas &&
         base::integerMember(status, "replicas") == replicas;
}

bool carriesPlacement(const json& deployment) {
  return base::memberOf(base::memberOf(deployment, "metadata"), "annotations")
      .contains("gpuplacement.io/owned-fields");
}

// The Deployment carries the placement (or, for a null one, nothing of the
// operator's any more), its rollout is over, and its pods are all Running
// and Ready, as many as it has replicas, none left terminating, on nodes
// that match the placement (for a null one, CPU nodes): the nodes they run
// on, or nothing while not so.
std::optional<std::set<std::string>> settled(const std::string& ns, const std::string& name,
                                             const json& placement) {
  const auto deployment = cluster().mustGet(deploymentPath(ns, name));
  if (carriesPlacement(deployment) == placement.is_null() || !rolledOut(deployment)) {
    return std::nullopt;
  }
  const auto replicas =
      base::integerOf(base::memberOf(base::memberOf(deployment, "spec"), "replicas"), 1);
  std::set<std::string> nodes;
  std::int64_t count = 0;
  for (const auto& pod : podsOf(ns, name)) {
    if (terminating(pod) || !running(pod)) {
      return std::nullopt;
    }
    const auto& node = nodeNamed(base::stringMember(base::memberOf(pod, "spec"), "nodeName"));
    if (placement.is_null()
            ? allocatable(node, "nvidia.com/gpu") + allocatable(node, "aws.amazon.com/neuron") > 0
            : !mismatch(node, placement).empty()) {
      return std::nullopt;
    }
    nodes.insert(base::stringMember(base::memberOf(pod, "spec"), "nodeName"));
    ++count;
  }
  if (count != replicas) {
    return std::nullopt;
  }
  return nodes;
}

std::string joined(const std::set<std::string>& items) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : " ") + item;
  }
  return text;
}

// Each sample's time from the GpuWorkload's creation to its pods Running on
// matching nodes, the table the report quotes.
struct Landing {
  std::string placement;
  std::set<std::string> nodes;
  double seconds = -1;
};
std::map<std::string, Landing>& landings() {
  static std::map<std::string, Landing> instance;
  return instance;
}

}  // namespace

// Where Karpenter is when pods wait for it: its process, its NodeClaims and
// the end of its log (the control plane's directory goes with the test).
std::string karpenterDiagnosis() {
  const auto& dir = ControlPlane::shared().dir();
  const auto status = testing::runCommand(repoRoot() + "/scripts/controlplane status " + dir);
  const auto claims = cluster().mustGet("/apis/karpenter.sh/v1/nodeclaims")["items"];
  const auto log = testing::runCommand("tail -n 40 " + dir + "/logs/karpenter.log");
  return "Karpenter: " + status.out + std::to_string(claims.size()) +
         " NodeClaims; the end of its log:\n" + log.out;
}

TEST_CASE("the samples' pods run on nodes that match status.placement; Ready from the rollout") {
  auto& f = fixture();
  MESSAGE("scheme " << scheme().name << ", pools " << scheme().pools);
  const auto deadline = f.workloadsCreated + std::chrono::seconds(90);
  auto& table = landings();
  for (bool pending = true; pending && Clock::now() < deadline;) {
    pending = false;
    for (const auto& s : f.samples) {
      const std::string key = s.ns + "/" + s.name;
      if (!s.apply || table[key].seconds >= 0) {
        continue;
      }
      const auto workload = cluster().mustGet(workloadPath(s.ns, s.name));
      const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
      const auto nodes = placement.is_object() ? settled(s.ns, s.name, placement) : std::nullopt;
      if (nodes) {
        table[key] = {base::stringMember(placement, "instanceType"), *nodes,
                      std::chrono::duration<double>(Clock::now() - f.workloadsCreated).count()};
      } else {
        pending = true;
      }
    }
    if (pending) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  if (scheme().karpenter && std::any_of(f.samples.begin(), f.samples.end(), [&](const Sample& s) {
        return s.apply && table[s.ns + "/" + s.name].seconds < 0;
      })) {
    MESSAGE(karpenterDiagnosis());
  }
  std::string report = "sample | placement | capacity | node(s) | s to Running | selected by";
  for (const auto& s : f.samples) {
    const std::string key = s.ns + "/" + s.name;
    const auto workload = cluster().mustGet(workloadPath(s.ns, s.name));
    const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
    if (!s.apply) {
      // Recommend mode: placed in status only; the Deployment is the team's.
      CHECK_MESSAGE(conditionIs(workload, "Ready", "True", "Recommended"),
                    conditionText(workload, "Ready"));
      const auto deployment = cluster().mustGet(deploymentPath(s.ns, s.name));
      CHECK(teamFields(base::memberOf(base::memberOf(deployment, "spec"), "template")) ==
            teamFields(f.teamTemplates[key]));
      CHECK_FALSE(base::memberOf(base::memberOf(deployment, "metadata"), "annotations")
                      .contains("gpuplacement.io/owned-fields"));
      continue;
    }
    const auto& landed = table[key];
    CHECK_MESSAGE(landed.seconds >= 0,
                  key << ": pods not Running on " << base::stringMember(placement, "instanceType")
                      << " nodes within 90 s; " << conditionText(workload, "Applied") << "; "
                      << conditionText(workload, "Ready") << describePods(s.ns, s.name));
    std::string instances;
    for (const auto& node : landed.nodes) {
      instances += (instances.empty() ? "" : ", ") + node + " (" +
                   label(nodeNamed(node), "node.kubernetes.io/instance-type") + ", " +
                   label(nodeNamed(node), scheme().capacityKey) + ")";
    }
    const auto devices = base::integerMember(placement, "acceleratorCount");
    report +=
        "\n" + key + " | " + base::stringMember(placement, "instanceType") + " " +
        (devices > 0 ? std::to_string(devices) + "x " + base::stringMember(placement, "accelerator")
                     : std::string("CPU")) +
        " | " + base::stringMember(placement, "capacityType") + " | " + instances + " | " +
        (landed.seconds >= 0 ? fixed(landed.seconds) : "not Running");
    // The selector is the scheme's: the pods ran where it sent them.
    const auto selector =
        cluster().mustGet(deploymentPath(s.ns, s.name))["spec"]["template"]["spec"]["nodeSelector"];
    const std::string shape = shapeKey(base::stringMember(placement, "tier"));
    CHECK_MESSAGE(selector.contains(shape), shape << " not in " << selector.dump());
    CHECK_MESSAGE(selector.contains(scheme().capacityKey), selector.dump());
    if (selector.contains(shape)) {
      report += " | " + shape + "=" + selector[shape].get<std::string>();
    }
    // Ready=True from kube-controller-manager's rollout, nobody else's.
    const bool ready = cluster().waitFor(
        [&] {
          return conditionIs(cluster().mustGet(workloadPath(s.ns, s.name)), "Ready", "True",
                             "RolloutComplete");
        },
        std::chrono::seconds(30));
    CHECK_MESSAGE(
        ready,
        key << ": " << conditionText(cluster().mustGet(workloadPath(s.ns, s.name)), "Ready"));
    const auto deployment = cluster().mustGet(deploymentPath(s.ns, s.name));
    CHECK(base::integerMember(base::memberOf(deployment, "status"), "observedGeneration") ==
          base::integerMember(base::memberOf(deployment, "metadata"), "generation"));
    // Its costs are the prices of the cluster's region: the simulated nodes
    // say us-east-1 (topology.kubernetes.io/region), the catalog's region.
    const bool regional = cluster().waitFor(
        [&] {
          return conditionIs(cluster().mustGet(workloadPath(s.ns, s.name)), "PricesForRegion",
                             "True", "ClusterRegion");
        },
        std::chrono::seconds(30));
    CHECK_MESSAGE(regional, key << ": "
                                << conditionText(cluster().mustGet(workloadPath(s.ns, s.name)),
                                                 "PricesForRegion"));
  }
  MESSAGE(report);
  // llama-chat states a throughput target: its two replicas carry it, and
  // the status says so (the replicas are the team's).
  const auto chat = base::memberOf(
      base::memberOf(cluster().mustGet(workloadPath("ml-serving", "llama-chat")), "status"),
      "throughput");
  CAPTURE(chat.dump());
  CHECK(chat["enough"] == true);
  CHECK(chat["replicas"] == 2);
  CHECK(chat["replicasNeeded"] == 1);
  CHECK(chat["replicasFrom"] == "spec.replicas of Deployment llama-chat");
}

// The NodeClaims Karpenter made, by the node each launched (the node of
// the claim's providerID).
std::map<std::string, json> nodeClaimsByNode() {
  // Lists held by name: a range-for over a temporary's member outlives it.
  const json nodes = cluster().mustGet("/api/v1/nodes")["items"];
  const json nodeClaims = cluster().mustGet("/apis/karpenter.sh/v1/nodeclaims")["items"];
  std::map<std::string, std::string> byProvider;  // providerID: node
  for (const auto& node : nodes) {
    byProvider[base::stringMember(base::memberOf(node, "spec"), "providerID")] =
        base::stringMember(base::memberOf(node, "metadata"), "name");
  }
  std::map<std::string, json> claims;
  for (const auto& claim : nodeClaims) {
    const auto provider = base::stringMember(base::memberOf(claim, "status"), "providerID");
    if (const auto node = byProvider.find(provider);
        !provider.empty() && node != byProvider.end()) {
      claims[node->second] = claim;
    }
  }
  return claims;
}

// What Karpenter's kwok provider priced the node at: the offering it
// launched (the catalog's price for the type, capacity type and zone).
double launchedPrice(const json& node) {
  return std::atof(label(node, "eks-node-viewer/instance-price").c_str());
}

TEST_CASE("karpenter: it launches at the prices of the policy in force") {
  REQUIRE(scheme().karpenter);
  // The sample policy prices p5e.48xlarge, which the catalog sells only as
  // Capacity Blocks (no price): its offering exists at the policy's price.
  const json types = json::parse(
      readFile(ControlPlane::shared().dir() + "/karpenter-instance-types.json"), nullptr, false);
  REQUIRE(types.is_array());
  std::vector<double> prices;
  for (const auto& type : types) {
    if (base::stringMember(type, "name") == "p5e.48xlarge") {
      for (const auto& offering : base::memberOf(type, "offerings")) {
        prices.push_back(offering.value("Price", 0.0));
      }
    }
  }
  REQUIRE_FALSE(prices.empty());
  CHECK(std::all_of(prices.begin(), prices.end(), [](double p) { return p == 43.26; }));
}

TEST_CASE("karpenter: each placement's pods run on nodes Karpenter launched for it") {
  auto& f = fixture();
  REQUIRE(scheme().karpenter);
  const auto claims = nodeClaimsByNode();
  std::string report = "sample | node | NodeClaim | type | capacity | price";
  int nodes = 0;
  for (const auto& s : f.samples) {
    if (!s.apply) {
      continue;
    }
    const json placement = cluster().mustGet(workloadPath(s.ns, s.name))["status"]["placement"];
    const auto& landed = landings()[s.ns + "/" + s.name];
    REQUIRE_MESSAGE(!landed.nodes.empty(), s.ns << "/" << s.name << " never ran");
    for (const auto& name : landed.nodes) {
      ++nodes;
      const auto claim = claims.find(name);
      REQUIRE_MESSAGE(claim != claims.end(),
                      name << " has no NodeClaim: Karpenter did not launch it");
      const auto& claimLabels = base::memberOf(base::memberOf(claim->second, "metadata"), "labels");
      const auto type = base::stringMember(claimLabels, "node.kubernetes.io/instance-type");
      const auto capacity = base::stringMember(claimLabels, "karpenter.sh/capacity-type");
      CHECK(type == base::stringMember(placement, "instanceType"));
      CHECK(capacity ==
            (base::stringMember(placement, "capacityType") == "Spot" ? "spot" : "on-demand"));
      // A node of the NodeClaim's pool.
      CHECK_FALSE(label(nodeNamed(name), "karpenter.sh/nodepool").empty());
      report += "\n" + s.ns + "/" + s.name + " | " + name + " | " +
                base::stringMember(base::memberOf(claim->second, "metadata"), "name") + " | " +
                type + " | " + capacity + " | $" + fixed(launchedPrice(nodeNamed(name)), 4) + "/h";
    }
  }
  CHECK(nodes > 0);
  MESSAGE(report);
}

// What the cluster pays for the nodes Karpenter launched for the placed
// workloads, against what their statuses say the cluster pays: each node
// whole (nodes x nodeHourlyCost), a node two workloads share counted once
// for the cluster and once in each status, which the report names.
struct LaunchedCost {
  double claimed = 0;
  double paid = 0;
  std::string shared;  // nodes that several workloads' pods share
  std::string report;
};

LaunchedCost launchedCost(const std::vector<Sample>& samples) {
  LaunchedCost cost;
  std::map<std::string, std::set<std::string>> holders;  // node: the workloads on it
  cost.report = "sample | claimed $/h | launched $/h | nodes";
  for (const auto& s : samples) {
    if (!s.apply) {
      continue;
    }
    const std::string key = s.ns + "/" + s.name;
    const json placement = cluster().mustGet(workloadPath(s.ns, s.name))["status"]["placement"];
    const double claim = static_cast<double>(base::integerMember(placement, "nodes")) *
                         std::atof(base::stringMember(placement, "nodeHourlyCost").c_str());
    std::set<std::string> nodes;
    for (const auto& pod : podsOf(s.ns, s.name)) {
      if (running(pod) && !terminating(pod)) {
        nodes.insert(base::stringMember(base::memberOf(pod, "spec"), "nodeName"));
      }
    }
    double launched = 0;
    for (const auto& node : nodes) {
      holders[node].insert(key);
      launched += launchedPrice(nodeNamed(node));
    }
    CHECK_MESSAGE(base::stringMember(placement, "costModel") == "WholeInstance", key);
    cost.claimed += claim;
    cost.report += "\n" + key + " | " + fixed(claim, 4) + " | " + fixed(launched, 4) + " | " +
                   std::to_string(nodes.size());
  }
  for (const auto& [node, workloads] : holders) {
    cost.paid += launchedPrice(nodeNamed(node));
    if (workloads.size() > 1) {
      cost.shared += (cost.shared.empty() ? "" : ", ") + node + " (" + joined(workloads) + ")";
    }
  }
  cost.report += "\nthe cluster pays $" + fixed(cost.paid, 4) + "/h for " +
                 std::to_string(holders.size()) + " nodes; the statuses claim $" +
                 fixed(cost.claimed, 4) + "/h" +
                 (cost.shared.empty() ? "" : "; shared: " + cost.shared);
  return cost;
}

// Karpenter batches the pods it sees pending: replicas created before the
// first node exists may be given a node each (embedder's three CPU replicas
// on two c5.2xlarge), which consolidation then packs onto the one the
// operator priced. The steady state is what must match.
TEST_CASE("karpenter: the launched nodes cost what the statuses claim") {
  auto& f = fixture();
  REQUIRE(scheme().karpenter);
  const auto start = Clock::now();
  const LaunchedCost first = launchedCost(f.samples);
  LaunchedCost last = first;
  const bool matched = cluster().waitFor(
      [&] {
        last = launchedCost(f.samples);
        return last.paid > 0 && last.shared.empty() &&
               std::abs(last.claimed - last.paid) <= 0.05 * last.paid;
      },
      std::chrono::seconds(180), std::chrono::seconds(2));
  MESSAGE("at first:\n" << first.report);
  if (first.report != last.report) {
    MESSAGE("after " << fixed(secondsSince(start)) << " s (consolidation):\n" << last.report);
  }
  REQUIRE(last.paid > 0);
  // Each node hosts one workload here: no sharing to explain a difference.
  CHECK_MESSAGE(last.shared.empty(), last.shared);
  CHECK_MESSAGE(matched, last.report);
}

TEST_CASE("policy 'auto' detects the labels the nodes carry; placements are types they have") {
  auto& f = fixture();
  // Karpenter's nodes carry its karpenter.k8s.aws/instance-* labels; every
  // EKS node carries node.kubernetes.io/instance-type, so GPU Feature
  // Discovery's nodes are selected by it too (a key no node lacks).
  const bool karpenter = scheme().name == "Karpenter";
  json status;
  const bool seen = cluster().waitFor([&] {
    status = base::memberOf(
        cluster().mustGet(Cluster::pathOf(kWorkloads, "PlacementPolicy", "", "auto")), "status");
    return base::memberOf(status, "nodeLabels").contains("scheme");
  });
  REQUIRE_MESSAGE(seen, status.dump());
  CHECK(base::stringMember(base::memberOf(status, "nodeLabels"), "scheme") ==
        (karpenter ? "Karpenter" : "InstanceType"));
  CHECK(base::stringMember(base::memberOf(status, "nodeLabels"), "capacityTypeKey") ==
        scheme().capacityKey);
  CHECK(base::stringMember(base::memberOf(status, "capacity"), "source") ==
        (karpenter ? "NodePools" : "Nodes"));
  MESSAGE("scheme Auto on " << scheme().pools << ": "
                            << base::memberOf(status, "nodeLabels").dump());

  std::set<std::string> types;
  const auto nodes = cluster().mustGet("/api/v1/nodes");
  for (const auto& node : nodes["items"]) {
    types.insert(label(node, "node.kubernetes.io/instance-type"));
  }
  // Where Karpenter launches the nodes, a type its NodePools may launch is
  // one the cluster can get too (a Recommend-mode sample's launches none).
  if (scheme().karpenter) {
    const auto pools = cluster().mustGet("/apis/karpenter.sh/v1/nodepools");
    for (const auto& pool : pools["items"]) {
      for (const auto& requirement : pool["spec"]["template"]["spec"]["requirements"]) {
        if (requirement["key"] == "node.kubernetes.io/instance-type" &&
            requirement["operator"] == "In") {
          for (const auto& type : requirement["values"]) {
            types.insert(type.get<std::string>());
          }
        }
      }
    }
  }
  for (const auto& s : f.samples) {
    const auto workload = cluster().mustGet(workloadPath(s.ns, s.name));
    const auto type = base::stringMember(
        base::memberOf(base::memberOf(workload, "status"), "placement"), "instanceType");
    CHECK_MESSAGE(types.count(type) == 1,
                  s.ns << "/" << s.name << " placed on " << type << ", which no node carries"
                       << (scheme().karpenter ? " nor NodePool launches" : ""));
  }
}

TEST_CASE("a price change moves the pods to the new pool and the old pods go away") {
  auto& f = fixture();
  std::map<std::string, std::string> before;
  for (const auto& s : f.samples) {
    if (s.apply) {
      before[s.ns + "/" + s.name] = base::stringMember(
          cluster().mustGet(workloadPath(s.ns, s.name))["status"]["placement"], "instanceType");
    }
  }
  const auto policy = samplePolicy("placementpolicy-price-change.yaml");
  const auto changed = Clock::now();
  auto replaced = cluster().patch(
      kPolicyPath,
      json::array(
          {{{"op", "replace"}, {"path", "/spec"}, {"value", base::memberOf(policy, "spec")}}}),
      kube::PatchType::Json);
  REQUIRE_MESSAGE(replaced.ok(), gpuplacement::testing::whyNot(replaced));

  // Which workloads the new prices move: their placement changes.
  std::map<std::string, std::string> moved;
  cluster().waitFor(
      [&] {
        for (const auto& [key, type] : before) {
          const auto slash = key.find('/');
          const auto now = base::stringMember(
              cluster().mustGet(
                  workloadPath(key.substr(0, slash), key.substr(slash + 1)))["status"]["placement"],
              "instanceType");
          if (now != type) {
            moved[key] = now;
          }
        }
        return !moved.empty();
      },
      std::chrono::seconds(30));
  if (moved.empty()) {
    // Why not, in the operator's words: each workload's status.
    for (const auto& [key, type] : before) {
      const auto slash = key.find('/');
      const auto status =
          cluster().mustGet(workloadPath(key.substr(0, slash), key.substr(slash + 1)))["status"];
      MESSAGE(key << " stays on " << type << ": recommendation "
                  << base::memberOf(status, "recommendation").dump() << "; alternatives "
                  << base::memberOf(status, "alternatives").dump());
    }
  }
  REQUIRE_MESSAGE(!moved.empty(), "the price change moved no workload");

  std::string report = "price change (config/samples/placementpolicy-price-change.yaml):";
  for (const auto& [key, to] : moved) {
    const auto slash = key.find('/');
    const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
    std::set<std::string> oldNodes = landings()[key].nodes;
    std::optional<std::set<std::string>> nodes;
    json placement;
    cluster().waitFor(
        [&] {
          placement = cluster().mustGet(workloadPath(ns, name))["status"]["placement"];
          nodes = settled(ns, name, placement);
          return nodes.has_value();
        },
        std::chrono::seconds(60), std::chrono::milliseconds(200));
    const double seconds = secondsSince(changed);
    CHECK_MESSAGE(nodes.has_value(),
                  key << ": pods not Running on " << to << " nodes" << describePods(ns, name));
    if (!nodes) {
      continue;
    }
    for (const auto& node : *nodes) {
      CHECK_MESSAGE(label(nodeNamed(node), "node.kubernetes.io/instance-type") != before[key],
                    key << " still runs on " << node);
    }
    const auto workload = cluster().mustGet(workloadPath(ns, name));
    const auto& last = base::memberOf(base::memberOf(workload, "status"), "lastReplacement");
    CHECK(base::stringMember(last, "from") == before[key]);
    CHECK(base::stringMember(last, "to") == to);
    CHECK(cluster().waitFor(
        [&] {
          return conditionIs(cluster().mustGet(workloadPath(ns, name)), "Ready", "True",
                             "RolloutComplete");
        },
        std::chrono::seconds(30)));
    report += "\n" + key + ": " + before[key] + " on " + joined(oldNodes) + " -> " + to + " on " +
              joined(*nodes) + ", " + fixed(seconds) + " s after the policy changed";
    landings()[key].nodes = *nodes;
  }
  MESSAGE(report);
}

TEST_CASE("deleting a GpuWorkload brings its pods back to CPU nodes, the team's fields intact") {
  auto& f = fixture();
  const std::string ns = "ml-serving", name = "llama-chat";
  const auto deleted = Clock::now();
  auto removed = cluster().remove(workloadPath(ns, name));
  REQUIRE_MESSAGE(removed.ok(), gpuplacement::testing::whyNot(removed));
  const bool gone = cluster().waitFor([&] {
    auto deployment = cluster().mustGet(deploymentPath(ns, name));
    return teamFields(base::memberOf(base::memberOf(deployment, "spec"), "template")) ==
           teamFields(f.teamTemplates[ns + "/" + name]);
  });
  CHECK_MESSAGE(
      gone,
      "the pod template is not the team's again: "
          << teamFields(cluster().mustGet(deploymentPath(ns, name))["spec"]["template"]).dump()
          << "\nwanted: " << teamFields(f.teamTemplates[ns + "/" + name]).dump());
  const auto deployment = cluster().mustGet(deploymentPath(ns, name));
  CHECK_FALSE(base::memberOf(base::memberOf(deployment, "metadata"), "annotations")
                  .contains("gpuplacement.io/owned-fields"));

  std::optional<std::set<std::string>> nodes;
  cluster().waitFor(
      [&] {
        nodes = settled(ns, name, json());
        return nodes.has_value();
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
  REQUIRE_MESSAGE(nodes.has_value(), "pods not back Running" << describePods(ns, name));
  for (const auto& node : *nodes) {
    const auto& n = nodeNamed(node);
    CHECK_MESSAGE(allocatable(n, "nvidia.com/gpu") + allocatable(n, "aws.amazon.com/neuron") == 0,
                  node << " is not a CPU node");
    CHECK(label(n, "topology.kubernetes.io/zone") == "us-east-1a");  // the team's own selector
  }
  std::string where;
  for (const auto& node : *nodes) {
    where += (where.empty() ? "" : ", ") + node + " (" +
             label(nodeNamed(node), "node.kubernetes.io/instance-type") + ")";
  }
  MESSAGE(ns << "/" << name << " deleted: pods Running on CPU nodes " << where << " after "
             << fixed(secondsSince(deleted)) << " s");
}

// After the moves above (a price change, a GpuWorkload deleted), the nodes
// the old pods ran on are empty, and consolidation takes them away: every
// node Karpenter keeps runs a pod.
TEST_CASE("karpenter: the nodes left empty by the moves are consolidated away") {
  fixture();
  REQUIRE(scheme().karpenter);
  const auto start = Clock::now();
  std::string empty, first;
  const bool consolidated = cluster().waitFor(
      [&] {
        std::map<std::string, int> pods;
        const json podList = cluster().mustGet("/api/v1/pods")["items"];
        const json nodeList = cluster().mustGet("/api/v1/nodes")["items"];
        for (const auto& pod : podList) {
          if (!terminating(pod)) {
            ++pods[base::stringMember(base::memberOf(pod, "spec"), "nodeName")];
          }
        }
        empty.clear();
        for (const auto& node : nodeList) {
          const auto name = base::stringMember(base::memberOf(node, "metadata"), "name");
          if (pods[name] == 0) {
            empty += (empty.empty() ? "" : ", ") + name + " (" +
                     label(node, "node.kubernetes.io/instance-type") + ")";
          }
        }
        if (first.empty()) {
          first = empty.empty() ? "none" : empty;
        }
        return empty.empty();
      },
      std::chrono::seconds(240), std::chrono::seconds(1));
  CHECK_MESSAGE(consolidated, "still empty after 240 s: " << empty);
  MESSAGE("every node runs a pod " << fixed(secondsSince(start))
                                   << " s after the moves; empty at first: " << first);
}

// A NodePool at its limits launches nothing more: the operator places on
// what another NodePool may still launch, and comes back when the limit is
// raised. Inferentia is made the cheap choice (a negotiated price) and the
// neuron NodePool is capped at what its nodes already hold.
TEST_CASE("karpenter: a NodePool at its limit is passed over, and chosen again when raised") {
  fixture();
  REQUIRE(scheme().karpenter);
  json policy = samplePolicy("placementpolicy.yaml");
  policy["spec"]["prices"] = json::array({{{"instanceType", "inf2.xlarge"}, {"onDemand", "0.50"}}});
  auto replaced = cluster().patch(
      kPolicyPath, json::array({{{"op", "replace"}, {"path", "/spec"}, {"value", policy["spec"]}}}),
      kube::PatchType::Json);
  REQUIRE_MESSAGE(replaced.ok(), gpuplacement::testing::whyNot(replaced));
  const std::string neuronPool = "/apis/karpenter.sh/v1/nodepools/neuron";
  std::int64_t held = 0;
  const json nodes = cluster().mustGet("/api/v1/nodes")["items"];
  for (const auto& node : nodes) {
    if (label(node, "karpenter.sh/nodepool") == "neuron") {
      held += allocatable(node, "aws.amazon.com/neuron");
    }
  }
  const auto setLimit = [&](std::int64_t devices) {
    auto patched = cluster().patch(
        neuronPool,
        json{{"spec", {{"limits", {{"aws.amazon.com/neuron", std::to_string(devices)}}}}}},
        kube::PatchType::Merge);
    REQUIRE_MESSAGE(patched.ok(), gpuplacement::testing::whyNot(patched));
  };
  setLimit(held);
  createNamespaces({"limits"});
  cluster().apply(serverDeployment("limits", "chat") + "---\n" +
                  R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: chat, namespace: limits}
spec:
  targetRef: {name: chat}
  workload: {kind: Inference}
  model: {parameters: 7B, precision: fp16, framework: PyTorch, architecture: Transformer}
  objective: CostOptimized
  constraints: {tiers: [Inferentia, NVIDIA], capacityType: OnDemand}
)");
  json workload;
  const auto placedOn = [&](const std::string& tier) {
    workload = cluster().mustGet(workloadPath("limits", "chat"));
    const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
    return base::stringMember(placement, "tier") == tier &&
           settled("limits", "chat", placement).has_value();
  };
  const bool passedOver = cluster().waitFor(
      [&] { return placedOn("NVIDIA"); }, std::chrono::seconds(60), std::chrono::milliseconds(500));
  CHECK_MESSAGE(passedOver, "with the neuron NodePool at "
                                << held
                                << " devices: " << base::memberOf(workload, "status").dump());
  const auto alternatives =
      base::memberOf(base::memberOf(workload, "status"), "alternatives").dump();
  MESSAGE("at the limit: " << base::stringMember(workload["status"]["placement"], "instanceType")
                           << "; alternatives " << alternatives);
  // The status names the NodePool that would have launched the cheaper type.
  CHECK_MESSAGE(alternatives.find("NodePool neuron, which would launch one, is at its limits") !=
                    std::string::npos,
                alternatives);

  const auto raised = Clock::now();
  setLimit(32);
  const bool back = cluster().waitFor([&] { return placedOn("Inferentia"); },
                                      std::chrono::seconds(90), std::chrono::milliseconds(500));
  CHECK_MESSAGE(back, "after the limit was raised: " << base::memberOf(workload, "status").dump()
                                                     << describePods("limits", "chat"));
  MESSAGE("limit raised: " << base::stringMember(workload["status"]["placement"], "instanceType")
                           << " Running " << fixed(secondsSince(raised)) << " s later");
}

// seed 000's "mix of on-demand and spot instances": Karpenter launches both
// capacity types for one placement, and the spread keeps the replicas even.
TEST_CASE("karpenter: a Mixed placement runs half its replicas on spot, half on-demand") {
  fixture();
  REQUIRE(scheme().karpenter);
  createNamespaces({"mixed"});
  // r5.xlarge: a CPU type no sample is placed on, so every node of it here
  // was launched for this workload.
  cluster().apply(serverDeployment("mixed", "embed", 4) + "---\n" +
                  R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: embed, namespace: mixed}
spec:
  targetRef: {name: embed}
  workload: {kind: Inference}
  model: {parameters: 350M, precision: fp32, framework: PyTorch, architecture: Transformer}
  objective: CostOptimized
  constraints: {tiers: [CPU], instanceTypes: [r5.xlarge], capacityType: Mixed}
)");
  json workload;
  std::map<std::string, int> byCapacity;  // capacity type: Running replicas
  std::set<std::string> nodes;
  const auto start = Clock::now();
  const bool split = cluster().waitFor(
      [&] {
        workload = cluster().mustGet(workloadPath("mixed", "embed"));
        const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
        byCapacity.clear();
        nodes.clear();
        // Placed, not only rolled out: before the operator writes, the
        // unplaced template runs on whatever CPU nodes have room.
        if (!placement.is_object() || !settled("mixed", "embed", placement)) {
          return false;
        }
        for (const auto& pod : podsOf("mixed", "embed")) {
          const auto node = base::stringMember(base::memberOf(pod, "spec"), "nodeName");
          nodes.insert(node);
          ++byCapacity[label(nodeNamed(node), "karpenter.sh/capacity-type")];
        }
        return true;
      },
      std::chrono::seconds(240), std::chrono::seconds(1));
  const auto& status = base::memberOf(workload, "status");
  const auto& placement = base::memberOf(status, "placement");
  REQUIRE_MESSAGE(split, status.dump() << describePods("mixed", "embed"));
  MESSAGE("4 replicas Running " << fixed(secondsSince(start)) << " s after creation: "
                                << byCapacity["on-demand"] << " on-demand, " << byCapacity["spot"]
                                << " spot, on " << nodes.size() << " nodes");
  CHECK(base::stringMember(placement, "capacityType") == "Mixed");
  CHECK(base::memberOf(placement, "capacityMix")["onDemandReplicas"] == 2);
  CHECK(base::memberOf(placement, "capacityMix")["spotReplicas"] == 2);
  CHECK(byCapacity["on-demand"] + byCapacity["spot"] == 4);
  CHECK(std::abs(byCapacity["on-demand"] - byCapacity["spot"]) <= 1);

  // The template selects no capacity type and carries the spread.
  const auto deployment = cluster().mustGet(deploymentPath("mixed", "embed"));
  const auto& podSpec = deployment["spec"]["template"]["spec"];
  CHECK_FALSE(base::memberOf(podSpec, "nodeSelector").contains("karpenter.sh/capacity-type"));
  REQUIRE(base::memberOf(podSpec, "topologySpreadConstraints").size() == 1);
  CHECK(podSpec["topologySpreadConstraints"][0]["topologyKey"] == "karpenter.sh/capacity-type");

  // Every node launched by Karpenter at its capacity type; what they cost
  // is what the status claims (two of each, priced at each).
  const auto claims = nodeClaimsByNode();
  double paid = 0;
  std::string report;
  for (const auto& node : nodes) {
    const auto claim = claims.find(node);
    REQUIRE_MESSAGE(claim != claims.end(), node << " has no NodeClaim");
    CHECK(label(claim->second, "karpenter.sh/capacity-type") ==
          label(nodeNamed(node), "karpenter.sh/capacity-type"));
    paid += launchedPrice(nodeNamed(node));
    report += " " + node + " (" + label(nodeNamed(node), "karpenter.sh/capacity-type") + ", $" +
              fixed(launchedPrice(nodeNamed(node)), 4) + "/h)";
  }
  const double claimed = std::atof(base::stringMember(placement, "hourlyCost").c_str()) *
                         static_cast<double>(base::integerMember(placement, "replicas"));
  MESSAGE("launched:" << report << "; the cluster pays $" << fixed(paid, 4)
                      << "/h, the status claims $" << fixed(claimed, 4) << "/h");
  CHECK_MESSAGE(std::abs(claimed - paid) <= 0.05 * paid, base::stringMember(placement, "costNote"));

  // The workload deleted: the spread goes with the rest of the placement,
  // and the team's Deployment is as they wrote it.
  auto deleted = cluster().remove(workloadPath("mixed", "embed"));
  REQUIRE_MESSAGE(deleted.ok(), gpuplacement::testing::whyNot(deleted));
  json after;
  const bool released = cluster().waitFor(
      [&] {
        after = cluster().mustGet(deploymentPath("mixed", "embed"));
        return !carriesPlacement(after) &&
               !base::memberOf(after["spec"]["template"]["spec"], "topologySpreadConstraints")
                    .is_array();
      },
      std::chrono::seconds(30), std::chrono::milliseconds(200));
  CHECK_MESSAGE(released, after["spec"]["template"].dump());
  CHECK(cluster().remove(deploymentPath("mixed", "embed")).ok());
}

// The target's pods Running on nodes of `type`.
int runningOn(const std::string& ns, const std::string& name, const std::string& type) {
  int count = 0;
  for (const auto& pod : podsOf(ns, name)) {
    const std::string node = base::stringMember(base::memberOf(pod, "spec"), "nodeName");
    count += !node.empty() && running(pod) &&
             label(nodeNamed(node), "node.kubernetes.io/instance-type") == type;
  }
  return count;
}

std::string placedType(const json& workload) {
  return base::stringMember(base::memberOf(base::memberOf(workload, "status"), "placement"),
                            "instanceType");
}

// Polls the GpuWorkload until Ready is False for `reason`; `workload`
// holds what was read last, for the failure message.
bool waitNotReady(const std::string& ns, const std::string& name, const std::string& reason,
                  json& workload) {
  return cluster().waitFor(
      [&] {
        workload = cluster().mustGet(workloadPath(ns, name));
        return conditionIs(workload, "Ready", "False", reason);
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
}

TEST_CASE("a pool with too few devices: not placed there, and Pending pods explained after") {
  fixture();
  // Three replicas of one GPU each, and the one node of the type allowed:
  // not placed, and the status says how much room there is.
  const std::string ns = "starved", name = "three-on-one";
  cluster().apply(serverDeployment("starved", "three-on-one", 3) + "---\n" +
                  R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: three-on-one, namespace: starved}
spec:
  targetRef: {name: three-on-one}
  workload: {kind: Inference}
  model: {parameters: 1B, precision: fp16}
  objective: CostOptimized
  constraints: {tiers: [NVIDIA], instanceTypes: [g6.xlarge]}
)");
  json workload;
  const bool refused = waitNotReady(ns, name, "CannotPlace", workload);
  REQUIRE_MESSAGE(refused, conditionText(workload, "Ready") << describePods(ns, name));
  const std::string refusal = base::stringMember(*condition(workload, "Ready"), "message");
  CHECK_MESSAGE(
      refusal.find("the 1 node of g6.xlarge has room for 1 of 3 replicas") != std::string::npos,
      refusal);

  // One replica fits and is placed; scaled to three, it stays (its own
  // pod holds the room it needs) and the two pods the node cannot take
  // wait: the status says why, in the scheduler's words.
  const auto deployment = deploymentPath(ns, name);
  REQUIRE(cluster().patch(deployment, {{"spec", {{"replicas", 1}}}}).ok());
  const bool placed = cluster().waitFor(
      [&] {
        workload = cluster().mustGet(workloadPath(ns, name));
        return placedType(workload) == "g6.xlarge" && runningOn(ns, name, "g6.xlarge") == 1;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
  REQUIRE_MESSAGE(placed, conditionText(workload, "Ready") << describePods(ns, name));
  const auto scaled = Clock::now();
  REQUIRE(cluster().patch(deployment, {{"spec", {{"replicas", 3}}}}).ok());
  const bool said = waitNotReady(ns, name, "Unschedulable", workload);
  REQUIRE_MESSAGE(said, conditionText(workload, "Ready") << describePods(ns, name));
  const std::string message = base::stringMember(*condition(workload, "Ready"), "message");
  CHECK_MESSAGE(message.find("Insufficient nvidia.com/gpu") != std::string::npos, message);
  CHECK(message.find("g6.xlarge") != std::string::npos);
  CHECK(placedType(workload) == "g6.xlarge");

  int pending = 0;
  for (const auto& pod : podsOf(ns, name)) {
    const std::string node = base::stringMember(base::memberOf(pod, "spec"), "nodeName");
    pending +=
        node.empty() && base::stringMember(base::memberOf(pod, "status"), "phase") == "Pending";
  }
  CHECK_MESSAGE(pending >= 1, describePods(ns, name));
  CHECK_MESSAGE(runningOn(ns, name, "g6.xlarge") == 1, describePods(ns, name));
  MESSAGE(ns << "/" << name << ": CannotPlace at 3 replicas (" << refusal
             << "); at 1 placed; scaled to 3, Ready=False Unschedulable after "
             << fixed(secondsSince(scaled)) << " s: " << message);
}

}  // namespace gpuplacement

// ---------------------------------------------------------------------------
// The cluster view: idle devices first, ordered fallback, detection. Its
// own process and pools (ctest e2e_Capacity, config/sim/e2e-capacity.yaml:
// one g6.xlarge, one g5.xlarge, one g6.12xlarge, managed node groups), run
// with `-tc="capacity:*"`; the samples' runs leave these out.
namespace gpuplacement {
namespace {

const char* const kTeam = "team";
const char* const kServices = "capacity";

struct CapacityFixture {
  std::unique_ptr<OperatorProcess> op;

  CapacityFixture() {
    createNamespaces({kTeam, kServices});
    json policy = samplePolicy("placementpolicy.yaml");
    policy["spec"]["nodeLabels"] = {{"scheme", "Auto"}};
    policy["spec"]["capacity"] = {
        {"source", "Auto"}, {"fallbackAfter", "10s"}, {"retryAfter", "20s"}};
    createPolicy(policy);
    // Resyncs at the shortest period: a test that needs a workload
    // reconciled after a change that does not enqueue it waits past one.
    op = startOperator({"--resync", "10s"});
  }
  ~CapacityFixture() {
    if (op) {
      op->stop();
    }
  }
};

CapacityFixture& capacityFixture() {
  static CapacityFixture instance;
  return instance;
}

// A team's own Deployment, not the operator's: `gpus` GPUs on a node of
// `type`, selected and tolerated by hand.
void applyTeamGpuPod(const std::string& name, const std::string& type, int gpus) {
  const std::string n = std::to_string(gpus);
  cluster().apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
                  ", namespace: team}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: " +
                  name + "}}\n  template:\n    metadata: {labels: {app: " + name +
                  "}}\n    spec:\n      nodeSelector: {node.kubernetes.io/instance-type: " + type +
                  "}\n      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: "
                  "NoSchedule}]\n      containers:\n      - name: trainer\n        image: "
                  "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime\n        resources: {limits: "
                  "{nvidia.com/gpu: " +
                  n + "}}\n");
}

// A Deployment of one replica and its GpuWorkload: 7B at fp16 for inference
// (one L4 or one A10G), the cheapest, on NVIDIA, within `types` if given.
void applyService(const std::string& name, const std::string& types = "",
                  const std::string& mode = "Apply") {
  cluster().apply(serverDeployment("capacity", name) +
                  "---\napiVersion: gpuplacement.io/v1alpha1\nkind: "
                  "GpuWorkload\nmetadata: {name: " +
                  name + ", namespace: capacity}\nspec:\n  targetRef: {name: " + name +
                  "}\n  mode: " + mode +
                  "\n  workload: {kind: Inference}\n  model: {parameters: 7B, precision: fp16}\n"
                  "  objective: CostOptimized\n  constraints: {tiers: [NVIDIA]" +
                  (types.empty() ? "" : ", instanceTypes: [" + types + "]") + "}\n");
}

// The Deployment's pods all Running on nodes of `type`.
bool runsOn(const std::string& ns, const std::string& name, const std::string& type) {
  const auto workload = cluster().mustGet(workloadPath(ns, name));
  const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
  return placedType(workload) == type && settled(ns, name, placement).has_value();
}

bool teamPodRuns(const std::string& name) {
  const auto pods = podsOf(kTeam, name);
  return pods.size() == 1 && running(pods[0]);
}

bool anyPodWaits(const std::string& ns, const std::string& name) {
  for (const auto& pod : podsOf(ns, name)) {
    for (const auto& c : base::memberOf(base::memberOf(pod, "status"), "conditions")) {
      if (base::stringMember(c, "type") == "PodScheduled" &&
          base::stringMember(c, "status") == "False" &&
          base::stringMember(c, "reason") == "Unschedulable") {
        return true;
      }
    }
  }
  return false;
}

std::string eventMessage(const std::string& ns, const std::string& name,
                         const std::string& reason) {
  const auto events = cluster().mustGet("/api/v1/namespaces/" + ns + "/events");
  for (const auto& event : events["items"]) {
    if (base::stringMember(event, "reason") == reason &&
        base::stringMember(base::memberOf(event, "involvedObject"), "name") == name) {
      return base::stringMember(event, "message");
    }
  }
  return "";
}

json policyStatus(const std::string& name) {
  return base::memberOf(cluster().mustGet(Cluster::pathOf(kWorkloads, "PlacementPolicy", "", name)),
                        "status");
}

}  // namespace

TEST_CASE("capacity: the policy says what it sees: managed node groups, their labels") {
  capacityFixture();
  json status;
  const bool seen = cluster().waitFor([&] {
    status = policyStatus("default");
    return base::stringMember(base::memberOf(status, "capacity"), "source") == "Nodes";
  });
  REQUIRE_MESSAGE(seen, status.dump());
  CHECK(base::stringMember(base::memberOf(status, "nodeLabels"), "scheme") == "InstanceType");
  CHECK(base::stringMember(base::memberOf(status, "nodeLabels"), "capacityTypeKey") ==
        "eks.amazonaws.com/capacityType");
}

TEST_CASE("capacity: a type no node carries is never chosen, and the answer says so") {
  capacityFixture();
  // 1B at fp16 on NVIDIA, the cheapest: offline, a fractional L4
  // (g6f.large) or a T4 (g4dn.xlarge), types no node here carries.
  cluster().apply(serverDeployment("capacity", "small") + "---\n" +
                  R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: small, namespace: capacity}
spec:
  targetRef: {name: small}
  mode: Recommend
  workload: {kind: Inference}
  model: {parameters: 1B, precision: fp16}
  objective: CostOptimized
  constraints: {tiers: [NVIDIA]}
)");
  json workload;
  const bool placed = cluster().waitFor([&] {
    workload = cluster().mustGet(workloadPath(kServices, "small"));
    return !placedType(workload).empty();
  });
  REQUIRE_MESSAGE(placed, workload.dump());
  const std::string type = placedType(workload);
  CHECK_MESSAGE((type == "g6.xlarge" || type == "g5.xlarge" || type == "g6.12xlarge"), type);
  // The cheaper types the catalog has are named as absent, never chosen.
  std::string absent;
  for (const auto& alternative :
       base::memberOf(base::memberOf(workload, "status"), "alternatives")) {
    const std::string rejected = base::stringMember(alternative, "rejected");
    if (rejected.find("no node or NodePool offers ") != std::string::npos) {
      const std::string other = base::stringMember(alternative, "instanceType");
      CHECK(rejected == "no node or NodePool offers " + other);
      CHECK((other != "g6.xlarge" && other != "g5.xlarge" && other != "g6.12xlarge"));
      absent += (absent.empty() ? "" : ", ") + other;
    }
  }
  CHECK_MESSAGE(!absent.empty(), base::memberOf(workload, "status")["alternatives"].dump());
  MESSAGE("1B on NVIDIA, the cheapest the cluster has: " << type
                                                         << "; named as on no node: " << absent);
  CHECK(cluster().remove(workloadPath(kServices, "small")).ok());
}

TEST_CASE("capacity: two small services share a partly used node; the status says so") {
  capacityFixture();
  applyTeamGpuPod("holder", "g6.12xlarge", 2);
  REQUIRE_MESSAGE(cluster().waitFor([] { return teamPodRuns("holder"); }, std::chrono::seconds(60)),
                  describePods(kTeam, "holder"));
  std::string report = "two services on a g6.12xlarge a team's pod holds 2 of 4 L4 of:";
  std::map<std::string, std::string> notes;
  for (const char* name : {"svc-a", "svc-b"}) {
    applyService(name);
    const bool landed = cluster().waitFor([&] { return runsOn(kServices, name, "g6.12xlarge"); },
                                          std::chrono::seconds(60), std::chrono::milliseconds(200));
    const auto workload = cluster().mustGet(workloadPath(kServices, name));
    const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
    CHECK_MESSAGE(landed, name << ": " << placement.dump() << describePods(kServices, name));
    const std::string note = base::stringMember(placement, "costNote");
    CHECK_MESSAGE(note.find("idle L4 on an existing g6.12xlarge") != std::string::npos, note);
    CHECK_MESSAGE(note.find("nothing more for the cluster") != std::string::npos, note);
    report += std::string("\n") + name + ": " + note;
    notes[name] = note;
  }
  // Sharing is stable: neither moves once both run, and svc-b taking the
  // last idle L4 left svc-a's status as it was. A change on the node does
  // not enqueue svc-a, the resync does: waiting longer than its period
  // (10 s here) makes svc-a's status one reconciled since svc-b landed.
  const char* const ofWorkloads = "controller=\"gpuworkload\"";
  const double reconciles =
      capacityFixture().op->metric("controller_runtime_reconcile_total", ofWorkloads);
  std::this_thread::sleep_for(std::chrono::seconds(12));
  CHECK(capacityFixture().op->metric("controller_runtime_reconcile_total", ofWorkloads) >=
        reconciles + 2);
  for (const char* name : {"svc-a", "svc-b"}) {
    const auto workload = cluster().mustGet(workloadPath(kServices, name));
    CHECK(placedType(workload) == "g6.12xlarge");
    CHECK(base::stringMember(base::memberOf(base::memberOf(workload, "status"), "placement"),
                             "costNote") == notes[name]);
    CHECK_FALSE(base::memberOf(workload, "status").contains("lastReplacement"));
  }
  MESSAGE(report);
}

TEST_CASE("capacity: a full type is passed over; a placed one falls back, and comes back") {
  capacityFixture();
  const auto created = Clock::now();
  applyService("fallback", "g6.xlarge, g5.xlarge");
  // Placed on g6.xlarge, the cheapest, while its one node has room.
  REQUIRE_MESSAGE(cluster().waitFor([] { return runsOn(kServices, "fallback", "g6.xlarge"); },
                                    std::chrono::seconds(60), std::chrono::milliseconds(200)),
                  describePods(kServices, "fallback"));
  // Its node full, a service that allows only g6.xlarge is not placed
  // there: the status says how much room there is.
  applyService("nowhere", "g6.xlarge");
  json nowhere;
  const bool refused = waitNotReady(kServices, "nowhere", "CannotPlace", nowhere);
  CHECK_MESSAGE(refused, conditionText(nowhere, "Ready"));
  CHECK_MESSAGE(
      base::stringMember(*condition(nowhere, "Ready"), "message")
              .find("the 1 node of g6.xlarge has room for 0 of 1 replica") != std::string::npos,
      conditionText(nowhere, "Ready"));
  CHECK(cluster().remove(workloadPath(kServices, "nowhere")).ok());
  CHECK(cluster().remove(deploymentPath(kServices, "nowhere")).ok());

  // Scaled to two, it stays (its pod holds the room it needs) and the new
  // pod waits; after fallbackAfter (10 s) g6.xlarge is left, and both
  // replicas run on g5.xlarge, whose two nodes hold them.
  const auto deployment = deploymentPath(kServices, "fallback");
  REQUIRE(cluster().patch(deployment, {{"spec", {{"replicas", 2}}}}).ok());
  double pendingAt = -1;
  REQUIRE_MESSAGE(cluster().waitFor(
                      [&] {
                        if (pendingAt < 0 && anyPodWaits(kServices, "fallback")) {
                          pendingAt = secondsSince(created);
                        }
                        return pendingAt >= 0;
                      },
                      std::chrono::seconds(60), std::chrono::milliseconds(200)),
                  describePods(kServices, "fallback"));
  const bool fellBack = cluster().waitFor([] { return runsOn(kServices, "fallback", "g5.xlarge"); },
                                          std::chrono::seconds(90), std::chrono::milliseconds(200));
  const double elsewhereAt = secondsSince(created);
  auto workload = cluster().mustGet(workloadPath(kServices, "fallback"));
  REQUIRE_MESSAGE(fellBack, base::memberOf(workload, "status").dump()
                                << describePods(kServices, "fallback") << "\noperator log:\n"
                                << capacityFixture().op->log());
  const auto& unavailable = base::memberOf(base::memberOf(workload, "status"), "unavailable");
  REQUIRE(unavailable.size() == 1);
  CHECK(base::stringMember(unavailable[0], "instanceType") == "g6.xlarge");
  // The Event goes out behind the writes, on its own budget.
  std::string why;
  cluster().waitFor([&] {
    why = eventMessage(kServices, "fallback", "FellBack");
    return !why.empty();
  });
  CHECK_MESSAGE(why.find("Insufficient nvidia.com/gpu") != std::string::npos, why);

  // Back to one replica: once retryAfter (20 s) has passed, g6.xlarge has
  // room for it again and is 20% cheaper for the cluster: it moves back.
  const double shrunkAt = secondsSince(created);
  REQUIRE(cluster().patch(deployment, {{"spec", {{"replicas", 1}}}}).ok());
  const bool back = cluster().waitFor([] { return runsOn(kServices, "fallback", "g6.xlarge"); },
                                      std::chrono::seconds(120), std::chrono::milliseconds(200));
  const double backAt = secondsSince(created);
  workload = cluster().mustGet(workloadPath(kServices, "fallback"));
  REQUIRE_MESSAGE(back, base::memberOf(workload, "status").dump()
                            << describePods(kServices, "fallback"));
  const auto& last = base::memberOf(base::memberOf(workload, "status"), "lastReplacement");
  CHECK(base::stringMember(last, "from") == "g5.xlarge");
  CHECK(base::stringMember(last, "to") == "g6.xlarge");
  MESSAGE("fallback timeline (fallbackAfter 10 s, retryAfter 20 s), seconds from creation: "
          << "a pod Pending on g6.xlarge " << fixed(pendingAt) << ", Running on g5.xlarge "
          << fixed(elsewhereAt) << " (" << fixed(elsewhereAt - pendingAt)
          << " s after Pending), scaled back to 1 at " << fixed(shrunkAt)
          << ", Running on g6.xlarge again " << fixed(backAt) << "; FellBack: " << why);
}

// The Deployment controller starts a rolled pod beside the old one
// (maxSurge 25% of 1: 1) and takes none down first (maxUnavailable 25% of
// 1: 0). On a pool of one node whose GPU the old pod holds, that new pod
// would wait Pending for ever: the operator does not write such a change.
TEST_CASE(
    "capacity: a change whose rollout could not finish is not written; maxUnavailable lets it") {
  capacityFixture();
  // The one g6.xlarge, freed of the fallback test's service.
  CHECK(cluster().remove(workloadPath(kServices, "fallback")).ok());
  CHECK(cluster().remove(deploymentPath(kServices, "fallback")).ok());
  REQUIRE(cluster().waitFor([] { return podsOf(kServices, "fallback").empty(); }));
  applyService("rolling", "g6.xlarge");
  REQUIRE_MESSAGE(cluster().waitFor([] { return runsOn(kServices, "rolling", "g6.xlarge"); },
                                    std::chrono::seconds(60), std::chrono::milliseconds(200)),
                  describePods(kServices, "rolling"));
  const auto deployment = deploymentPath(kServices, "rolling");
  const auto generation = [&] {
    return base::integerMember(base::memberOf(cluster().mustGet(deployment), "metadata"),
                               "generation");
  };
  const auto placedGeneration = generation();
  // Its server becomes vLLM: more host memory a replica, still one L4 of
  // the same g6.xlarge, which its running pod holds.
  REQUIRE(cluster()
              .patch(workloadPath(kServices, "rolling"),
                     {{"spec", {{"model", {{"framework", "vLLM"}}}}}})
              .ok());
  json workload;
  const bool held = cluster().waitFor([&] {
    workload = cluster().mustGet(workloadPath(kServices, "rolling"));
    return conditionIs(workload, "Applied", "False", "RolloutWouldStall");
  });
  REQUIRE_MESSAGE(held, conditionText(workload, "Applied") << "\n"
                                                           << describePods(kServices, "rolling"));
  const std::string why = base::stringMember(*condition(workload, "Applied"), "message");
  for (const char* words : {"maxSurge lets 1 pod start beside the 1 pod running",
                            "maxUnavailable 0", "no node of g6.xlarge has room for one",
                            "a node more of g6.xlarge", "maxUnavailable: 1", "Recreate"}) {
    CHECK_MESSAGE(why.find(words) != std::string::npos, why);
  }
  // Nothing rolled: the Deployment as placed, its one pod Running, none Pending.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK(generation() == placedGeneration);
  CHECK_FALSE(anyPodWaits(kServices, "rolling"));
  CHECK(podsOf(kServices, "rolling").size() == 1);
  CHECK_FALSE(eventMessage(kServices, "rolling", "RolloutWouldStall").empty());

  // The team allows one replica down while it rolls: the change goes, the
  // old pod first, and the new one runs on the same node.
  const auto allowed = Clock::now();
  REQUIRE(cluster()
              .patch(deployment,
                     {{"spec", {{"strategy", {{"rollingUpdate", {{"maxUnavailable", 1}}}}}}}})
              .ok());
  const bool rolled = cluster().waitFor(
      [&] {
        workload = cluster().mustGet(workloadPath(kServices, "rolling"));
        if (!conditionIs(workload, "Applied", "True", "Applied") ||
            !runsOn(kServices, "rolling", "g6.xlarge")) {
          return false;
        }
        const auto pods = podsOf(kServices, "rolling");
        return pods.size() == 1 &&
               base::stringMember(pods[0]["spec"]["containers"][0]["resources"]["requests"],
                                  "memory") == "11008Mi";
      },
      std::chrono::seconds(60), std::chrono::milliseconds(200));
  CHECK_MESSAGE(rolled, conditionText(workload, "Applied") << describePods(kServices, "rolling"));
  MESSAGE("a rollout that could not finish: held with " << conditionText(workload, "Applied")
                                                        << "; with maxUnavailable 1 rolled in "
                                                        << fixed(secondsSince(allowed)) << " s");
  CHECK(cluster().remove(workloadPath(kServices, "rolling")).ok());
  CHECK(cluster().remove(deployment).ok());
}

TEST_CASE("capacity: without RBAC on nodes the policy degrades to source None, nothing crashes") {
  auto& f = capacityFixture();
  f.op->stop();
  const std::string role = "/apis/rbac.authorization.k8s.io/v1/clusterroles/gpu-placement-operator";
  auto rules = cluster().mustGet(role)["rules"];
  json narrowed = json::array();
  for (auto rule : rules) {
    auto& resources = rule["resources"];
    resources.erase(std::remove(resources.begin(), resources.end(), json("nodes")),
                    resources.end());
    if (!resources.empty()) {  // an empty rule is refused (Kubernetes 1.36 validates it)
      narrowed.push_back(rule);
    }
  }
  auto patched = cluster().patch(
      role, json::array({{{"op", "replace"}, {"path", "/rules"}, {"value", narrowed}}}),
      kube::PatchType::Json);
  REQUIRE_MESSAGE(patched.ok(), gpuplacement::testing::whyNot(patched));
  f.op = startOperator();

  json status;
  json policy;
  const bool degraded = cluster().waitFor([&] {
    policy = {{"status", policyStatus("default")}};
    status = policy["status"];
    const auto* known = condition(policy, "CapacityKnown");
    return known && base::stringMember(*known, "status") == "False" &&
           base::stringMember(*known, "reason") == "NodesUnreadable";
  });
  CHECK_MESSAGE(degraded, status.dump());
  CHECK(base::stringMember(base::memberOf(status, "capacity"), "source") == "None");
  // Still placing: a new service gets a placement, from the whole catalog.
  applyService("unseen", "", "Recommend");
  CHECK(cluster().waitFor(
      [] { return !placedType(cluster().mustGet(workloadPath(kServices, "unseen"))).empty(); }));
  CHECK(f.op->running());
  auto restored = cluster().patch(
      role, json::array({{{"op", "replace"}, {"path", "/rules"}, {"value", rules}}}),
      kube::PatchType::Json);
  CHECK(restored.ok());
}

}  // namespace gpuplacement
