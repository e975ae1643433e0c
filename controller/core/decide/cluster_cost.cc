#include "core/decide/cluster_cost.h"

#include <algorithm>

namespace gpuplacement::core {

NodeLabels nodeLabelsFor(const Policy& policy, const SchemeChoice* detected) {
  NodeLabels labels;
  labels.capacityLabel = policy.capacityTypeLabel;
  if (detected) {
    labels.networkDomainKey = detected->networkDomainKey;
  }
  if (policy.labelScheme != LabelScheme::Auto) {
    labels.scheme = policy.labelScheme;
    return labels;
  }
  if (!detected) {
    labels.why = "no cluster to look at: InstanceType, which every EKS node carries";
    return labels;
  }
  labels.scheme = detected->scheme;
  labels.why = detected->why;
  if (!policy.capacityTypeLabelSet) {
    // Only a key every node carries: a selector on a key some nodes lack
    // keeps pods off them.
    labels.capacityLabel = detected->capacityLabel.value_or(CapacityTypeLabel{"", "", ""});
  }
  return labels;
}

ClusterView clusterViewOf(const ClusterState& cluster, const Catalog& catalog,
                          const Policy& policy) {
  ClusterView view;
  view.prices = pricesForRegion(catalog, clusterRegionOf(cluster));
  view.karpenterPrices = cluster.karpenterPrices;
  const bool empty = cluster.nodesKnown && cluster.nodes.empty() && cluster.nodePools.empty();
  if (policy.capacity.source == CapacitySource::Auto && empty) {
    view.capacity.source = CapacitySource::None;
    view.capacity.why =
        "Auto: the cluster shows no node and no NodePool, so every type in the catalog is a "
        "candidate";
    view.labels = nodeLabelsFor(policy, nullptr);
    return view;
  }
  view.capacity = capacityOf(cluster, catalog, policy, policy.capacity.source);
  if (!cluster.nodesKnown && policy.capacity.source != CapacitySource::None) {
    view.problem = cluster.nodesProblem.empty() ? "the nodes are not known" : cluster.nodesProblem;
  }
  if (cluster.nodesKnown && !empty) {
    const auto detected = detectLabelScheme(cluster);
    view.labels = nodeLabelsFor(policy, &detected);
  } else {
    view.labels = nodeLabelsFor(policy, nullptr);
  }
  return view;
}

namespace {

// Devices free at the margin: idle on nodes other pods keep up, plus the
// workload's own where it shares the type with others (those nodes stay
// whether it moves or not). Where its pods are alone on the type, leaving
// would let their nodes go: staying costs the whole nodes, as before.
struct Slots {
  int free = 0;        // replicas that fit on devices already paid for
  int onOwnNodes = 0;  // replicas that stay on nodes only they use
  int idleNodes = 0;   // nodes with room for one replica
};

// Shares of GPUs free at the margin (MIG slices, replicas of time-sliced
// GPUs): `freeOn` each node some pod keeps up, and the workload's own shares
// of the same kind (those beside them are other pods'; a node of its own
// shares alone is rare enough that staying is priced as a share).
template <typename FreeOn>
Slots shareSlotsOf(const Offer& offer, FreeOn freeOn, int ownReplicas) {
  Slots slots;
  for (const auto& room : offer.room) {
    const auto free = room.kept ? freeOn(room) : 0;
    slots.free += free;
    slots.idleNodes += free > 0 ? 1 : 0;
  }
  slots.free += ownReplicas;
  slots.idleNodes = std::max(slots.idleNodes, ownReplicas > 0 ? 1 : 0);
  return slots;
}

Slots slotsOf(const Offer& offer, const CostInput& input, const OwnDevices& own) {
  Slots slots;
  const bool ownType = own.instance == input.instance && own.capacity == input.capacity;
  if (input.shared) {
    const int per = std::max(input.devices, 1);
    return shareSlotsOf(
        offer, [per](const NodeRoom& room) { return room.sharedFree / per; },
        ownType && own.shared && own.devices == input.devices ? own.replicas : 0);
  }
  if (!input.migProfile.empty()) {
    return shareSlotsOf(
        offer, [&input](const NodeRoom& room) { return room.migFree(input.migProfile); },
        ownType && own.migProfile == input.migProfile ? own.replicas : 0);
  }
  const bool ownHere = own.instance == input.instance && own.capacity == input.capacity &&
                       own.devices > 0 && own.migProfile.empty() && !own.shared;
  // Only what pods on these nodes hold: replicas not bound yet hold nothing.
  const int held = ownHere ? std::min(own.replicas, offer.used / own.devices) : 0;
  if (held > 0 && offer.used <= held * own.devices) {
    slots.onOwnNodes = own.devices == input.devices ? std::min(held, input.replicas) : 0;
    return slots;
  }
  for (const auto free : offer.idle) {
    slots.free += free / input.devices;
    slots.idleNodes += free >= input.devices ? 1 : 0;
  }
  if (held > 0 && own.devices >= input.devices) {
    slots.free += held * (own.devices / input.devices);
    slots.idleNodes = std::max(slots.idleNodes, 1);
  }
  return slots;
}

}  // namespace

CostQuote ClusterCost::quote(const CostInput& input) const {
  CostQuote quote = WholeNodeCost().quote(input);
  quote.cluster = true;
  quote.newNodes = quote.nodes;
  const Offer* offer = capacity_.offer(input.instance, input.capacity);
  // CPU, no view of this type, or a replica across a group of nodes (its
  // pods take a node each, never devices idle beside other pods): whole new
  // nodes.
  if (input.devices <= 0 || !offer || input.nodesPerReplica > 1) {
    return quote;
  }
  OwnDevices own = own_;
  if (own.capacity == CapacityType::Mixed) {
    // A Mixed placement in force: its pods on each side, as it was priced.
    const auto split = mixedSplit(own.replicas);
    own.replicas = own.replicas == 0                      ? 0
                   : input.capacity == CapacityType::Spot ? split.spot
                                                          : split.onDemand;
    own.capacity = input.capacity;
  }
  const Slots slots = slotsOf(*offer, input, own);
  const int replicas = std::max(input.replicas, 1);
  const int perNode = std::max(input.replicasPerNode, 1);
  quote.replicasOnOwnNodes = slots.onOwnNodes;
  quote.replicasOnIdle = std::min(replicas, slots.free);
  quote.idleNodes = slots.idleNodes;
  const int rest = replicas - quote.replicasOnIdle;
  const int wholeNodes = (rest + perNode - 1) / perNode;
  quote.ownNodes = std::min(wholeNodes, (slots.onOwnNodes + perNode - 1) / perNode);
  quote.newNodes = wholeNodes - quote.ownNodes;
  const double share = input.nodeHourly * std::min(input.replicaShare, 1.0);
  const double whole = wholeNodes * input.nodeHourly;
  quote.totalHourly = quote.replicasOnIdle * share + whole;
  quote.perReplicaHourly = quote.totalHourly / replicas;
  quote.marginalHourly = whole / replicas;  // idle devices cost the cluster nothing more
  quote.nodes = wholeNodes + std::min(quote.idleNodes, quote.replicasOnIdle);
  return quote;
}

}  // namespace gpuplacement::core
