#include "core/decide/cost_model.h"

#include <algorithm>

namespace gpuplacement::core {

namespace {

int nodesFor(const CostInput& input) {
  const int perNode = std::max(input.replicasPerNode, 1);
  return (std::max(input.replicas, 1) + perNode - 1) / perNode * std::max(input.nodesPerReplica, 1);
}

}  // namespace

MixedSplit mixedSplit(int replicas) {
  const int all = std::max(replicas, 1);
  return {all - all / 2, all / 2};
}

CostQuote combineQuotes(const CostQuote& onDemand, int onDemandReplicas, const CostQuote& spot,
                        int spotReplicas) {
  const int all = std::max(onDemandReplicas + spotReplicas, 1);
  CostQuote quote = onDemand;
  quote.totalHourly = onDemand.totalHourly + spot.totalHourly;
  quote.perReplicaHourly = quote.totalHourly / all;
  quote.marginalHourly =
      (onDemand.marginalHourly * onDemandReplicas + spot.marginalHourly * spotReplicas) / all;
  quote.nodes = onDemand.nodes + spot.nodes;
  quote.cluster = onDemand.cluster || spot.cluster;
  quote.replicasOnIdle = onDemand.replicasOnIdle + spot.replicasOnIdle;
  quote.replicasOnOwnNodes = onDemand.replicasOnOwnNodes + spot.replicasOnOwnNodes;
  quote.ownNodes = onDemand.ownNodes + spot.ownNodes;
  quote.idleNodes = onDemand.idleNodes + spot.idleNodes;
  quote.newNodes = onDemand.newNodes + spot.newNodes;
  return quote;
}

CostQuote WholeNodeCost::quote(const CostInput& input) const {
  CostQuote quote;
  quote.basis = CostModel::WholeInstance;
  quote.nodes = nodesFor(input);
  quote.totalHourly = input.nodeHourly * quote.nodes;
  quote.perReplicaHourly = quote.totalHourly / std::max(input.replicas, 1);
  quote.marginalHourly = quote.perReplicaHourly;
  return quote;
}

CostQuote AcceleratorShareCost::quote(const CostInput& input) const {
  CostQuote quote;
  quote.basis = CostModel::AcceleratorShare;
  quote.nodes = nodesFor(input);
  quote.perReplicaHourly =
      input.nodeHourly * std::min(input.replicaShare, 1.0) * std::max(input.nodesPerReplica, 1);
  quote.totalHourly = quote.perReplicaHourly * std::max(input.replicas, 1);
  quote.marginalHourly = quote.perReplicaHourly;
  return quote;
}

const NodeCostModel& costModelFor(CostModel model) {
  static const WholeNodeCost whole;
  static const AcceleratorShareCost share;
  return model == CostModel::AcceleratorShare ? static_cast<const NodeCostModel&>(share) : whole;
}

}  // namespace gpuplacement::core
