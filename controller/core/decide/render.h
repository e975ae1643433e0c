#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog/catalog.h"
#include "core/cluster/dra.h"
#include "core/decide/engine.h"
#include "core/intent/policy.h"

namespace gpuplacement::core {

// The EFA device plugin's resource: a node's Elastic Fabric Adapters.
inline constexpr const char* kEfaResource = "vpc.amazonaws.com/efa";
// The well-known node label of a node's zone.
inline constexpr const char* kZoneLabel = "topology.kubernetes.io/zone";

// The pod-template fields a placement asks for, as data. `resources` are
// requested and limited alike: Kubernetes requires it of extended resources,
// and a CPU placement's cpu and memory are what it was sized and priced for.
// `requestsOnly` are requested and not limited: the host memory of a GPU or
// Neuron replica (its runtime and the shard its weights load through), which
// the scheduler must find on the node, and which a limit at an estimate
// would turn into an OOM kill when a server grows past it.
struct Scheduling {
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::string> resources;
  std::map<std::string, std::string> requestsOnly;
  // Mixed capacity: the node label the replicas spread evenly over (a
  // topology spread constraint, maxSkew 1); empty otherwise.
  std::string spreadKey;
  // A replica across nodes: the labels of its kind's groups
  // (PodGroups::labels), by which a required pod affinity on
  // topology.kubernetes.io/zone keeps the group in one zone: EFA does not
  // cross zones, and traffic between zones is slower and paid for. The
  // scheduler and Karpenter pick the zone, with the first pod; empty
  // otherwise.
  GroupLabels zoneGroup;
  // ... and the node label of the network domain (Placement::
  // networkDomainKey) a preferred pod affinity over the same labels asks
  // the group's pods to share, where there is room: preferred, since
  // neither the scheduler nor Karpenter can make room in a full one.
  std::string networkDomainKey;
  // On nodes that offer the devices through DRA: the claim they are asked
  // for by, in place of a device resource.
  std::optional<DeviceClaim> claim;

  bool operator==(const Scheduling&) const = default;
};

// One replica of `fit` on the catalog's instance `instance` at `capacity`
// as the devices it is asked for with: tier, type, accelerator and count,
// MIG profile, time slices, and whether by a DRA claim (where `offered`
// says the nodes give their devices so) or, where the template cannot take
// a claim, by the DeviceClass's resource. The explainer fills in the rest.
Placement replicaShape(const Catalog& catalog, int instance, const Fit& fit, CapacityType capacity,
                       const Capacity* offered, bool claimsWritable);

// Canonical Kubernetes quantities, as the API server writes them back:
// "17Gi", "1280Mi"; "2", "1500m".
std::string memoryQuantity(double gib);
std::string cpuQuantity(double vcpus);

// Node labels per scheme, always selecting nodes of the shape that was
// priced (never more devices per node):
//   InstanceType        node.kubernetes.io/instance-type (every EKS node has it)
//   Karpenter           karpenter.k8s.aws/instance-gpu-name, -count and -memory
//                       (NVIDIA), instance-accelerator-name and -count (Neuron)
//   GPUFeatureDiscovery nvidia.com/gpu.product and nvidia.com/gpu.count (NVIDIA)
// Other tiers, and fractional GPUs, select the instance type. Plus the
// capacity-type label for the chosen capacity, when configured; for Mixed,
// no capacity label but an even spread over its values. Resources:
// the device count (requests = limits); for CPU placements cpu and memory,
// requests = limits, so the replica gets what it was sized and priced for.
// Under the policy's labels as without a cluster (scheme Auto: InstanceType).
Scheduling renderScheduling(const Placement& placement, const Catalog& catalog,
                            const Policy& policy);
// Under labels resolved against the cluster (ClusterView::labels).
Scheduling renderScheduling(const Placement& placement, const Catalog& catalog,
                            const Policy& policy, const NodeLabels& labels);

}  // namespace gpuplacement::core
