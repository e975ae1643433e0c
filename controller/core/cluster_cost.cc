#include "core/cluster_cost.h"

#include <algorithm>

namespace gpuplacement::core {

NodeLabels nodeLabelsFor(const Policy& policy, const SchemeChoice* detected) {
  NodeLabels labels;
  labels.capacityLabel = policy.capacityTypeLabel;
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

CostQuote ClusterCost::quote(const CostInput& input) const {
  CostQuote quote = WholeNodeCost().quote(input);
  quote.cluster = true;
  quote.newNodes = quote.nodes;
  const Offer* offer = capacity_.offer(input.instance, input.capacity);
  if (input.devices <= 0 || !offer) {
    return quote;  // CPU, or no view of this type: whole new nodes
  }
  int slots = 0;
  int ownSlots = 0;
  for (const auto free : offer->idle) {
    quote.idleDevices += free;
    slots += free / input.devices;
    quote.idleNodes += free >= input.devices ? 1 : 0;
  }
  if (own_.instance == input.instance && own_.capacity == input.capacity && own_.devices > 0) {
    // Only what pods on these nodes hold: replicas not bound yet hold nothing.
    const int held = std::min(own_.replicas, offer->used / own_.devices);
    quote.idleDevices += held * own_.devices;
    slots += held * (own_.devices / input.devices);
    // Alone on nodes of this type, its pods leaving would let them go.
    if (offer->used <= held * own_.devices) {
      ownSlots = held * (own_.devices / input.devices);
    }
    if (held > 0 && own_.devices >= input.devices) {
      quote.idleNodes = std::max(quote.idleNodes, 1);
    }
  }
  const int replicas = std::max(input.replicas, 1);
  const int perNode = std::max(input.replicasPerNode, 1);
  quote.replicasOnIdle = std::min(replicas, slots);
  const int rest = replicas - quote.replicasOnIdle;
  quote.newNodes = (rest + perNode - 1) / perNode;
  const double share = input.nodeHourly * std::min(input.replicaShare, 1.0);
  const double added = quote.newNodes * input.nodeHourly;
  quote.totalHourly = quote.replicasOnIdle * share + added;
  quote.perReplicaHourly = quote.totalHourly / replicas;
  // Devices the workload's own pods hold cost the cluster nothing more
  // while others share their nodes (the nodes stay anyway); where its pods
  // are alone on them, moving would let the nodes go, so staying costs
  // their share, or no price change would ever move a placed workload.
  const int onOwn = std::min(quote.replicasOnIdle, ownSlots);
  quote.marginalHourly = (added + onOwn * share) / replicas;
  quote.nodes = quote.newNodes + std::min(quote.idleNodes, quote.replicasOnIdle);
  return quote;
}

}  // namespace gpuplacement::core
