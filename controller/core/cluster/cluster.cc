#include "core/cluster/cluster.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "base/json_access.h"
#include "base/time_format.h"
#include "core/catalog/quantity.h"
#include "core/cluster/region.h"
#include "core/kinds/kind_adapter.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// A whole count of devices or CPUs from a quantity ("8", "8000m").
std::int64_t milliOf(const json& value) {
  if (value.is_number_integer()) {
    return value.get<std::int64_t>() * 1000;
  }
  auto parsed = parseResourceMilli(base::stringOf(value));
  return parsed ? *parsed : 0;
}

std::int32_t countOf(const json& value) {
  return static_cast<std::int32_t>(std::min<std::int64_t>(milliOf(value) / 1000, 1 << 20));
}

Devices devicesOf(const json& resources) {
  Devices devices;
  devices.gpus = countOf(memberOf(resources, "nvidia.com/gpu"));
  devices.neuronDevices = std::max(countOf(memberOf(resources, "aws.amazon.com/neuron")),
                                   countOf(memberOf(resources, "aws.amazon.com/neurondevice")));
  devices.neuronCores = countOf(memberOf(resources, "aws.amazon.com/neuroncore"));
  devices.sharedGpus = countOf(memberOf(resources, "nvidia.com/gpu.shared"));
  if (resources.is_object()) {
    for (const auto& [name, value] : resources.items()) {
      const auto profile = migProfileOf(name);
      const auto count = profile.empty() ? 0 : countOf(value);
      if (count > 0) {
        devices.mig.emplace_back(std::string(profile), count);  // items() is in key order
      }
    }
  }
  return devices;
}

std::vector<Taint> taintsOf(const json& list) {
  std::vector<Taint> taints;
  if (!list.is_array()) {
    return taints;
  }
  for (const auto& item : list) {
    const auto effect = stringMember(item, "effect");
    if (effect == "NoSchedule" || effect == "NoExecute") {  // PreferNoSchedule only prefers
      taints.push_back({stringMember(item, "key"), stringMember(item, "value"), effect});
    }
  }
  return taints;
}

// Karpenter's "reserved" (its ReservedCapacity feature), and a managed
// node group's on a Capacity Block.
CapacityType capacityTypeOf(const json& labels) {
  for (const char* key : {"karpenter.sh/capacity-type", "eks.amazonaws.com/capacityType"}) {
    const auto value = stringMember(labels, key);
    if (value == "spot" || value == "SPOT") {
      return CapacityType::Spot;
    }
    if (value == "reserved" || value == "CAPACITY_BLOCK") {
      return CapacityType::Reserved;
    }
    if (!value.empty()) {
      return CapacityType::OnDemand;
    }
  }
  return CapacityType::OnDemand;
}

// The reservation a reserved node runs in, as its labels say. Karpenter's
// AWS provider writes karpenter.k8s.aws/capacity-reservation-id, -type
// and -interruptible; EKS Auto Mode the same names and values under
// eks.amazonaws.com/ (aws/karpenter-provider-aws pkg/apis/v1/labels.go;
// the EKS user guide, auto-odcr).
void readReservation(const json& labels, NodeView& node) {
  if (node.capacityType != CapacityType::Reserved) {
    return;
  }
  std::string id;
  std::string type;
  std::string interruptible;
  for (const char* form :
       {"karpenter.k8s.aws/capacity-reservation-", "eks.amazonaws.com/capacity-reservation-"}) {
    const std::string prefix = form;
    id = stringMember(labels, (prefix + "id").c_str());
    type = stringMember(labels, (prefix + "type").c_str());
    interruptible = stringMember(labels, (prefix + "interruptible").c_str());
    if (!id.empty() || !type.empty()) {
      break;
    }
  }
  node.capacityBlock = type == "capacity-block" ||
                       stringMember(labels, "eks.amazonaws.com/capacityType") == "CAPACITY_BLOCK";
  node.interruptible = interruptible == "true";
  const std::string kind =
      std::string(node.capacityBlock ? "Capacity Block" : "On-Demand Capacity Reservation") +
      (node.interruptible ? ", interruptible" : "");
  node.reservationId = id;
  node.reservation = id.empty() ? "a " + kind : id + " (" + kind + ")";
}

std::uint16_t labelBitsOf(const json& labels) {
  const auto has = [&](const char* key) { return memberOf(labels, key).is_string(); };
  std::uint16_t bits = 0;
  bits |= has(kInstanceTypeKey) ? kInstanceTypeLabel : 0;
  bits |= has("karpenter.k8s.aws/instance-gpu-name") ? kKarpenterGpuLabels : 0;
  bits |= has("karpenter.k8s.aws/instance-accelerator-name") ? kKarpenterNeuronLabels : 0;
  bits |= has("eks.amazonaws.com/instance-gpu-name") ? kAutoModeGpuLabels : 0;
  bits |= has("nvidia.com/gpu.product") ? kGpuProductLabel : 0;
  bits |= has("karpenter.sh/capacity-type") ? kKarpenterCapacityLabel : 0;
  bits |= has("eks.amazonaws.com/capacityType") ? kNodeGroupCapacityLabel : 0;
  bits |= has(kPlacementGroupKey) ? kPlacementGroupLabel : 0;
  bits |= has(kNetworkNodeKey) ? kNetworkNodeLabel : 0;
  return bits;
}

bool readyOf(const json& status) {
  const auto& conditions = memberOf(status, "conditions");
  if (!conditions.is_array()) {
    return false;
  }
  for (const auto& condition : conditions) {
    if (stringMember(condition, "type") == "Ready") {
      return stringMember(condition, "status") == "True";
    }
  }
  return false;
}

}  // namespace

namespace {

// Adds `sign` times `from`'s MIG instances to `into`, keeping it sorted and
// dropping profiles that come to nothing.
void addMig(std::vector<std::pair<std::string, std::int32_t>>& into,
            const std::vector<std::pair<std::string, std::int32_t>>& from, std::int32_t sign) {
  for (const auto& [profile, count] : from) {
    auto at = std::lower_bound(
        into.begin(), into.end(), profile,
        [](const auto& entry, const std::string& key) { return entry.first < key; });
    if (at == into.end() || at->first != profile) {
      at = into.emplace(at, profile, 0);
    }
    at->second += sign * count;
    if (at->second == 0) {
      into.erase(at);
    }
  }
}

}  // namespace

std::int32_t Devices::migOf(std::string_view profile) const {
  for (const auto& [name, count] : mig) {
    if (name == profile) {
      return count;
    }
  }
  return 0;
}

Devices& Devices::operator+=(const Devices& other) {
  gpus += other.gpus;
  neuronDevices += other.neuronDevices;
  neuronCores += other.neuronCores;
  sharedGpus += other.sharedGpus;
  addMig(mig, other.mig, 1);
  return *this;
}

Devices& Devices::operator-=(const Devices& other) {
  gpus -= other.gpus;
  neuronDevices -= other.neuronDevices;
  neuronCores -= other.neuronCores;
  sharedGpus -= other.sharedGpus;
  addMig(mig, other.mig, -1);
  return *this;
}

ReservationEnds reservationEndsFromJson(const json& ec2NodeClass) {
  ReservationEnds reservations;
  const auto& listed = memberOf(memberOf(ec2NodeClass, "status"), "capacityReservations");
  if (!listed.is_array()) {
    return reservations;
  }
  for (const auto& reservation : listed) {
    const auto id = stringMember(reservation, "id");
    const auto end = base::parseRfc3339(stringMember(reservation, "endTime"));
    if (!id.empty() && end) {
      reservations.ends.emplace_back(id, *end);
    }
  }
  return reservations;
}

NodeView nodeFromJson(const json& object) {
  NodeView node;
  const auto& labels = memberOf(memberOf(object, "metadata"), "labels");
  node.instanceType = stringMember(labels, kInstanceTypeKey);
  node.capacityType = capacityTypeOf(labels);
  readReservation(labels, node);
  node.nodePool = stringMember(labels, "karpenter.sh/nodepool");
  node.region = stringMember(labels, kRegionLabel);
  node.labels = labelBitsOf(labels);
  if (const auto replicas = std::atoi(stringMember(labels, "nvidia.com/gpu.replicas").c_str());
      replicas > 1) {
    node.gpuReplicas = std::min(replicas, 1024);
  }
  const auto& spec = memberOf(object, "spec");
  node.taints = taintsOf(memberOf(spec, "taints"));
  const auto& status = memberOf(object, "status");
  const auto& allocatable = memberOf(status, "allocatable");
  node.allocatable = devicesOf(allocatable);
  node.milliCpu = milliOf(memberOf(allocatable, "cpu"));
  node.memoryBytes = milliOf(memberOf(allocatable, "memory")) / 1000;
  node.pods = static_cast<std::int32_t>(
      std::clamp<std::int64_t>(milliOf(memberOf(allocatable, "pods")) / 1000, 0, 1'000'000));
  const auto& cordoned = memberOf(spec, "unschedulable");
  node.schedulable = readyOf(status) && !(cordoned.is_boolean() && cordoned.get<bool>());
  return node;
}

namespace {

// Requests or limits of every container (the device plugins need both
// equal; the larger counts if someone set them apart).
Devices podDevices(const json& spec) {
  Devices total;
  const auto& containers = memberOf(spec, "containers");
  if (!containers.is_array()) {
    return total;
  }
  for (const auto& container : containers) {
    const auto& resources = memberOf(container, "resources");
    const auto limits = devicesOf(memberOf(resources, "limits"));
    const auto requests = devicesOf(memberOf(resources, "requests"));
    total += Devices{std::max(limits.gpus, requests.gpus),
                     std::max(limits.neuronDevices, requests.neuronDevices),
                     std::max(limits.neuronCores, requests.neuronCores),
                     std::max(limits.sharedGpus, requests.sharedGpus),
                     limits.mig.empty() ? requests.mig : limits.mig};
  }
  return total;
}

// A container's request of a resource: a limit alone stands for it, as the
// API server defaults the request to the limit.
std::int64_t requestOf(const json& resources, const char* name) {
  const auto& requested = memberOf(memberOf(resources, "requests"), name);
  return milliOf(requested.is_null() ? memberOf(memberOf(resources, "limits"), name) : requested);
}

// The CPU (thousandths) and memory (thousandths of a byte) the scheduler
// reserves for the pod.
void readRequests(const json& spec, PodView& pod) {
  std::int64_t cpu = 0;
  std::int64_t memory = 0;
  if (const auto& containers = memberOf(spec, "containers"); containers.is_array()) {
    for (const auto& container : containers) {
      const auto& resources = memberOf(container, "resources");
      cpu += requestOf(resources, "cpu");
      memory += requestOf(resources, "memory");
    }
  }
  if (const auto& init = memberOf(spec, "initContainers"); init.is_array()) {
    for (const auto& container : init) {
      const auto& resources = memberOf(container, "resources");
      cpu = std::max(cpu, requestOf(resources, "cpu"));
      memory = std::max(memory, requestOf(resources, "memory"));
    }
  }
  pod.milliCpu = cpu;
  pod.memoryBytes = memory / 1000;
}

void readUnschedulable(const json& object, PodView& pod) {
  const auto& conditions = memberOf(memberOf(object, "status"), "conditions");
  if (!conditions.is_array()) {
    return;
  }
  for (const auto& condition : conditions) {
    if (stringMember(condition, "type") == "PodScheduled" &&
        stringMember(condition, "status") == "False" &&
        stringMember(condition, "reason") == "Unschedulable") {
      pod.unschedulable = stringMember(condition, "message").substr(0, 512);
      pod.unschedulableSince = stringMember(condition, "lastTransitionTime");
    }
  }
}

// The target the pod belongs to, as its kind's adapter knows it. Kinds
// later in the table make their pods through earlier ones (a
// LeaderWorkerSet's are a StatefulSet's): the last that claims it wins.
void readOwner(const json& object, PodView& pod) {
  for (const auto kind : kTargetKinds) {
    if (auto owner = adapterOf(kind).ownerOf(object)) {
      pod.ownerKind = kind;
      pod.owner = std::move(owner->target);
    }
  }
}

}  // namespace

bool PodView::operator==(const PodView& other) const {
  return node == other.node && devices == other.devices && milliCpu == other.milliCpu &&
         memoryBytes == other.memoryBytes && finished == other.finished &&
         ownerKind == other.ownerKind && owner == other.owner &&
         unschedulable == other.unschedulable && unschedulableSince == other.unschedulableSince &&
         (gated == other.gated || (gated && other.gated && *gated == *other.gated));
}

PodView podFromJson(const json& object) {
  PodView pod;
  const auto& spec = memberOf(object, "spec");
  pod.node = stringMember(spec, "nodeName");
  pod.devices = podDevices(spec);
  readRequests(spec, pod);
  const auto phase = stringMember(memberOf(object, "status"), "phase");
  pod.finished = phase == "Succeeded" || phase == "Failed";
  if (!pod.finished) {
    readOwner(object, pod);
  }
  if (pod.node.empty() && !pod.finished) {
    readUnschedulable(object, pod);
    if (auto gated = gatedPodFromJson(object)) {
      pod.gated = std::make_shared<const GatedPod>(std::move(*gated));
    }
  }
  return pod;
}

std::vector<NodeSelectorRequirement> requirementsFromJson(const json& list) {
  std::vector<NodeSelectorRequirement> requirements;
  if (!list.is_array()) {
    return requirements;
  }
  for (const auto& item : list) {
    NodeSelectorRequirement requirement{
        stringMember(item, "key"), stringMember(item, "operator"), {}};
    if (const auto& values = memberOf(item, "values"); values.is_array()) {
      for (const auto& value : values) {
        requirement.values.push_back(base::stringOf(value));
      }
    }
    requirements.push_back(std::move(requirement));
  }
  return requirements;
}

NodePoolView nodePoolFromJson(const json& object) {
  NodePoolView pool;
  const auto& spec = memberOf(object, "spec");
  const auto& templ = memberOf(spec, "template");
  const auto& labels = memberOf(memberOf(templ, "metadata"), "labels");
  if (labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      pool.labels[key] = base::stringOf(value);
    }
  }
  const auto& nodeSpec = memberOf(templ, "spec");
  pool.taints = taintsOf(memberOf(nodeSpec, "taints"));
  pool.requirements = requirementsFromJson(memberOf(nodeSpec, "requirements"));
  if (const auto& limits = memberOf(spec, "limits"); limits.is_object()) {
    for (const auto& [name, value] : limits.items()) {
      pool.limits[name] = milliOf(value);
    }
  }
  return pool;
}

}  // namespace gpuplacement::core
