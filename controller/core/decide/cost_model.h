#pragma once

#include <memory>

#include "core/catalog/catalog.h"
#include "core/catalog/types.h"

namespace gpuplacement::core {

// What the engine asks a cost model about one candidate: replicas of a
// workload on nodes of one instance type, at one capacity type.
struct CostInput {
  int instance = -1;  // catalog index
  const InstanceType* type = nullptr;
  CapacityType capacity = CapacityType::OnDemand;
  double nodeHourly = 0;    // one node of this type at this capacity
  int replicas = 1;         // at least 1 (a Deployment at 0 is priced as one)
  int replicasPerNode = 1;  // how many replicas one node holds
  double replicaShare = 1;  // the fraction of a node one replica uses
  int devices = 0;          // accelerators per replica; 0 for CPU
  // A MIG slice per replica ("1g.10gb"): devices is 1 instance of it.
  std::string_view migProfile{};
  bool shared = false;  // replicas of a time-sliced GPU: devices of them per replica
  // A replica that spans a group of nodes (core/decide/fit.h): that many
  // nodes each, one pod on each.
  int nodesPerReplica = 1;
};

// What the candidate costs, and on what basis.
struct CostQuote {
  double perReplicaHourly = 0;  // what one replica costs (total / replicas)
  double totalHourly = 0;       // all replicas
  int nodes = 0;                // nodes the replicas occupy
  CostModel basis = CostModel::WholeInstance;
  // What the cluster pays more per replica for this choice: the decision's
  // order under CostOptimized. The same as perReplicaHourly unless some
  // replicas use devices already paid for (ClusterCost).
  double marginalHourly = 0;
  // ClusterCost only: replicas on idle devices of existing nodes, how many
  // nodes have room for one, replicas that stay on nodes only they use
  // (whole nodes), and the new nodes for the rest.
  bool cluster = false;
  int replicasOnIdle = 0;
  int replicasOnOwnNodes = 0;
  int ownNodes = 0;
  int idleNodes = 0;
  int newNodes = 0;
};

// The replicas of a Mixed placement by capacity type. The spread allows
// either side the odd replica; it is counted on-demand, the dearer, so the
// price claimed is never below what the cluster pays.
struct MixedSplit {
  int onDemand = 1;
  int spot = 0;
};
MixedSplit mixedSplit(int replicas);

// One quote for a workload whose replicas are priced in two parts.
CostQuote combineQuotes(const CostQuote& onDemand, int onDemandReplicas, const CostQuote& spot,
                        int spotReplicas);

// The seam between placement and pricing. The engine consults one model per
// decision for every candidate it prices; the policy names the default one
// (costModelFor). A caller that knows the cluster's nodes can pass its own
// model to decide (core/explain/explainer.h): devices already paid for on existing
// nodes then cost only their share, and a new node costs the whole node.
class NodeCostModel {
 public:
  virtual ~NodeCostModel() = default;
  virtual CostQuote quote(const CostInput& input) const = 0;
};

// Whole nodes (CostModel::WholeInstance, the default): replicas pack onto
// nodes, nodes = ceil(replicas / replicasPerNode), and the workload pays for
// those nodes. What a cluster that launches nodes for it pays.
class WholeNodeCost final : public NodeCostModel {
 public:
  CostQuote quote(const CostInput& input) const override;
};

// A share of a node (CostModel::AcceleratorShare): each replica pays the
// fraction of the node it uses, as if other workloads filled the rest. Only
// true on shared nodes that are kept full; an explicit policy choice.
class AcceleratorShareCost final : public NodeCostModel {
 public:
  CostQuote quote(const CostInput& input) const override;
};

// The model a policy's costModel names (static, never null).
const NodeCostModel& costModelFor(CostModel model);

}  // namespace gpuplacement::core
