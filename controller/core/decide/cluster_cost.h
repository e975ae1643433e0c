#pragma once

#include <string>

#include "core/cluster/capacity.h"
#include "core/cluster/region.h"
#include "core/decide/cost_model.h"
#include "core/intent/policy.h"

// What one policy sees of the cluster (the candidates it may choose, the
// node labels it selects on) and the cost model that knows which devices
// are already paid for.
namespace gpuplacement::core {

// The node labels placements select on, resolved: the policy's, or under
// scheme Auto the ones the cluster's nodes carry.
struct NodeLabels {
  LabelScheme scheme = LabelScheme::InstanceType;  // never Auto
  CapacityTypeLabel capacityLabel;                 // an empty key selects no capacity type
  std::string why;                                 // how Auto was resolved; empty otherwise
  // The nearest network domain the cluster's accelerated nodes carry a
  // label of (SchemeChoice::networkDomainKey), whatever the scheme.
  std::string networkDomainKey;
};

// `detected` is null without a cluster to look at: Auto is InstanceType
// and the capacity label the policy's, as before there was a cluster view.
NodeLabels nodeLabelsFor(const Policy& policy, const SchemeChoice* detected);

// Computed once per policy and cluster generation; decisions read it.
struct ClusterView {
  Capacity capacity;
  NodeLabels labels;
  // Whether the catalog's prices are those of the cluster's region (its
  // nodes' or --region): the PricesForRegion condition.
  PricesForRegion prices;
  // Whether the prices are Karpenter's and fresh, where the operator reads
  // them: the KarpenterPrices condition.
  std::optional<KarpenterPricesCondition> karpenterPrices;
  // Why the view is degraded to source None although the policy asks for
  // one ("cannot list nodes (HTTP 403)"); empty when it is not.
  std::string problem;
};

// A cluster that shows no node and no NodePool (a control plane alone)
// under source Auto is treated as no cluster: every type is a candidate.
ClusterView clusterViewOf(const ClusterState& cluster, const Catalog& catalog,
                          const Policy& policy);

// The workload's own placement in force, so a placed workload does not see
// itself as competition: where it shares the type's nodes with other pods,
// its devices cost the cluster nothing more (the nodes stay either way);
// where its pods are alone on them, staying costs the whole nodes (leaving
// would let them go). Never more than the pods on nodes of the type hold.
struct OwnDevices {
  int instance = -1;  // catalog index; -1: none
  CapacityType capacity = CapacityType::OnDemand;
  // Its replicas bound to nodes of the type (Mixed: on either side); one
  // with no pod yet holds nothing.
  int replicas = 0;
  int devices = 0;           // per replica
  std::string migProfile{};  // a MIG slice per replica; empty: whole devices
  bool shared = false;       // replicas of a time-sliced GPU, `devices` of them per replica
};

// Whole nodes, except that replicas first take devices idle on existing
// nodes of the type that other pods keep up, each charged its share of the
// node (1 of 4 L4 pays a quarter); the rest pay for whole nodes. An empty
// node costs what a new one does: the cluster autoscaler or Karpenter's
// consolidation would remove it. The decision's order is by what the
// cluster pays more (marginalHourly): nothing for devices already paid for.
class ClusterCost final : public NodeCostModel {
 public:
  ClusterCost(const Capacity& capacity, OwnDevices own) : capacity_(capacity), own_(own) {}
  CostQuote quote(const CostInput& input) const override;

 private:
  const Capacity& capacity_;
  OwnDevices own_;
};

}  // namespace gpuplacement::core
