#include "core/cluster/capacity.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "base/time_format.h"
#include "core/catalog/quantity.h"

namespace gpuplacement::core {
namespace {

// "g4dn" -> category "g", generation "4"; "inf2" -> "inf", "2"; "p4de" ->
// "p", "4" (Karpenter's AWS provider reads the family the same way).
std::pair<std::string, std::string> categoryAndGeneration(const std::string& family) {
  std::size_t digits = 0;
  while (digits < family.size() && !std::isdigit(static_cast<unsigned char>(family[digits]))) {
    ++digits;
  }
  std::size_t end = digits;
  while (end < family.size() && std::isdigit(static_cast<unsigned char>(family[end]))) {
    ++end;
  }
  return {family.substr(0, digits), family.substr(digits, end - digits)};
}

std::optional<std::int64_t> integerOf(const std::string& text) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

std::string describe(const NodeSelectorRequirement& requirement) {
  std::string text = requirement.key + " " + requirement.op;
  for (std::size_t i = 0; i < requirement.values.size(); ++i) {
    text += (i == 0 ? " " : ",") + requirement.values[i];
  }
  return text;
}

bool tolerated(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect.empty() && toleration.effect != taint.effect) {
    return false;
  }
  if (toleration.op == "Exists") {
    return toleration.key.empty() || toleration.key == taint.key;
  }
  return toleration.key == taint.key && toleration.value == taint.value;
}

}  // namespace

bool satisfies(const NodeSelectorRequirement& requirement, const std::string* value) {
  const auto& values = requirement.values;
  const bool listed = value && std::find(values.begin(), values.end(), *value) != values.end();
  if (requirement.op == "In") {
    return listed;
  }
  if (requirement.op == "NotIn") {
    return !listed;
  }
  if (requirement.op == "Exists") {
    return value != nullptr;
  }
  if (requirement.op == "DoesNotExist") {
    return value == nullptr;
  }
  const bool bounded = requirement.op == "Gt" || requirement.op == "Lt" ||
                       requirement.op == "Gte" || requirement.op == "Lte";
  if (bounded && value && values.size() == 1) {
    const auto have = integerOf(*value);
    const auto bound = integerOf(values.front());
    if (!have || !bound) {
      return false;
    }
    return requirement.op == "Gt"    ? *have > *bound
           : requirement.op == "Lt"  ? *have < *bound
           : requirement.op == "Gte" ? *have >= *bound
                                     : *have <= *bound;
  }
  return false;  // an operator Karpenter does not know selects nothing
}

std::map<std::string, std::string> karpenterLabels(const InstanceType& instance,
                                                   const Catalog& catalog, CapacityType capacity) {
  const auto dot = instance.type.find('.');
  const auto [category, generation] = categoryAndGeneration(instance.family);
  std::map<std::string, std::string> labels = {
      {"node.kubernetes.io/instance-type", instance.type},
      {"karpenter.sh/capacity-type", capacity == CapacityType::Spot ? "spot" : "on-demand"},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/os", "linux"},
      {"karpenter.k8s.aws/instance-family", instance.family},
      {"karpenter.k8s.aws/instance-size",
       dot == std::string::npos ? "" : instance.type.substr(dot + 1)},
      {"karpenter.k8s.aws/instance-category", category},
      {"karpenter.k8s.aws/instance-generation", generation},
      {"karpenter.k8s.aws/instance-cpu", std::to_string(instance.vcpus)},
      {"karpenter.k8s.aws/instance-memory",
       std::to_string(std::llround(instance.memoryGiB * 1024))}};
  if (const auto* accelerator = catalog.acceleratorOf(instance)) {
    const bool nvidia = instance.tier == Tier::NVIDIA;
    const std::string prefix =
        nvidia ? "karpenter.k8s.aws/instance-gpu-" : "karpenter.k8s.aws/instance-accelerator-";
    labels[prefix + "name"] = accelerator->karpenterName;
    labels[prefix + "count"] = std::to_string(instance.acceleratorCount);
    labels[prefix + "manufacturer"] = nvidia ? "nvidia" : "aws";
    if (nvidia) {
      labels[prefix + "memory"] = std::to_string(std::llround(accelerator->memoryGiB * 1024));
    }
  }
  return labels;
}

namespace {

// Where a node runs, not what it is: the catalog offers every type in
// every zone of its region, so a NodePool that names zones (or the region)
// may launch any type in them. Only a requirement that no zone be set
// excludes a type.
bool placeRequirement(const NodeSelectorRequirement& requirement) {
  return requirement.key == "topology.kubernetes.io/zone" ||
         requirement.key == "topology.kubernetes.io/region";
}

}  // namespace

std::optional<std::string> excludedBy(const NodePoolView& pool,
                                      const std::map<std::string, std::string>& labels) {
  for (const auto& requirement : pool.requirements) {
    if (placeRequirement(requirement)) {
      if (requirement.op == "DoesNotExist" ||
          (requirement.op == "In" && requirement.values.empty())) {
        return "requires " + describe(requirement);  // every node has a zone
      }
      continue;
    }
    // The pool's own template labels are on every node it makes.
    const auto own = pool.labels.find(requirement.key);
    const auto found = labels.find(requirement.key);
    const std::string* value = own != pool.labels.end() ? &own->second
                               : found != labels.end()  ? &found->second
                                                        : nullptr;
    if (!satisfies(requirement, value)) {
      return "requires " + describe(requirement);
    }
  }
  return std::nullopt;
}

bool tolerates(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints) {
  return std::all_of(taints.begin(), taints.end(), [&](const Taint& taint) {
    return std::any_of(tolerations.begin(), tolerations.end(),
                       [&](const Toleration& toleration) { return tolerated(toleration, taint); });
  });
}

ReplicaRequests replicaRequestsOf(std::int32_t devices, double podCpu, double fitCpu,
                                  double podMemoryGiB, double fitMemoryGiB,
                                  std::string_view migProfile, bool shared) {
  const double cpu = std::max(podCpu, fitCpu);
  const double memory = std::max(podMemoryGiB, fitMemoryGiB);
  return {devices, static_cast<std::int64_t>(std::ceil(cpu * 1000 - 1e-6)),
          static_cast<std::int64_t>(std::ceil(memory * kBytesPerGiB - 1e-3)), migProfile, shared};
}

namespace {

// Replicas that fit on one node's room: each resource the replica asks for
// bounds them.
std::int64_t fitsIn(const NodeRoom& room, const ReplicaRequests& replica) {
  std::int64_t count = std::numeric_limits<std::int64_t>::max();
  const auto bound = [&count](std::int64_t free, std::int64_t asked) {
    if (asked > 0) {
      count = std::min(count, std::max<std::int64_t>(free, 0) / asked);
    }
  };
  if (replica.shared) {
    bound(room.sharedFree, replica.devices);
  } else if (replica.migProfile.empty()) {
    bound(room.devices, replica.devices);
  } else {
    bound(room.migFree(replica.migProfile), replica.devices);
  }
  bound(room.milliCpu, replica.milliCpu);
  bound(room.memoryBytes, replica.memoryBytes);
  bound(room.pods, 1);  // the kubelet admits no more pods than the node's allocatable pods
  return count;
}

// What the NodePool's nodes already hold against its limits.
std::map<std::string, std::int64_t> poolUsage(const ClusterState& cluster,
                                              const std::string& pool) {
  std::map<std::string, std::int64_t> usage;
  for (const auto& entry : cluster.nodes) {
    const NodeView* node = entry.node;
    if (node->nodePool == pool) {
      usage["cpu"] += node->milliCpu;
      usage["memory"] += node->memoryBytes * 1000;
      usage["nvidia.com/gpu"] += node->allocatable.gpus * 1000LL;
      usage["aws.amazon.com/neuron"] += node->allocatable.neuronDevices * 1000LL;
    }
  }
  return usage;
}

bool withinLimits(const NodePoolView& pool, std::map<std::string, std::int64_t> usage,
                  const InstanceType& instance) {
  usage["cpu"] += instance.vcpus * 1000LL;
  usage["memory"] += static_cast<std::int64_t>(instance.memoryGiB * 1073741824.0) * 1000;
  const bool nvidia = instance.tier == Tier::NVIDIA;
  usage[nvidia ? "nvidia.com/gpu" : "aws.amazon.com/neuron"] += instance.acceleratorCount * 1000LL;
  for (const auto& [resource, limit] : pool.limits) {
    if (const auto it = usage.find(resource); it != usage.end() && it->second > limit) {
      return false;
    }
  }
  return true;
}

void countNodePools(const ClusterState& cluster, const Catalog& catalog, const Policy& policy,
                    Capacity& capacity) {
  for (const auto& [name, pool] : cluster.nodePools) {
    const auto usage = poolUsage(cluster, name);
    for (std::size_t index = 0; index < catalog.instances.size(); ++index) {
      const auto& instance = catalog.instances[index];
      if (!tolerates(policy.tier(instance.tier).tolerations, pool->taints)) {
        continue;
      }
      const bool room = withinLimits(*pool, usage, instance);
      for (const auto type : {CapacityType::OnDemand, CapacityType::Spot}) {
        if (excludedBy(*pool, karpenterLabels(instance, catalog, type))) {
          continue;
        }
        auto& offer = capacity.offers[index][offerSlot(type)];
        if (cluster.offerings && cluster.offerings->unavailable(instance.type, type)) {
          offer.unavailable = true;
          continue;
        }
        (room ? offer.nodePools : offer.poolsAtLimit).push_back(name);
      }
    }
  }
}

CapacitySource resolve(const ClusterState& cluster, CapacitySource requested, std::string& why) {
  if (requested == CapacitySource::None) {
    why = "capacity.source is None: every type in the catalog is a candidate";
    return CapacitySource::None;
  }
  if (!cluster.nodesKnown) {
    why = "the nodes are not known (" + cluster.nodesProblem +
          "): every type in the catalog is a candidate";
    return CapacitySource::None;
  }
  if (requested == CapacitySource::Nodes) {
    why = "capacity.source is Nodes: the types of the nodes that exist";
    return CapacitySource::Nodes;
  }
  if (!cluster.nodePoolsInstalled) {
    why = std::string(requested == CapacitySource::Auto ? "Auto" : "NodePools") +
          ": Karpenter's NodePool CRD is not installed, so the types of the nodes that exist";
    return CapacitySource::Nodes;
  }
  why = std::string(requested == CapacitySource::Auto ? "Auto" : "NodePools") +
        ": the types of the nodes that exist and those the NodePools may launch";
  return CapacitySource::NodePools;
}

}  // namespace

int Offer::replicasWithRoom(const ReplicaRequests& replica, int enough,
                            const std::vector<const OwnPod*>& own) const {
  std::int64_t total = 0;
  for (const auto& node : room) {
    NodeRoom free = node;
    for (const OwnPod* pod : own) {
      if (pod->node == node.node) {
        if (pod->shared) {
          free.sharedFree += pod->devices;
        } else if (pod->migProfile.empty()) {
          free.devices += pod->devices;
        }
        for (auto& [profile, count] : free.mig) {
          count += profile == pod->migProfile ? pod->devices : 0;
        }
        free.milliCpu += pod->milliCpu;
        free.memoryBytes += pod->memoryBytes;
        ++free.pods;
      }
    }
    total += std::min<std::int64_t>(fitsIn(free, replica), enough);
    if (total >= enough) {
      return enough;
    }
  }
  return static_cast<int>(total);
}

void NodeUse::add(const PodView& pod) {
  devices += pod.devices;
  milliCpu += pod.milliCpu;
  memoryBytes += pod.memoryBytes;
  ++pods;
}

void NodeUse::subtract(const PodView& pod) {
  devices -= pod.devices;
  milliCpu -= pod.milliCpu;
  memoryBytes -= pod.memoryBytes;
  --pods;
}

bool Capacity::offered(int instance, CapacityType capacity) const {
  if (source == CapacitySource::None) {
    return true;
  }
  if (capacity == CapacityType::Mixed) {
    return offered(instance, CapacityType::OnDemand) && offered(instance, CapacityType::Spot);
  }
  const auto* found = offer(instance, capacity);
  return found && found->available();
}

std::int32_t NodeRoom::migFree(std::string_view profile) const {
  for (const auto& [name, count] : mig) {
    if (name == profile) {
      return count;
    }
  }
  return 0;
}

bool NodeRoom::advertises(std::string_view profile) const {
  return std::any_of(mig.begin(), mig.end(),
                     [&](const auto& entry) { return entry.first == profile; });
}

bool Capacity::offersSlice(int instance, CapacityType capacity, std::string_view profile) const {
  if (capacity == CapacityType::Mixed) {
    return offersSlice(instance, CapacityType::OnDemand, profile) &&
           offersSlice(instance, CapacityType::Spot, profile);
  }
  const Offer* found = source == CapacitySource::None ? nullptr : offer(instance, capacity);
  return found && std::any_of(found->room.begin(), found->room.end(),
                              [&](const NodeRoom& room) { return room.advertises(profile); });
}

bool Capacity::offersClaims(int instance, CapacityType capacity) const {
  const Offer* found = source == CapacitySource::None ? nullptr : offer(instance, capacity);
  return found && std::any_of(found->room.begin(), found->room.end(),
                              [](const NodeRoom& room) { return room.claims; });
}

std::int32_t Capacity::timeSlicesOf(int instance, CapacityType capacity) const {
  if (capacity == CapacityType::Mixed) {
    const auto onDemand = timeSlicesOf(instance, CapacityType::OnDemand);
    const auto spot = timeSlicesOf(instance, CapacityType::Spot);
    return onDemand > 0 && spot > 0 ? std::min(onDemand, spot) : 0;
  }
  const Offer* found = source == CapacitySource::None ? nullptr : offer(instance, capacity);
  std::int32_t fewest = 0;
  if (found) {
    for (const auto& room : found->room) {
      if (room.timeSlices > 1 && (fewest == 0 || room.timeSlices < fewest)) {
        fewest = room.timeSlices;
      }
    }
  }
  return fewest;
}

const Offer* Capacity::offer(int instance, CapacityType capacity) const {
  if (instance < 0 || static_cast<std::size_t>(instance) >= offers.size()) {
    return nullptr;
  }
  return &offers[static_cast<std::size_t>(instance)][offerSlot(capacity)];
}

std::string Capacity::reservationsOf(int instance) const {
  const Offer* reserved = offer(instance, CapacityType::Reserved);
  if (!reserved) {
    return "";
  }
  std::vector<std::string> names;
  for (const auto& node : reserved->room) {
    std::string name = node.reservation;  // "cr-0abc (Capacity Block)", or "a Capacity Block"
    if (node.reservationEnds && !name.empty()) {
      const std::string ends = "ends " + base::formatRfc3339(*node.reservationEnds);
      name = name.back() == ')' ? name.substr(0, name.size() - 1) + ", " + ends + ")"
                                : name + " (" + ends + ")";
    }
    names.push_back(std::move(name));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string text;
  for (const auto& name : names) {
    text += (text.empty() ? "" : ", ") + name;
  }
  return text;
}

Capacity capacityOf(const ClusterState& cluster, const Catalog& catalog, const Policy& policy,
                    CapacitySource requested) {
  Capacity capacity;
  capacity.source = resolve(cluster, requested, capacity.why);
  if (capacity.source == CapacitySource::None) {
    return capacity;
  }
  capacity.offers.resize(catalog.instances.size());
  // Each node as a recount puts it in: nothing to take out yet.
  capacity.counted_.reserve(cluster.nodes.size());
  for (const auto& node : cluster.nodes) {
    if (auto share = shareOf(node, catalog, policy)) {
      capacity.putIn(node.name, std::move(*share));
    }
  }
  if (capacity.source == CapacitySource::NodePools) {
    countNodePools(cluster, catalog, policy, capacity);
  }
  return capacity;
}

namespace {

std::optional<CapacityTypeLabel> detectCapacityLabel(const ClusterState& cluster) {
  bool karpenter = !cluster.nodes.empty() || !cluster.nodePools.empty();
  bool nodeGroup = !cluster.nodes.empty();
  for (const auto& entry : cluster.nodes) {
    const NodeView* node = entry.node;
    karpenter = karpenter && (node->labels & kKarpenterCapacityLabel) != 0;
    nodeGroup = nodeGroup && (node->labels & kNodeGroupCapacityLabel) != 0;
  }
  if (karpenter) {
    return CapacityTypeLabel{};
  }
  if (nodeGroup) {
    return CapacityTypeLabel{"eks.amazonaws.com/capacityType", "ON_DEMAND", "SPOT",
                             "CAPACITY_BLOCK"};
  }
  return std::nullopt;
}

// Any accelerated node in a placement group, else any under a network
// node: a group's pods are kept near each other only where nodes say
// where they are.
std::string detectNetworkDomain(const ClusterState& cluster) {
  std::uint16_t seen = 0;
  for (const auto& entry : cluster.nodes) {
    const NodeView* node = entry.node;
    if (node->allocatable.gpus > 0 || node->allocatable.neuronDevices > 0) {
      seen |= node->labels;
    }
  }
  if ((seen & kPlacementGroupLabel) != 0) {
    return kPlacementGroupKey;
  }
  return (seen & kNetworkNodeLabel) != 0 ? kNetworkNodeKey : "";
}

SchemeChoice detectScheme(const ClusterState& cluster);

}  // namespace

SchemeChoice detectLabelScheme(const ClusterState& cluster) {
  auto choice = detectScheme(cluster);
  choice.capacityLabel = detectCapacityLabel(cluster);
  choice.networkDomainKey = detectNetworkDomain(cluster);
  return choice;
}

namespace {

SchemeChoice detectScheme(const ClusterState& cluster) {
  int accelerated = 0;
  int karpenter = 0;
  int autoMode = 0;
  int product = 0;
  int instanceType = 0;
  for (const auto& entry : cluster.nodes) {
    const NodeView* node = entry.node;
    if (node->allocatable.gpus == 0 && node->allocatable.neuronDevices == 0) {
      continue;
    }
    ++accelerated;
    karpenter += (node->labels & (kKarpenterGpuLabels | kKarpenterNeuronLabels)) != 0;
    autoMode += (node->labels & kAutoModeGpuLabels) != 0;
    product += (node->labels & kGpuProductLabel) != 0;
    instanceType += (node->labels & kInstanceTypeLabel) != 0;
  }
  if (accelerated == 0) {
    if (cluster.nodePoolsInstalled && !cluster.nodePools.empty()) {
      return {LabelScheme::Karpenter, false,
              "no accelerated node yet; NodePools will launch them with Karpenter's labels",
              std::nullopt};
    }
    return {LabelScheme::InstanceType, false,
            "no accelerated node; every node carries node.kubernetes.io/instance-type",
            std::nullopt};
  }
  if (karpenter == accelerated) {
    return {LabelScheme::Karpenter, false,
            "every accelerated node carries karpenter.k8s.aws/instance-* labels", std::nullopt};
  }
  if (autoMode == accelerated) {
    return {LabelScheme::Karpenter, true,
            "every accelerated node carries EKS Auto Mode's eks.amazonaws.com/instance-* labels",
            std::nullopt};
  }
  if (instanceType == 0 && product == accelerated) {
    return {LabelScheme::GPUFeatureDiscovery, false,
            "accelerated nodes carry nvidia.com/gpu.product and no instance-type label",
            std::nullopt};
  }
  return {LabelScheme::InstanceType, false,
          std::to_string(instanceType) + " of " + std::to_string(accelerated) +
              " accelerated nodes carry node.kubernetes.io/instance-type, the one label they "
              "share",
          std::nullopt};
}

}  // namespace

}  // namespace gpuplacement::core
