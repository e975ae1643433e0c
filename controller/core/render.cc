#include "core/render.h"

namespace gpuplacement::core {

namespace {
constexpr const char* kInstanceTypeLabel = "node.kubernetes.io/instance-type";
}

Scheduling renderScheduling(const Placement& placement, const Catalog& catalog,
                            const Policy& policy) {
  Scheduling scheduling;
  const auto* instance = catalog.find(placement.instanceType);
  const auto* accelerator = instance ? catalog.acceleratorOf(*instance) : nullptr;
  const bool neuron = placement.tier == Tier::Trainium || placement.tier == Tier::Inferentia;

  auto& selector = scheduling.nodeSelector;
  if (policy.labelScheme == LabelScheme::Karpenter && accelerator) {
    // Pinning the count as well keeps a 1-GPU pod off an 8-GPU node.
    const std::string prefix =
        neuron ? "karpenter.k8s.aws/instance-accelerator-" : "karpenter.k8s.aws/instance-gpu-";
    selector[prefix + "name"] = accelerator->karpenterName;
    selector[prefix + "count"] = std::to_string(instance->acceleratorCount);
  } else if (policy.labelScheme == LabelScheme::GPUFeatureDiscovery && accelerator && !neuron &&
             !accelerator->gpuProduct.empty()) {
    selector["nvidia.com/gpu.product"] = accelerator->gpuProduct;
  } else {
    selector[kInstanceTypeLabel] = placement.instanceType;
  }
  const auto& capacity = policy.capacityTypeLabel;
  if (!capacity.key.empty()) {
    selector[capacity.key] =
        placement.capacityType == CapacityType::Spot ? capacity.spot : capacity.onDemand;
  }

  const auto& tier = policy.tier(placement.tier);
  scheduling.tolerations = tier.tolerations;
  if (!tier.resourceName.empty() && placement.acceleratorCount > 0) {
    scheduling.resources[tier.resourceName] = std::to_string(placement.acceleratorCount);
  }
  return scheduling;
}

}  // namespace gpuplacement::core
