#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/catalog/catalog.h"
#include "core/catalog/offering_prices.h"
#include "core/cluster/cluster.h"
#include "core/intent/policy.h"

// Which instance types the cluster has or can get, from its nodes and
// NodePools: the candidates a decision may choose from, the devices idle on
// nodes already paid for, and the node-label scheme the nodes carry.
namespace gpuplacement::core {

// The labels Karpenter's AWS provider gives a node of this type and
// capacity type: what NodePool requirements select on.
std::map<std::string, std::string> karpenterLabels(const InstanceType& instance,
                                                   const Catalog& catalog, CapacityType capacity);

// Whether a label's value (null: the label is not set) meets a
// requirement: In, NotIn, Exists, DoesNotExist, and Gt, Lt, Gte, Lte on
// integers. An operator Karpenter does not know selects nothing.
bool satisfies(const NodeSelectorRequirement& requirement, const std::string* value);

// Why the NodePool may not launch a node with these labels (the first
// requirement that excludes it), or nullopt when it may.
std::optional<std::string> excludedBy(const NodePoolView& pool,
                                      const std::map<std::string, std::string>& labels);

// Whether pods with these tolerations may land where these taints are.
bool tolerates(const std::vector<Toleration>& tolerations, const std::vector<Taint>& taints);

// What the pods bound to one node hold of it, summed as pods come and go.
struct NodeUse {
  Devices devices;
  std::int64_t milliCpu = 0;
  std::int64_t memoryBytes = 0;
  std::int32_t pods = 0;

  void add(const PodView& pod);
  void subtract(const PodView& pod);
  bool operator==(const NodeUse&) const = default;
};

// The cluster as the caches hold it: the input of capacityOf.
struct ClusterState {
  bool nodesKnown = false;          // listed; false when not allowed to, or not yet
  std::string nodesProblem;         // why not, when known
  bool nodePoolsInstalled = false;  // Karpenter's NodePool CRD is served
  std::string regionFlag;           // the operator's --region: wins over the nodes' labels
  struct Node {
    std::string name;
    const NodeView* node = nullptr;
    Devices used;  // by the pods bound to it
    std::int64_t usedMilliCpu = 0;
    std::int64_t usedMemoryBytes = 0;
    std::int32_t usedPods = 0;  // every pod bound to it and not finished
    // Reserved: when its reservation ends (Karpenter's EC2NodeClass status);
    // nullopt: not known.
    std::optional<Timestamp> reservationEnds{};
    // Devices DRA drivers publish for it in ResourceSlices, and those
    // ResourceClaims hold (core/cluster/dra.h).
    Devices dra{};
    Devices draUsed{};
  };
  std::vector<Node> nodes;
  std::vector<std::pair<std::string, const NodePoolView*>> nodePools;
  // Karpenter's offerings, where its prices are read: which it will not
  // launch now. Null without them.
  std::shared_ptr<const OfferingPrices> offerings;
  // How they were read; nullopt when the operator does not read them.
  std::optional<KarpenterPricesCondition> karpenterPrices;
};

// What one node has free for another pod: devices of the tier's kind, CPU
// and memory, after the requests of the pods bound to it.
struct NodeRoom {
  std::string node;
  std::int32_t devices = 0;
  std::int64_t milliCpu = 0;
  std::int64_t memoryBytes = 0;
  std::int64_t pods = kUnboundedPods;          // more pods the node admits
  std::string reservation{};                   // reserved nodes: NodeView::reservation
  bool capacityBlock = false;                  // NodeView::capacityBlock
  bool interruptible = false;                  // NodeView::interruptible
  std::optional<Timestamp> reservationEnds{};  // ClusterState::Node::reservationEnds
  // MIG instances free, by profile, for every profile the node advertises
  // (0 when all are taken); sorted by profile. Empty on most nodes.
  std::vector<std::pair<std::string, std::int32_t>> mig{};
  // A GPU the device plugin time-slices: its ways (0: not time-sliced, or
  // not renamed nvidia.com/gpu.shared) and the replicas free.
  std::int32_t timeSlices = 0;
  std::int32_t sharedFree = 0;
  bool kept = false;  // some pod holds devices here (GPUs, Neuron devices or MIG instances)
  // Its devices of the tier come through DRA (ResourceSlices), asked for
  // by a ResourceClaim rather than an extended resource.
  bool claims = false;

  std::int32_t migFree(std::string_view profile) const;
  bool advertises(std::string_view profile) const;
  static constexpr std::int64_t kUnboundedPods = std::int64_t{1} << 40;  // the node states none
};

// A pod of the workload being decided, bound to a node: what it holds
// there is room its new pods may take once a rollout replaces it.
struct OwnPod {
  std::string node;
  std::string instanceType;  // of the node
  CapacityType capacity = CapacityType::OnDemand;
  std::int32_t devices = 0;  // GPUs or Neuron devices; MIG instances with migProfile
  std::int64_t milliCpu = 0;
  std::int64_t memoryBytes = 0;
  std::string migProfile{};  // the MIG profile it holds instances of; empty: whole devices
  bool shared = false;       // it holds replicas of a time-sliced GPU (nvidia.com/gpu.shared)

  bool operator==(const OwnPod&) const = default;
};

// What one replica asks of a node.
struct ReplicaRequests {
  std::int32_t devices = 0;  // MIG instances when migProfile is set; replicas when shared
  std::int64_t milliCpu = 0;
  std::int64_t memoryBytes = 0;
  std::string_view migProfile{};
  bool shared = false;  // replicas of a time-sliced GPU
};

// A replica's requests from the pod's own CPU and memory and the fit's
// (the larger of each), rounded up as the scheduler counts them: whole
// millicores and bytes.
ReplicaRequests replicaRequestsOf(std::int32_t devices, double podCpu, double fitCpu,
                                  double podMemoryGiB, double fitMemoryGiB,
                                  std::string_view migProfile, bool shared);

// The offer slot of a capacity type: [0] on-demand (Mixed's too), [1] spot,
// [2] reserved.
inline constexpr std::size_t kOfferSlots = 3;
inline std::size_t offerSlot(CapacityType capacity) {
  return capacity == CapacityType::Spot ? 1 : capacity == CapacityType::Reserved ? 2 : 0;
}

// Devices of the kind the tier places on (none for CPU).
inline std::int32_t tierDevices(const Devices& devices, Tier tier) {
  return tier == Tier::NVIDIA ? devices.gpus : tier == Tier::CPU ? 0 : devices.neuronDevices;
}

// What the cluster offers of one instance type at one capacity type.
struct Offer {
  std::int32_t nodes = 0;        // schedulable, tolerated nodes of the type
  std::int32_t largestIdle = 0;  // the most of the tier's devices free on one of them
  // The tier's devices free on each node where pods hold some (never an
  // empty node: that one costs what a new one does). In no order.
  std::vector<std::int32_t> idle;
  std::int32_t used = 0;               // the tier's devices pods hold on these nodes
  std::vector<std::string> nodePools;  // NodePools that may launch another
  // NodePools that would launch one but are at their limits.
  std::vector<std::string> poolsAtLimit;
  // Karpenter marks every zone's offering unavailable (after an
  // insufficient-capacity error): its NodePools launch none while it does.
  bool unavailable = false;
  std::vector<NodeRoom> room;  // each of the nodes, in no order, for counting replicas that fit

  bool available() const { return nodes > 0 || !nodePools.empty(); }
  // The nodes there are, and no NodePool that may launch another: what
  // fits on them is all there is.
  bool nodesOnly() const { return nodePools.empty(); }
  // Replicas that fit on the nodes there are, counted up to `enough`,
  // with the room `own` pods (on nodes of this offer) hold given back.
  int replicasWithRoom(const ReplicaRequests& replica, int enough,
                       const std::vector<const OwnPod*>& own = {}) const;
};

// One node's part in the offers: the offer it counts in, the room it has
// and the tier's devices its pods hold.
struct NodeShare {
  int instance = -1;  // catalog index
  std::size_t slot = 0;
  NodeRoom room;
  std::int32_t used = 0;
};

// Nullopt when the node counts in no offer: a type the catalog lacks, not
// schedulable, or tainted where the tier's placements do not tolerate.
std::optional<NodeShare> shareOf(const ClusterState::Node& node, const Catalog& catalog,
                                 const Policy& policy);

// Where candidates come from, resolved, with the offers per instance type
// (indexed like the catalog's instances; [0] on-demand, [1] spot, [2]
// reserved: the nodes there are, never a NodePool's).
struct Capacity {
  CapacitySource source = CapacitySource::None;  // Nodes, NodePools or None
  std::string why;                               // how Auto was resolved, or why None was forced
  std::vector<std::array<Offer, kOfferSlots>> offers;

  // True under None (every type may be chosen). Mixed: both are offered.
  bool offered(int instance, CapacityType capacity) const;
  // One capacity type's offer (Mixed: the on-demand one).
  const Offer* offer(int instance, CapacityType capacity) const;
  // Whether a node of the type at `capacity` advertises MIG `profile`
  // (Mixed: on both sides). False under None: no node says how its GPUs
  // are cut.
  bool offersSlice(int instance, CapacityType capacity, std::string_view profile) const;
  // The fewest ways a node of the type at `capacity` time-slices its GPU,
  // over the nodes that advertise nvidia.com/gpu.shared (Mixed: over both
  // sides); 0: none does.
  std::int32_t timeSlicesOf(int instance, CapacityType capacity) const;
  // Whether the type's nodes at `capacity` offer their devices through DRA
  // (any of them does: a driver runs on every node of a type or none).
  bool offersClaims(int instance, CapacityType capacity) const;
  // The reservations of the type's reserved nodes, each once, in order:
  // "cr-0abc (Capacity Block, ends 2026-12-05T11:30:00Z), cr-0def (On-Demand
  // Capacity Reservation)".
  std::string reservationsOf(int instance) const;

  // The node's share counted again: its old one taken out, the new one
  // (nullopt: none) put in, at a cost that does not grow with the cluster.
  // capacityOf counts every node this way, so after the pods on some nodes
  // changed (and no node or NodePool did), recounting those nodes gives
  // what capacityOf over the whole cluster would, but for the order of
  // `room` and `idle`. Nothing under source None.
  void recount(const std::string& node, std::optional<NodeShare> share);

 private:
  struct Counted {
    int instance = -1;
    std::size_t slot = 0;
    std::size_t at = 0;  // in the offer's room
    std::int32_t used = 0;
  };
  friend Capacity capacityOf(const ClusterState&, const Catalog&, const Policy&, CapacitySource);
  void takeOut(const std::string& node);
  void putIn(const std::string& node, NodeShare share);
  std::unordered_map<std::string, Counted> counted_;  // node name -> where it counts
};

Capacity capacityOf(const ClusterState& cluster, const Catalog& catalog, const Policy& policy,
                    CapacitySource requested);

// The node-label scheme the cluster's nodes and NodePools carry, and why:
// Karpenter when NodePools or Karpenter's instance labels are there (Auto
// Mode's own labels count too), else InstanceType, which every EKS node
// carries. GPU Feature Discovery only when GPU nodes carry its product
// label and no instance-type label, since time-slicing renames it.
//
// The capacity-type label likewise: karpenter.sh/capacity-type when every
// node carries it, eks.amazonaws.com/capacityType (ON_DEMAND, SPOT) when
// every node carries that, none when they disagree: a selector on a key
// some nodes lack would keep pods off them.
struct SchemeChoice {
  LabelScheme scheme = LabelScheme::InstanceType;
  bool autoMode = false;  // Karpenter's labels under eks.amazonaws.com/
  std::string why;
  std::optional<CapacityTypeLabel> capacityLabel;  // nullopt: select no capacity type
  // The nearest network domain the accelerated nodes are labelled with
  // (kPlacementGroupKey, else kNetworkNodeKey); empty: none is.
  std::string networkDomainKey{};
};

SchemeChoice detectLabelScheme(const ClusterState& cluster);

}  // namespace gpuplacement::core
