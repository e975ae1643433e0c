#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/catalog/types.h"
#include "core/decide/cost_model.h"
#include "core/decide/performance_model.h"
#include "core/decide/weighing.h"

// A decision as people and the reconcile read it: the placement with its
// figures, the reason, the alternatives. Written by core/explain/explainer.h.
namespace gpuplacement::core {

struct Placement {
  Tier tier = Tier::CPU;
  std::string accelerator;  // empty for CPU
  std::string instanceType;
  int acceleratorCount = 0;  // per replica; 0 for CPU
  int acceleratorsPerInstance = 0;
  // A replica no node holds spans this many nodes, a group whose pods take
  // acceleratorCount devices each and talk over EFA (efaInterfaces a pod,
  // the node's networkGbps); 1: one pod on one node.
  int nodesPerReplica = 1;
  int efaInterfaces = 0;
  double networkGbps = 0;
  // Training across nodes: the tensor, pipeline and data parallel degrees
  // that hold it, and what each device holds (core/decide/training_layout.h).
  TrainingLayout training;
  // A group whose kind takes a pod affinity, in a cluster whose nodes say
  // where they sit in the network: the label of the nearest domain
  // (core/cluster/cluster.h, kPlacementGroupKey or kNetworkNodeKey) its
  // pods are preferred to share. Empty otherwise.
  std::string networkDomainKey;
  // A MIG slice of one GPU per replica ("1g.10gb", requested as
  // nvidia.com/mig-1g.10gb); acceleratorCount is then 1. Empty: whole devices.
  std::string migProfile;
  // Replicas of a GPU the device plugin time-slices this many ways
  // (requested as nvidia.com/gpu.shared); acceleratorCount is how many of
  // them a replica takes. 0: not time-sliced.
  int timeSlices = 0;
  // The nodes offer the devices through DRA: they are asked for by a
  // ResourceClaimTemplate (core/cluster/dra.h), not a device plugin's resource.
  bool claim = false;
  // ... or, where the pod template cannot gain a claim (a Job's), by the
  // DeviceClass's extended resource, for which the scheduler makes the
  // claim itself (KEP-5004, beta in Kubernetes 1.36).
  bool claimByResource = false;
  // What the replica would cost on whole devices instead, where a slice was
  // chosen: one device of the same type, priced by the same cost model.
  std::optional<double> wholeDeviceHourlyCost;
  // OnDemand, Spot, Mixed or Reserved, never Any.
  CapacityType capacityType = CapacityType::OnDemand;
  // Mixed: the replicas priced at each capacity type (core/decide/cost_model.h's
  // mixedSplit) and one spot node's price; nodeHourlyCost is on-demand.
  int onDemandReplicas = 0;
  int spotReplicas = 0;
  double spotNodeHourlyCost = 0;
  double hourlyCost = 0;  // per replica
  // Per replica, what the cluster pays more for it: nothing for devices
  // idle on nodes other pods keep up. Unset: hourlyCost (no cluster view).
  std::optional<double> clusterHourlyCost;
  double paidByCluster() const { return clusterHourlyCost.value_or(hourlyCost); }
  double monthlyCost = 0;  // per replica
  int replicas = 1;        // groups, where a replica spans nodes
  double totalHourlyCost = 0;
  double totalMonthlyCost = 0;
  double requiredMemoryGiB = 0;
  double availableMemoryGiB = 0;  // what the replica gets: count x usable per-accelerator memory
  double memoryFillLimit = 0;     // the policy's: the most of availableMemoryGiB a model may fill
  double performance = 0;         // the figure the objective compared
  const char* performanceUnit = "";
  // The nodes behind the price.
  CostModel costModel = CostModel::WholeInstance;
  double nodeHourlyCost = 0;  // one node of instanceType at capacityType
  int nodes = 0;              // nodes the replicas occupy
  int replicasPerNode = 0;
  int idleAccelerators = 0;  // on those nodes, paid for and unused (whole-node pricing)
  int replicasOnIdle = 0;    // with a cluster view: replicas on devices idle on existing nodes
  std::string costNote;      // "1 of 16 Trainium on one trn1.32xlarge at $3.91/h; 15 idle"
  // Reserved: the reservations whose nodes it may take, "cr-0abc (Capacity
  // Block)", comma-separated.
  std::string reservation;
  // CPU placements: what each replica requests (and is limited to).
  double cpuRequest = 0;
  // Host memory per replica: CPU the model and its runtime; GPU and Neuron
  // the runtime and the shard its weights load through.
  double memoryRequestGiB = 0;
  int neededAccelerators = 0;  // the fewest that hold the model; fewer than
                               // acceleratorCount when training data-parallel
  // Inference: the time a unit of work (latencyUnit) takes here, by the
  // roofline (core/decide/performance_model.h) at what a serving stack reaches of
  // the peak bandwidth, and whether compute binds.
  std::optional<double> latencyMs;
  LatencyUnit latencyUnit = LatencyUnit::OutputToken;
  bool latencyComputeBound = false;
  // The share of peak bandwidth latencyMs assumes (rules servingBandwidth;
  // 1: the peak, a bound), and whether that share is measured or assumed.
  double bandwidthUtilization = 1;
  bool bandwidthAssumed = false;
  // With a serving load: the output tokens a second one replica carries at
  // its sequences; with a throughput target, the replicas that carry it
  // (the target's own replicas are the team's: never written). 0: none.
  double tokensPerSecondPerReplica = 0;
  int replicasForThroughput = 0;
  // With the load's mean prompt: its time to the first output token on a
  // replica with room (timeToFirstTokenMs in core/decide/fit.h). 0: not stated.
  double timeToFirstTokenMs = 0;
};

// An option that lost, and why.
struct Alternative {
  std::string instanceType;  // empty when the line is about a tier or an accelerator
  std::string accelerator;
  Tier tier = Tier::CPU;
  int acceleratorCount = 0;
  CapacityType capacityType = CapacityType::OnDemand;
  std::optional<double> hourlyCost;  // per replica, when it could be priced
  std::string rejected;
  std::string migProfile{};  // a MIG slice per replica; empty: whole devices
  int timeSlices = 0;        // replicas of a GPU time-sliced this many ways
};

struct Decision {
  MemoryEstimate memory;
  // What the memory holds of a served Transformer's load: the KV cache of
  // the load stated, or, without one, what the overhead leaves for it.
  // Empty for other work.
  std::string memoryNote;
  std::string sizeBucket;
  LatencyClass latency = LatencyClass::Relaxed;
  std::optional<Placement> placement;
  std::string rule;  // the rule that decided; empty when nothing matched
  std::string ruleSource;
  std::string reason;  // one line for people
  std::vector<Alternative> alternatives;
  // When placement is empty: the binding constraint, e.g. "needs 5,588 GiB;
  // the largest eligible instance offers 1,128 GiB (p5en.48xlarge)".
  std::string cannotPlace;
  // Placed, but no option meets latencyTargetMs: the fastest is placed and
  // the reason gives its estimate.
  bool latencyTargetUnreachable = false;

  // The Placed condition's reason: Placed, LatencyTargetUnreachable or CannotPlace.
  const char* placedReason() const {
    return !placement                 ? "CannotPlace"
           : latencyTargetUnreachable ? "LatencyTargetUnreachable"
                                      : "Placed";
  }
};

// Whether a placement already in use can stay, under this engine's prices
// and the workload's current intent, and what it costs now.
struct Assessment {
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  double hourlyCost = 0;
  std::optional<double> clusterHourlyCost;  // see Placement
  double paidByCluster() const { return clusterHourlyCost.value_or(hourlyCost); }
  double performance = 0;
  // The placement in force, described and priced as decide() would (when
  // the instance type is still in the catalog and has a price).
  std::optional<Placement> placement;
};

}  // namespace gpuplacement::core
