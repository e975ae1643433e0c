#pragma once

// A small cluster for tests of decisions that see it: g6.12xlarge nodes
// (4x L4) made by Karpenter or a managed node group, a NodePool of g6.
#include <string>
#include <vector>

#include "core/cluster/capacity.h"
#include "core/cluster/cluster.h"

namespace gpuplacement::testing {

inline const core::Taint kGpuTaint{"nvidia.com/gpu", "true", "NoSchedule"};

// A g6.12xlarge (4 L4), made by Karpenter's NodePool "gpu" or by a managed
// node group.
inline core::NodeView g6x4(bool karpenter) {
  core::NodeView node;
  node.instanceType = "g6.12xlarge";
  node.nodePool = karpenter ? "gpu" : "";
  node.labels = core::kInstanceTypeLabel |
                (karpenter ? core::kKarpenterGpuLabels | core::kKarpenterCapacityLabel
                           : core::kNodeGroupCapacityLabel);
  node.taints = {kGpuTaint};
  node.allocatable.gpus = 4;
  node.milliCpu = 47810;
  node.memoryBytes = 176052LL << 20;
  return node;
}

// A g6.xlarge (1 L4), made by a managed node group.
inline core::NodeView g6x1() {
  core::NodeView node = g6x4(false);
  node.instanceType = "g6.xlarge";
  node.allocatable.gpus = 1;
  node.milliCpu = 3920;
  node.memoryBytes = 14481LL << 20;
  return node;
}

// A p4d.24xlarge (8 A100-40GB) in a managed node group whose GPUs MIG
// cuts into `count` instances of `profile` (the device plugin's mixed
// strategy: nvidia.com/mig-<profile>, no whole nvidia.com/gpu).
inline core::NodeView p4dMig(const std::string& profile, int count) {
  core::NodeView node = g6x4(false);
  node.instanceType = "p4d.24xlarge";
  node.allocatable.gpus = 0;
  node.allocatable.mig = {{profile, count}};
  node.milliCpu = 95690;
  node.memoryBytes = 1094000LL << 20;
  return node;
}

// A g6.xlarge (1 L4) whose GPU the device plugin time-slices `ways` ways,
// renamed (nvidia.com/gpu.shared) unless `renamed` is false, when its
// replicas are advertised as nvidia.com/gpu.
inline core::NodeView g6TimeSliced(int ways, bool renamed = true) {
  core::NodeView node = g6x1();
  node.allocatable.gpus = renamed ? 0 : ways;
  node.allocatable.sharedGpus = renamed ? ways : 0;
  node.gpuReplicas = ways;
  return node;
}

// A NodePool that may launch any on-demand g6.
inline core::NodePoolView g6Pool() {
  core::NodePoolView pool;
  pool.requirements = {{"karpenter.k8s.aws/instance-family", "In", {"g6"}},
                       {"karpenter.sh/capacity-type", "In", {"on-demand"}}};
  pool.taints = {kGpuTaint};
  return pool;
}

struct Cluster {
  std::vector<core::NodeView> nodes;
  std::vector<int> used;  // GPUs used per node
  std::vector<core::NodePoolView> pools;
  bool known = true;
  // MIG instances used per node, of the first profile the node advertises.
  std::vector<int> slicesUsed{};
  // Replicas of time-sliced GPUs (nvidia.com/gpu.shared) used per node.
  std::vector<int> sharedUsed{};
  // Devices DRA drivers publish for each node, and those claims hold.
  std::vector<core::Devices> dra{};
  std::vector<core::Devices> draUsed{};

  core::ClusterState state() const {
    core::ClusterState state;
    state.nodesKnown = known;
    state.nodesProblem = known ? "" : "cannot list nodes (HTTP 403)";
    state.nodePoolsInstalled = !pools.empty();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      core::ClusterState::Node node{"node-" + std::to_string(i), &nodes[i], {}};
      node.used.gpus = i < used.size() ? used[i] : 0;
      node.used.sharedGpus = i < sharedUsed.size() ? sharedUsed[i] : 0;
      node.dra = i < dra.size() ? dra[i] : core::Devices{};
      node.draUsed = i < draUsed.size() ? draUsed[i] : core::Devices{};
      if (i < slicesUsed.size() && slicesUsed[i] > 0) {
        node.used.mig = {{nodes[i].allocatable.mig.front().first, slicesUsed[i]}};
      }
      state.nodes.push_back(node);
    }
    for (const auto& pool : pools) {
      state.nodePools.emplace_back("gpu", &pool);
    }
    return state;
  }
};

}  // namespace gpuplacement::testing
