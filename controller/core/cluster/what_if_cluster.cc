#include "core/cluster/what_if_cluster.h"

#include <algorithm>
#include <cmath>

namespace gpuplacement::core {
namespace {

using base::Error;

const MigProfile* profileNamed(const AcceleratorSpec& accelerator, const std::string& name) {
  for (const auto& profile : accelerator.migProfiles) {
    if (profile.name == name) {
      return &profile;
    }
  }
  return nullptr;
}

std::string profileNames(const AcceleratorSpec& accelerator) {
  std::string names;
  for (const auto& profile : accelerator.migProfiles) {
    names += (names.empty() ? "" : ", ") + profile.name;
  }
  return names;
}

// A GPU's layout: each profile's instances, and no more than its 7 compute
// and 8 memory slices hold (NVIDIA's MIG user guide).
base::Result<Devices> migDevices(const SharedNodeSpec& spec, const AcceleratorSpec& accelerator,
                                 int gpus) {
  if (accelerator.migProfiles.empty()) {
    return Error{"--mig", spec.instanceType + "'s " + accelerator.name + " has no MIG profiles"};
  }
  int compute = 0;
  int memory = 0;
  Devices devices;
  for (const auto& [name, count] : spec.migPerGpu) {
    const auto* profile = profileNamed(accelerator, name);
    if (!profile) {
      return Error{"--mig", "the " + accelerator.name + " has no MIG profile \"" + name +
                                "\"; it has " + profileNames(accelerator)};
    }
    if (count < 1) {
      return Error{"--mig", name + ": the instances per GPU must be 1 or more"};
    }
    compute += profile->computeSevenths * count;
    memory += profile->memoryEighths * count;
    devices.mig.emplace_back(name, count * gpus);
  }
  if (compute > 7 || memory > 8) {
    return Error{"--mig", spec.instanceType +
                              ": more instances than one GPU's 7 compute and 8 memory slices hold"};
  }
  std::sort(devices.mig.begin(), devices.mig.end());
  return devices;
}

std::string layoutText(const SharedNodeSpec& spec, const AcceleratorSpec& accelerator, int gpus) {
  std::string text = std::to_string(gpus) + " " + accelerator.name;
  if (spec.timeSlices > 0) {
    return text + (gpus == 1 ? " time-sliced " : " each time-sliced ") +
           std::to_string(spec.timeSlices) + " ways (1 replica taken)";
  }
  text += gpus == 1 ? " cut into " : " each cut into ";
  for (std::size_t i = 0; i < spec.migPerGpu.size(); ++i) {
    text += (i == 0 ? "" : " and ") + std::to_string(spec.migPerGpu[i].second) + " MIG " +
            spec.migPerGpu[i].first;
  }
  return text + " (1 instance taken)";
}

}  // namespace

base::Result<std::unique_ptr<const WhatIfCluster>> WhatIfCluster::build(
    const Catalog& catalog, const std::vector<SharedNodeSpec>& shared) {
  std::unique_ptr<WhatIfCluster> cluster(new WhatIfCluster());
  cluster->nodes_.reserve(shared.size());  // the state points into them
  std::string standing;
  for (const auto& spec : shared) {
    const char* flag = spec.timeSlices > 0 ? "--time-sliced" : "--mig";
    const auto* instance = catalog.find(spec.instanceType);
    if (!instance) {
      return Error{flag, "\"" + spec.instanceType + "\" is not an instance type of the catalog"};
    }
    const auto* accelerator = catalog.acceleratorOf(*instance);
    if (!accelerator || instance->tier != Tier::NVIDIA) {
      return Error{flag, spec.instanceType + " has no NVIDIA GPU to share"};
    }
    const int gpus = instance->acceleratorCount;
    NodeView node;
    node.instanceType = instance->type;
    node.nodePool = "default";
    node.labels = kInstanceTypeLabel | kKarpenterGpuLabels | kKarpenterCapacityLabel;
    node.milliCpu = std::llround(instance->allocatableCpu * 1000);
    node.memoryBytes = std::llround(instance->allocatableMemoryGiB * (1LL << 30));
    ClusterState::Node entry;
    entry.name = "what-if-" + std::to_string(cluster->nodes_.size() + 1) + "-" + instance->type;
    if (spec.timeSlices > 0) {
      if (spec.timeSlices < 2) {
        return Error{flag, spec.instanceType + ": a GPU is time-sliced 2 ways or more"};
      }
      if (gpus != 1) {
        // The device plugin hands out replicas of any of the node's GPUs,
        // so a pod's could span two: the engine uses single-GPU nodes only.
        return Error{flag, spec.instanceType + " has " + std::to_string(gpus) +
                               " GPUs; time-sliced replicas are placed on single-GPU nodes only"};
      }
      node.allocatable.sharedGpus = gpus * spec.timeSlices;
      node.gpuReplicas = spec.timeSlices;
      entry.used.sharedGpus = 1;
    } else {
      auto devices = migDevices(spec, *accelerator, gpus);
      if (!devices) {
        return devices.error();
      }
      node.allocatable = std::move(*devices);
      entry.used.mig = {{node.allocatable.mig.front().first, 1}};
    }
    cluster->nodes_.push_back(std::move(node));
    entry.node = &cluster->nodes_.back();
    cluster->state_.nodes.push_back(std::move(entry));
    standing += (standing.empty() ? "" : "; ") + std::string("one ") + instance->type + ", " +
                layoutText(spec, *accelerator, gpus);
  }
  auto& state = cluster->state_;
  state.nodesKnown = true;
  state.nodePoolsInstalled = true;
  state.nodePools = {{"default", &cluster->pool_}};
  cluster->assumed_ =
      "Karpenter may launch any type on demand; standing, kept up by other work: " + standing;
  return std::unique_ptr<const WhatIfCluster>(std::move(cluster));
}

}  // namespace gpuplacement::core
