#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/catalog/types.h"
#include "core/kinds/pod_scheduling.h"
#include "core/kinds/target_kind.h"

// What the cluster has and can get, as far as placement cares: nodes (what
// they are, what they offer, whether pods may land on them), the devices
// the pods bound to them use, and Karpenter NodePools (what they may
// launch). Projections of the API objects, read once when they arrive, and
// pure functions over them.
namespace gpuplacement::core {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;

  bool operator==(const Taint&) const = default;
};

// Devices, as the device plugins advertise them.
struct Devices {
  std::int32_t gpus = 0;           // nvidia.com/gpu
  std::int32_t neuronDevices = 0;  // aws.amazon.com/neuron (or neurondevice)
  std::int32_t neuronCores = 0;    // aws.amazon.com/neuroncore
  // Replicas of time-sliced GPUs, as the device plugin renames them
  // (sharing.timeSlicing.renameByDefault): nvidia.com/gpu.shared.
  std::int32_t sharedGpus = 0;
  // MIG instances by profile (nvidia.com/mig-1g.10gb, the device plugin's
  // mixed strategy), sorted by profile; empty on most nodes and pods.
  std::vector<std::pair<std::string, std::int32_t>> mig{};

  std::int32_t migOf(std::string_view profile) const;
  bool operator==(const Devices&) const = default;
  Devices& operator+=(const Devices& other);
  Devices& operator-=(const Devices& other);
};

// The well-known label of a node's instance type (kubelet, the AWS cloud
// controller manager, Karpenter).
inline constexpr const char* kInstanceTypeKey = "node.kubernetes.io/instance-type";

// The node-selector labels a node carries, by the scheme they serve.
enum NodeLabel : std::uint16_t {
  kInstanceTypeLabel = 1,        // node.kubernetes.io/instance-type
  kKarpenterGpuLabels = 2,       // karpenter.k8s.aws/instance-gpu-name and -count
  kKarpenterNeuronLabels = 4,    // karpenter.k8s.aws/instance-accelerator-name and -count
  kAutoModeGpuLabels = 8,        // eks.amazonaws.com/instance-gpu-name and -count
  kGpuProductLabel = 16,         // nvidia.com/gpu.product (GPU Feature Discovery)
  kKarpenterCapacityLabel = 32,  // karpenter.sh/capacity-type (Karpenter, Auto Mode)
  kNodeGroupCapacityLabel = 64,  // eks.amazonaws.com/capacityType (managed node groups)
  kPlacementGroupLabel = 128,    // karpenter.k8s.aws/placement-group-id
  kNetworkNodeLabel = 256,       // topology.k8s.aws/network-node-layer-3
};

// The node labels of the network domains closer than a zone, nearest
// first: the EC2 placement group Karpenter launched a node into (its
// EC2NodeClass's placementGroupSelector), and the network node under the
// instance in EC2's instance topology, which EKS labels nodes of the
// types that have one with (p4d, p5, trn1, ...).
inline constexpr const char* kPlacementGroupKey = "karpenter.k8s.aws/placement-group-id";
inline constexpr const char* kNetworkNodeKey = "topology.k8s.aws/network-node-layer-3";

// One node, as much as placement needs.
struct NodeView {
  std::string instanceType;
  CapacityType capacityType = CapacityType::OnDemand;  // OnDemand, Spot or Reserved
  // Reserved: the reservation, "cr-0abc (Capacity Block)", as far as the
  // labels say (karpenter.k8s.aws/capacity-reservation-id, -type and
  // -interruptible, or Auto Mode's eks.amazonaws.com/ twins).
  std::string reservation;
  std::string reservationId;   // capacity-reservation-id; empty: not labelled
  bool capacityBlock = false;  // the reservation is a Capacity Block, which ends
  bool interruptible = false;  // its owner may take the capacity back, as spot's is
  std::string nodePool;        // karpenter.sh/nodepool, when Karpenter made it
  std::string region;          // topology.kubernetes.io/region
  std::uint16_t labels = 0;    // NodeLabel bits
  std::vector<Taint> taints;   // NoSchedule and NoExecute only
  Devices allocatable;
  std::int64_t milliCpu = 0;
  std::int64_t memoryBytes = 0;
  std::int32_t pods = 0;  // allocatable pods (EKS: the ENI limit); 0: not stated
  // The ways the device plugin time-slices each GPU (GPU Feature
  // Discovery's nvidia.com/gpu.replicas); 0: not time-sliced, or not said.
  std::int32_t gpuReplicas = 0;
  bool schedulable = true;  // Ready and not cordoned

  bool operator==(const NodeView&) const = default;
};

NodeView nodeFromJson(const nlohmann::json& object);

// The capacity reservations an EC2NodeClass (karpenter.k8s.aws/v1) lists
// in its status, with when each ends where it does (Karpenter's AWS
// provider copies EC2's end date; a Capacity Block always has one).
struct ReservationEnds {
  std::vector<std::pair<std::string, Timestamp>> ends;  // reservation id -> end

  bool operator==(const ReservationEnds&) const = default;
};
ReservationEnds reservationEndsFromJson(const nlohmann::json& ec2NodeClass);

// A pod, as much as capacity needs: the devices it holds on its node, or,
// while the scheduler cannot place it, why and since when.
struct PodView {
  std::string node;  // spec.nodeName; empty while pending
  Devices devices;   // summed over its containers
  // What the scheduler reserves for it: its containers' requests summed,
  // or its largest init container's when that is more.
  std::int64_t milliCpu = 0;
  std::int64_t memoryBytes = 0;
  bool finished = false;  // Succeeded or Failed: holds nothing
  // Unless finished: the target it belongs to (a ReplicaSet's Deployment,
  // a StatefulSet, a Job), whose decisions count what it holds as theirs.
  TargetKind ownerKind = TargetKind::Deployment;
  std::string owner;
  std::string unschedulable;  // PodScheduled=False, reason Unschedulable: the message
  std::string unschedulableSince;
  // Set only while the pod waits behind the operator's scheduling gate
  // (core/kinds/pod_scheduling.h): the rest of the cluster's pods pay 16 bytes.
  std::shared_ptr<const GatedPod> gated;

  bool operator==(const PodView& other) const;
  bool holdsDevices() const { return !node.empty() && !finished; }
};

PodView podFromJson(const nlohmann::json& object);

// One of a NodePool's requirements.
struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;

  bool operator==(const NodeSelectorRequirement&) const = default;
};

// A list of requirements as NodePools and NodeOverlays write them; what
// does not read is left empty, for the CRD's validation has refused it.
std::vector<NodeSelectorRequirement> requirementsFromJson(const nlohmann::json& list);

// A Karpenter NodePool (karpenter.sh/v1): what it may launch.
struct NodePoolView {
  std::vector<NodeSelectorRequirement> requirements;
  std::map<std::string, std::string> labels;  // spec.template.metadata.labels
  std::vector<Taint> taints;
  std::map<std::string, std::int64_t> limits;  // spec.limits, in thousandths

  bool operator==(const NodePoolView&) const = default;
};

NodePoolView nodePoolFromJson(const nlohmann::json& object);

}  // namespace gpuplacement::core
