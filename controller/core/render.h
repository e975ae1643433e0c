#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/engine.h"
#include "core/policy.h"

namespace gpuplacement::core {

// The pod-template fields a placement asks for, as data. Extended resources
// are requested and limited alike (Kubernetes requires requests == limits).
struct Scheduling {
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;
  std::map<std::string, std::string> resources;

  bool operator==(const Scheduling&) const = default;
};

// Node labels per scheme:
//   InstanceType        node.kubernetes.io/instance-type (every EKS node has it)
//   Karpenter           karpenter.k8s.aws/instance-gpu-name and -count (NVIDIA),
//                       instance-accelerator-name and -count (Neuron)
//   GPUFeatureDiscovery nvidia.com/gpu.product (NVIDIA; others by instance type)
// plus the capacity-type label for the chosen capacity, when configured.
Scheduling renderScheduling(const Placement& placement, const Catalog& catalog,
                            const Policy& policy);

}  // namespace gpuplacement::core
