// The cluster view: nodes, pods and NodePools read from their API objects
// (shaped as EKS, Karpenter and the device plugins make them), and what the
// cluster offers of each instance type.
#include "core/cluster/capacity.h"

#include <stdexcept>

#include <doctest/doctest.h>

#include "support/engine_fixture.h"
#include "support/offers_text.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

json node(const std::string& type, json labels, json allocatable, json taints = json::array()) {
  labels["node.kubernetes.io/instance-type"] = type;
  return {
      {"metadata", {{"labels", labels}}},
      {"spec", {{"taints", taints}}},
      {"status",
       {{"allocatable", allocatable}, {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
}

const json kGpuTaint = {{{"key", "nvidia.com/gpu"}, {"value", "true"}, {"effect", "NoSchedule"}}};
const json kNeuronTaint = {
    {{"key", "aws.amazon.com/neuron"}, {"value", "true"}, {"effect", "NoSchedule"}}};

json g6x4(const std::string& capacityType = "ON_DEMAND") {
  return node("g6.12xlarge",
              {{"eks.amazonaws.com/nodegroup", "gpu-l4-x4"},
               {"eks.amazonaws.com/capacityType", capacityType},
               {"nvidia.com/gpu.product", "NVIDIA-L4"}},
              {{"cpu", "47810m"}, {"memory", "176052Mi"}, {"nvidia.com/gpu", "4"}, {"pods", "234"}},
              kGpuTaint);
}

json karpenterG5() {
  return node("g5.xlarge",
              {{"karpenter.sh/nodepool", "gpu-a10g"},
               {"karpenter.sh/capacity-type", "spot"},
               {"karpenter.k8s.aws/instance-gpu-name", "a10g"},
               {"karpenter.k8s.aws/instance-gpu-count", "1"}},
              {{"cpu", "3920m"}, {"memory", "14162Mi"}, {"nvidia.com/gpu", 1}}, kGpuTaint);
}

json pod(const std::string& nodeName, json limits, const std::string& phase = "Running") {
  return {{"spec",
           {{"nodeName", nodeName},
            {"containers", {{{"name", "c"}, {"resources", {{"limits", limits}}}}}}}},
          {"status", {{"phase", phase}}}};
}

json nodePool(json requirements, json limits = json::object(), json taints = kGpuTaint) {
  return {{"spec",
           {{"limits", limits},
            {"template",
             {{"metadata", {{"labels", {{"team", "ml"}}}}},
              {"spec", {{"requirements", requirements}, {"taints", taints}}}}}}}};
}

json requirement(const std::string& key, const std::string& op, json values = json::array()) {
  return {{"key", key}, {"operator", op}, {"values", values}};
}

}  // namespace

TEST_CASE("resource quantities as the API writes them") {
  struct Case {
    const char* text;
    std::optional<std::int64_t> milli;
  };
  const Case cases[] = {
      {"4", 4000},
      {"3920m", 3920},
      {"0.5", 500},
      {"1.5k", 1500000},
      {"2e3", 2000000},
      {"16Gi", 16LL * 1024 * 1024 * 1024 * 1000},
      {"14162Mi", 14162LL * 1024 * 1024 * 1000},
      {"1E", std::nullopt},  // an exa of thousandths does not fit: refused, not wrapped
      {"", std::nullopt},
      {"-1", std::nullopt},
      {"4 cores", std::nullopt},
      {"Gi", std::nullopt},
      {"1.2.3", std::nullopt},
      {"9999999999999999Ei", std::nullopt},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.text));
    const auto parsed = parseResourceMilli(c.text);
    CHECK(parsed.ok() == c.milli.has_value());
    if (parsed && c.milli) {
      CHECK(*parsed == *c.milli);
    }
  }
}

TEST_CASE("a node as placement reads it") {
  const auto managed = nodeFromJson(g6x4("SPOT"));
  CHECK(managed.instanceType == "g6.12xlarge");
  CHECK(managed.capacityType == CapacityType::Spot);
  CHECK(managed.allocatable == Devices{4, 0, 0});
  CHECK(managed.milliCpu == 47810);
  CHECK(managed.memoryBytes == 176052LL * 1024 * 1024);
  CHECK(managed.pods == 234);
  CHECK(managed.labels == (kInstanceTypeLabel | kGpuProductLabel | kNodeGroupCapacityLabel));
  CHECK(managed.taints == std::vector<Taint>{{"nvidia.com/gpu", "true", "NoSchedule"}});
  CHECK(managed.schedulable);

  const auto karpenter = nodeFromJson(karpenterG5());
  CHECK(karpenter.nodePool == "gpu-a10g");
  CHECK(karpenter.capacityType == CapacityType::Spot);
  CHECK(karpenter.labels == (kInstanceTypeLabel | kKarpenterGpuLabels | kKarpenterCapacityLabel));
  CHECK(karpenter.allocatable.gpus == 1);
  CHECK(karpenter.pods == 0);  // not stated: no bound

  auto cordoned = g6x4();
  cordoned["spec"]["unschedulable"] = true;
  CHECK_FALSE(nodeFromJson(cordoned).schedulable);
  auto notReady = g6x4();
  notReady["status"]["conditions"][0]["status"] = "Unknown";
  CHECK_FALSE(nodeFromJson(notReady).schedulable);
  auto softTaint = g6x4();
  softTaint["spec"]["taints"] = {{{"key", "spare"}, {"effect", "PreferNoSchedule"}}};
  CHECK(nodeFromJson(softTaint).taints.empty());  // it only prefers
  // Garbage: defaults, no crash.
  CHECK(nodeFromJson(json::array()).instanceType.empty());
  CHECK_FALSE(nodeFromJson(json::array()).schedulable);
}

TEST_CASE("a pod: the devices it holds, or why it waits") {
  const auto bound = podFromJson(pod("n1", {{"nvidia.com/gpu", "2"}}));
  CHECK(bound.node == "n1");
  CHECK(bound.devices == Devices{2, 0, 0});
  CHECK(bound.holdsDevices());
  CHECK_FALSE(podFromJson(pod("n1", {{"nvidia.com/gpu", 2}}, "Succeeded")).holdsDevices());
  CHECK(podFromJson(pod("n1", {{"aws.amazon.com/neuron", 1}, {"aws.amazon.com/neuroncore", 2}}))
            .devices == Devices{0, 1, 2});

  // CPU and memory: requests summed over containers, a limit alone
  // standing for its request, the largest init container when more.
  auto requests = pod("n1", {{"cpu", "1500m"}, {"memory", "2Gi"}});
  requests["spec"]["containers"].push_back(
      {{"name", "sidecar"}, {"resources", {{"limits", {{"cpu", "500m"}, {"memory", "1Gi"}}}}}});
  const auto summed = podFromJson(requests);
  CHECK(summed.milliCpu == 2000);
  CHECK(summed.memoryBytes == 3LL << 30);
  requests["spec"]["initContainers"] = {
      {{"name", "warm"}, {"resources", {{"requests", {{"cpu", "3"}, {"memory", "1Gi"}}}}}}};
  const auto withInit = podFromJson(requests);
  CHECK(withInit.milliCpu == 3000);
  CHECK(withInit.memoryBytes == 3LL << 30);

  auto pending = pod("", {{"nvidia.com/gpu", 8}});
  pending["metadata"]["ownerReferences"] = {{{"kind", "ReplicaSet"}, {"name", "chat-7d9f"}}};
  pending["status"] = {{"phase", "Pending"},
                       {"conditions",
                        {{{"type", "PodScheduled"},
                          {"status", "False"},
                          {"reason", "Unschedulable"},
                          {"message", "0/11 nodes are available: 11 Insufficient nvidia.com/gpu."},
                          {"lastTransitionTime", "2026-11-22T12:00:00Z"}}}}};
  const auto waiting = podFromJson(pending);
  CHECK_FALSE(waiting.holdsDevices());
  CHECK(waiting.ownerKind == TargetKind::Deployment);
  CHECK(waiting.owner == "chat");  // the ReplicaSet's Deployment
  CHECK(waiting.unschedulable.find("Insufficient nvidia.com/gpu") != std::string::npos);
  CHECK(waiting.unschedulableSince == "2026-11-22T12:00:00Z");

  // The other targets own their pods themselves.
  for (const auto& [kind, expected] :
       {std::pair{"StatefulSet", TargetKind::StatefulSet}, std::pair{"Job", TargetKind::Job}}) {
    CAPTURE(kind);
    pending["metadata"]["ownerReferences"] = {{{"kind", kind}, {"name", "llama-training"}}};
    const auto view = podFromJson(pending);
    CHECK(view.ownerKind == expected);
    CHECK(view.owner == "llama-training");
  }
  // Owners the operator does not place are not remembered.
  pending["metadata"]["ownerReferences"] = {{{"kind", "DaemonSet"}, {"name", "agent"}}};
  CHECK(podFromJson(pending).owner.empty());
}

TEST_CASE("the labels Karpenter gives an instance type") {
  const auto& catalog = *testing::shippedCatalog();
  const auto g4dn = karpenterLabels(*catalog.find("g4dn.xlarge"), catalog, CapacityType::Spot);
  CHECK(g4dn.at("karpenter.k8s.aws/instance-family") == "g4dn");
  CHECK(g4dn.at("karpenter.k8s.aws/instance-category") == "g");
  CHECK(g4dn.at("karpenter.k8s.aws/instance-generation") == "4");
  CHECK(g4dn.at("karpenter.k8s.aws/instance-size") == "xlarge");
  CHECK(g4dn.at("karpenter.k8s.aws/instance-gpu-name") == "t4");
  CHECK(g4dn.at("karpenter.k8s.aws/instance-gpu-count") == "1");
  CHECK(g4dn.at("karpenter.sh/capacity-type") == "spot");
  const auto inf2 = karpenterLabels(*catalog.find("inf2.xlarge"), catalog, CapacityType::OnDemand);
  CHECK(inf2.at("karpenter.k8s.aws/instance-category") == "inf");
  CHECK(inf2.at("karpenter.k8s.aws/instance-accelerator-name") == "inferentia2");
  CHECK(inf2.at("karpenter.k8s.aws/instance-accelerator-manufacturer") == "aws");
  CHECK(inf2.count("karpenter.k8s.aws/instance-gpu-name") == 0);
  const auto cpu = karpenterLabels(*catalog.find("m5.xlarge"), catalog, CapacityType::OnDemand);
  CHECK(cpu.count("karpenter.k8s.aws/instance-gpu-count") == 0);
  CHECK(cpu.at("karpenter.k8s.aws/instance-cpu") == "4");
}

TEST_CASE("NodePool requirements, as Karpenter reads them") {
  const auto& catalog = *testing::shippedCatalog();
  const auto g5 = karpenterLabels(*catalog.find("g5.xlarge"), catalog, CapacityType::OnDemand);
  struct Case {
    const char* label;
    json requirement;
    bool allows;
  };
  const Case cases[] = {
      {"In, listed", requirement("karpenter.k8s.aws/instance-family", "In", {"g5", "g6"}), true},
      {"In, not listed", requirement("karpenter.k8s.aws/instance-family", "In", {"g6"}), false},
      {"NotIn", requirement("karpenter.k8s.aws/instance-gpu-name", "NotIn", {"t4"}), true},
      {"NotIn, listed", requirement("karpenter.sh/capacity-type", "NotIn", {"on-demand"}), false},
      {"Exists", requirement("karpenter.k8s.aws/instance-gpu-count", "Exists"), true},
      {"DoesNotExist", requirement("karpenter.k8s.aws/instance-gpu-count", "DoesNotExist"), false},
      {"Gt", requirement("karpenter.k8s.aws/instance-generation", "Gt", {"4"}), true},
      {"Gt, equal", requirement("karpenter.k8s.aws/instance-generation", "Gt", {"5"}), false},
      {"Lt", requirement("karpenter.k8s.aws/instance-cpu", "Lt", {"8"}), true},
      {"Gt, not a number", requirement("karpenter.k8s.aws/instance-family", "Gt", {"1"}), false},
      {"the pool's own label", requirement("team", "In", {"ml"}), true},
      {"an unknown operator", requirement("kubernetes.io/os", "Matches", {"linux"}), false},
      // Where, not what: every type is offered in every zone of the region.
      {"zones", requirement("topology.kubernetes.io/zone", "In", {"us-east-1a", "us-east-1b"}),
       true},
      {"a region", requirement("topology.kubernetes.io/region", "In", {"us-east-1"}), true},
      {"no zone at all", requirement("topology.kubernetes.io/zone", "DoesNotExist"), false},
      {"an empty zone list", requirement("topology.kubernetes.io/zone", "In", {}), false},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto pool = nodePoolFromJson(nodePool(json::array({c.requirement})));
    const auto excluded = excludedBy(pool, g5);
    CHECK(!excluded.has_value() == c.allows);
    if (excluded) {
      CHECK(excluded->find(c.requirement["key"].get<std::string>()) != std::string::npos);
    }
  }
}

TEST_CASE("what the cluster offers, from where") {
  const auto& catalog = *testing::shippedCatalog();
  const Policy policy;
  const auto g6 = catalog.indexOf("g6.12xlarge");
  const auto g5 = catalog.indexOf("g5.xlarge");
  const auto p5 = catalog.indexOf("p5.48xlarge");
  const NodeView busy = nodeFromJson(g6x4());
  const NodeView spotG5 = nodeFromJson(karpenterG5());
  const NodeView teamOnly =
      nodeFromJson(node("p5.48xlarge", json::object(), {{"nvidia.com/gpu", 8}},
                        {{{"key", "team"}, {"value", "a"}, {"effect", "NoSchedule"}}}));
  const auto pool = nodePoolFromJson(
      nodePool({requirement("karpenter.k8s.aws/instance-family", "In", {"g5"}),
                requirement("karpenter.sh/capacity-type", "In", {"spot", "on-demand"})},
               {{"nvidia.com/gpu", "2"}}));

  ClusterState cluster;
  cluster.nodesKnown = true;
  cluster.nodes = {{"busy", &busy, Devices{3, 0, 0}},
                   {"spot-g5", &spotG5, Devices{}},
                   {"team-only", &teamOnly, Devices{}}};

  SUBCASE("Nodes: the types of the nodes that exist, idle devices counted") {
    const auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::Nodes);
    CHECK(capacity.source == CapacitySource::Nodes);
    CHECK(capacity.offered(g6, CapacityType::OnDemand));
    CHECK_FALSE(capacity.offered(g6, CapacityType::Spot));
    CHECK(capacity.offer(g6, CapacityType::OnDemand)->largestIdle == 1);  // 4 - 3
    CHECK(capacity.offered(g5, CapacityType::Spot));
    CHECK_FALSE(capacity.offered(g5, CapacityType::OnDemand));
    CHECK_FALSE(capacity.offered(p5, CapacityType::OnDemand));  // a taint we do not tolerate
    CHECK_FALSE(capacity.offered(catalog.indexOf("g4dn.xlarge"), CapacityType::OnDemand));
  }
  SUBCASE("Auto without Karpenter's CRD: Nodes") {
    const auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::Auto);
    CHECK(capacity.source == CapacitySource::Nodes);
    CHECK(capacity.why.find("not installed") != std::string::npos);
  }
  SUBCASE("Auto with NodePools: what they may launch too, within their limits") {
    cluster.nodePoolsInstalled = true;
    cluster.nodePools = {{"gpu-a10g", &pool}};
    auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::Auto);
    CHECK(capacity.source == CapacitySource::NodePools);
    // The pool's node holds 1 of its 2 GPUs: one more g5.xlarge fits.
    CHECK(capacity.offer(g5, CapacityType::OnDemand)->nodePools ==
          std::vector<std::string>{"gpu-a10g"});
    CHECK(capacity.offer(g5, CapacityType::OnDemand)->poolsAtLimit.empty());
    CHECK(capacity.offered(g5, CapacityType::OnDemand));
    CHECK_FALSE(capacity.offered(catalog.indexOf("g5.12xlarge"), CapacityType::OnDemand));
    // A second node of the pool reaches its limit: it launches no more.
    NodeView second = spotG5;
    cluster.nodes.push_back({"second", &second, Devices{1, 0, 0}});
    capacity = capacityOf(cluster, catalog, policy, CapacitySource::Auto);
    CHECK(capacity.offer(g5, CapacityType::OnDemand)->nodePools.empty());
    // ...and the explanation can name the pool that would have.
    CHECK(capacity.offer(g5, CapacityType::OnDemand)->poolsAtLimit ==
          std::vector<std::string>{"gpu-a10g"});
    CHECK(capacity.offered(g5, CapacityType::Spot));  // its nodes still exist
  }
  SUBCASE("a NodePool whose taint placements do not tolerate launches nothing for them") {
    cluster.nodePoolsInstalled = true;
    const auto tainted = nodePoolFromJson(
        nodePool({requirement("karpenter.k8s.aws/instance-family", "In", {"g6"})}, json::object(),
                 {{{"key", "team"}, {"value", "b"}, {"effect", "NoExecute"}}}));
    cluster.nodePools = {{"team-b", &tainted}};
    const auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::NodePools);
    CHECK(capacity.offer(catalog.indexOf("g6.xlarge"), CapacityType::OnDemand)->nodePools.empty());
  }
  SUBCASE("None, or nodes not known: every type is a candidate, and why") {
    auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::None);
    CHECK(capacity.source == CapacitySource::None);
    CHECK(capacity.offered(p5, CapacityType::OnDemand));
    cluster.nodesKnown = false;
    cluster.nodesProblem = "list nodes: 403 Forbidden";
    capacity = capacityOf(cluster, catalog, policy, CapacitySource::Auto);
    CHECK(capacity.source == CapacitySource::None);
    CHECK(capacity.why.find("403 Forbidden") != std::string::npos);
  }
}

TEST_CASE("the label scheme is the one the accelerated nodes carry") {
  const NodeView managed = nodeFromJson(g6x4());
  const NodeView karpenter = nodeFromJson(karpenterG5());
  NodeView autoMode = nodeFromJson(
      node("g6.xlarge", {{"eks.amazonaws.com/instance-gpu-name", "l4"}}, {{"nvidia.com/gpu", 1}}));
  NodeView productOnly = managed;
  productOnly.labels = kGpuProductLabel;
  const NodeView cpu = nodeFromJson(node("m5.xlarge", json::object(), {{"cpu", "4"}}));
  const NodePoolView pool;
  struct Case {
    const char* label;
    std::vector<const NodeView*> nodes;
    bool nodePools;
    LabelScheme scheme;
    bool autoMode;
  };
  const Case cases[] = {
      {"managed node groups", {&managed, &cpu}, false, LabelScheme::InstanceType, false},
      {"Karpenter", {&karpenter, &cpu}, true, LabelScheme::Karpenter, false},
      {"mixed: the label both carry",
       {&managed, &karpenter},
       true,
       LabelScheme::InstanceType,
       false},
      {"EKS Auto Mode", {&autoMode}, true, LabelScheme::Karpenter, true},
      {"GPU Feature Discovery only",
       {&productOnly},
       false,
       LabelScheme::GPUFeatureDiscovery,
       false},
      {"no GPU node yet, NodePools", {&cpu}, true, LabelScheme::Karpenter, false},
      {"no GPU node, no NodePools", {&cpu}, false, LabelScheme::InstanceType, false},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    ClusterState cluster;
    cluster.nodesKnown = true;
    for (const auto* node : c.nodes) {
      cluster.nodes.push_back({"", node, Devices{}});
    }
    cluster.nodePoolsInstalled = c.nodePools;
    if (c.nodePools) {
      cluster.nodePools = {{"pool", &pool}};
    }
    const auto choice = detectLabelScheme(cluster);
    CHECK(choice.scheme == c.scheme);
    CHECK(choice.autoMode == c.autoMode);
    CHECK_FALSE(choice.why.empty());
  }
}

// A cluster of these nodes, their pods not known.
ClusterState clusterOfNodes(const std::vector<const NodeView*>& nodes) {
  ClusterState cluster;
  cluster.nodesKnown = true;
  for (const auto* node : nodes) {
    cluster.nodes.push_back({"", node, Devices{}});
  }
  return cluster;
}

TEST_CASE("the capacity-type label is one every node carries, or none") {
  const NodeView managed = nodeFromJson(g6x4());           // eks.amazonaws.com/capacityType
  const NodeView karpenter = nodeFromJson(karpenterG5());  // karpenter.sh/capacity-type
  const NodeView bare = nodeFromJson(node("m5.xlarge", json::object(), {{"cpu", "4"}}));
  const auto labelOf = [](std::vector<const NodeView*> nodes) {
    return detectLabelScheme(clusterOfNodes(nodes)).capacityLabel;
  };
  const auto nodeGroups = labelOf({&managed});
  REQUIRE(nodeGroups.has_value());
  CHECK(nodeGroups->key == "eks.amazonaws.com/capacityType");
  CHECK(nodeGroups->onDemand == "ON_DEMAND");
  CHECK(nodeGroups->spot == "SPOT");
  const auto karpenterLabel = labelOf({&karpenter});
  REQUIRE(karpenterLabel.has_value());
  CHECK(karpenterLabel->key == "karpenter.sh/capacity-type");
  CHECK_FALSE(labelOf({&managed, &karpenter}).has_value());  // they disagree
  CHECK_FALSE(labelOf({&managed, &bare}).has_value());       // some nodes carry neither
}

TEST_CASE("the nearest network domain: a placement group, else EC2's network node, on GPU nodes") {
  const auto withLabels = [](json labels, json allocatable) {
    return nodeFromJson(node("p5.48xlarge", std::move(labels), std::move(allocatable)));
  };
  const json gpus = {{"nvidia.com/gpu", 8}};
  const NodeView layered = withLabels({{"topology.k8s.aws/network-node-layer-3", "nn-3"}}, gpus);
  const NodeView grouped = withLabels({{"topology.k8s.aws/network-node-layer-3", "nn-3"},
                                       {"karpenter.k8s.aws/placement-group-id", "pg-0a"}},
                                      gpus);
  const NodeView cpuLayered =
      withLabels({{"karpenter.k8s.aws/placement-group-id", "pg-0b"}}, {{"cpu", "4"}});
  const NodeView plain = nodeFromJson(g6x4());
  const auto keyOf = [](std::vector<const NodeView*> nodes) {
    return detectLabelScheme(clusterOfNodes(nodes)).networkDomainKey;
  };
  CHECK(keyOf({&plain, &layered}) == "topology.k8s.aws/network-node-layer-3");
  CHECK(keyOf({&layered, &grouped}) == "karpenter.k8s.aws/placement-group-id");
  // A CPU node's placement group says nothing of where GPU work goes.
  CHECK(keyOf({&plain, &cpuLayered}).empty());
  CHECK(keyOf({&plain}).empty());
}

TEST_CASE("recounting the nodes whose pods changed gives what counting every node does") {
  const auto& catalog = *testing::shippedCatalog();
  const Policy policy;
  const NodeView l4 = nodeFromJson(g6x4());
  const NodeView spotG5 = nodeFromJson(karpenterG5());
  const NodeView teamOnly =
      nodeFromJson(node("p5.48xlarge", json::object(), {{"nvidia.com/gpu", 8}},
                        {{{"key", "team"}, {"value", "a"}, {"effect", "NoSchedule"}}}));
  const NodeView cpu = nodeFromJson(
      node("m5.xlarge", json::object(), {{"cpu", "3920m"}, {"memory", "15Gi"}, {"pods", "58"}}));
  const NodeView unknown = nodeFromJson(node("x9.huge", json::object(), {{"nvidia.com/gpu", 4}}));
  const auto pool =
      nodePoolFromJson(nodePool({requirement("karpenter.k8s.aws/instance-family", "In", {"g5"})}));

  ClusterState cluster;
  cluster.nodesKnown = true;
  cluster.nodePoolsInstalled = true;
  cluster.nodePools = {{"gpu-a10g", &pool}};
  cluster.nodes = {{"l4-a", &l4, Devices{3, 0, 0}, 12000, 48LL << 30, 3},
                   {"l4-b", &l4, Devices{}, 0, 0, 0},
                   {"l4-c", &l4, Devices{1, 0, 0}, 4000, 16LL << 30, 1},
                   {"g5-a", &spotG5, Devices{}, 0, 0, 0},
                   {"g5-b", &spotG5, Devices{1, 0, 0}, 2000, 8LL << 30, 1},
                   {"team-only", &teamOnly, Devices{}, 0, 0, 0},
                   {"cpu-a", &cpu, Devices{}, 500, 1LL << 30, 2},
                   {"unknown", &unknown, Devices{}, 0, 0, 0}};
  const auto find = [&](const std::string& name) -> ClusterState::Node& {
    for (auto& entry : cluster.nodes) {
      if (entry.name == name) {
        return entry;
      }
    }
    FAIL("no node " << name);
    throw std::logic_error("unreachable");
  };

  // Each step: what the pods on one node hold after it.
  struct Step {
    const char* what;
    const char* node;
    Devices used;
    std::int64_t milliCpu;
    std::int64_t memoryBytes;
    std::int32_t pods;
  };
  const Step steps[] = {
      {"a GPU pod lands on an empty node: its idle devices now cost nothing more", "l4-b",
       Devices{1, 0, 0}, 4000, 16LL << 30, 1},
      {"the node with the most idle devices fills: the largest idle is another's", "l4-b",
       Devices{4, 0, 0}, 16000, 64LL << 30, 4},
      {"the busiest node empties: the largest idle is its again, and not at no cost", "l4-a",
       Devices{}, 0, 0, 0},
      {"a CPU pod on a GPU node: room for CPU, not for devices", "l4-a", Devices{}, 250, 64LL << 20,
       1},
      {"CPU pods come and go on a CPU node", "cpu-a", Devices{}, 1500, 3LL << 30, 5},
      {"the last pod leaves the CPU node", "cpu-a", Devices{}, 0, 0, 0},
      {"a spot node's pod leaves", "g5-b", Devices{}, 0, 0, 0},
      {"pods on a node placements do not tolerate count nowhere", "team-only", Devices{8, 0, 0},
       8000, 32LL << 30, 1},
      {"pods on a type the catalog lacks count nowhere", "unknown", Devices{2, 0, 0}, 0, 0, 1},
      {"more devices held than the node has: negative room, no idle", "l4-c", Devices{5, 0, 0}, 0,
       0, 5},
  };
  for (const auto source : {CapacitySource::Nodes, CapacitySource::NodePools}) {
    SUBCASE(("step by step, source " + std::string(base::nameOf(source))).c_str()) {
      auto recounted = capacityOf(cluster, catalog, policy, source);
      for (const auto& step : steps) {
        CAPTURE(step.what);
        auto& entry = find(step.node);
        entry.used = step.used;
        entry.usedMilliCpu = step.milliCpu;
        entry.usedMemoryBytes = step.memoryBytes;
        entry.usedPods = step.pods;
        recounted.recount(entry.name, shareOf(entry, catalog, policy));
        CHECK(testing::offersText(recounted) ==
              testing::offersText(capacityOf(cluster, catalog, policy, source)));
      }
    }
  }
  SUBCASE("the largest idle follows the nodes") {
    const auto g6 = catalog.indexOf("g6.12xlarge");
    auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::Nodes);
    CHECK(capacity.offer(g6, CapacityType::OnDemand)->largestIdle == 4);  // l4-b, empty
    auto& entry = find("l4-b");
    entry.used = Devices{4, 0, 0};
    capacity.recount("l4-b", shareOf(entry, catalog, policy));
    CHECK(capacity.offer(g6, CapacityType::OnDemand)->largestIdle == 3);  // l4-c, 4 - 1
    CHECK(capacity.offer(g6, CapacityType::OnDemand)->idle.size() == 2);  // l4-a 1, l4-c 3
  }
  SUBCASE("a node taken out, then counted again") {
    auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::Nodes);
    const auto before = testing::offersText(capacity);
    capacity.recount("l4-a", std::nullopt);
    CHECK(capacity.offer(catalog.indexOf("g6.12xlarge"), CapacityType::OnDemand)->nodes == 2);
    capacity.recount("l4-a", shareOf(find("l4-a"), catalog, policy));
    CHECK(testing::offersText(capacity) == before);
  }
  SUBCASE("under source None there is nothing to recount") {
    auto capacity = capacityOf(cluster, catalog, policy, CapacitySource::None);
    capacity.recount("l4-a", shareOf(find("l4-a"), catalog, policy));
    CHECK(capacity.offers.empty());
    CHECK(capacity.offered(catalog.indexOf("p5.48xlarge"), CapacityType::OnDemand));
  }
}

TEST_CASE("a node's use sums its pods as they come and go") {
  PodView gpu;
  gpu.devices = Devices{2, 0, 0};
  gpu.milliCpu = 4000;
  gpu.memoryBytes = 16LL << 30;
  PodView web;
  web.milliCpu = 250;
  web.memoryBytes = 64LL << 20;
  NodeUse use;
  use.add(gpu);
  use.add(web);
  CHECK(use.devices == Devices{2, 0, 0});
  CHECK(use.milliCpu == 4250);
  CHECK(use.memoryBytes == (16LL << 30) + (64LL << 20));
  CHECK(use.pods == 2);
  use.subtract(gpu);
  NodeUse webOnly;
  webOnly.add(web);
  CHECK(use == webOnly);
  use.subtract(web);
  CHECK(use == NodeUse{});  // the caches drop a node's entry when it is empty
}

}  // namespace gpuplacement::core
