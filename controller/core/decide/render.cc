#include "core/decide/render.h"

#include <cmath>

namespace gpuplacement::core {

namespace {

// Selects nodes of the shape the cost assumed: the instance type, or under
// Karpenter and GPU Feature Discovery the accelerator, its count per node
// (never more devices than were priced) and, where one name covers two
// memory sizes (a100, v100), the memory per device.
void selectNodeShape(const Placement& placement, const InstanceType* instance,
                     const AcceleratorSpec* accelerator, LabelScheme scheme,
                     std::map<std::string, std::string>& selector) {
  const bool neuron = placement.tier == Tier::Trainium || placement.tier == Tier::Inferentia;
  const bool shaped = instance && accelerator && !accelerator->fractional;
  if (scheme == LabelScheme::Karpenter && shaped) {
    const std::string prefix =
        neuron ? "karpenter.k8s.aws/instance-accelerator-" : "karpenter.k8s.aws/instance-gpu-";
    selector[prefix + "name"] = accelerator->karpenterName;
    selector[prefix + "count"] = std::to_string(instance->acceleratorCount);
    if (!neuron && accelerator->ec2MemoryMiB > 0) {
      selector["karpenter.k8s.aws/instance-gpu-memory"] = std::to_string(accelerator->ec2MemoryMiB);
    }
    return;
  }
  if (scheme == LabelScheme::GPUFeatureDiscovery && shaped && !neuron &&
      !accelerator->gpuProduct.empty()) {
    selector["nvidia.com/gpu.product"] = accelerator->gpuProduct;
    selector["nvidia.com/gpu.count"] = std::to_string(instance->acceleratorCount);
    return;
  }
  selector[kInstanceTypeKey] = placement.instanceType;
}

}  // namespace

Placement replicaShape(const Catalog& catalog, int instance, const Fit& fit, CapacityType capacity,
                       const Capacity* offered, bool claimsWritable) {
  const auto& type = catalog.instances[static_cast<std::size_t>(instance)];
  const auto* accelerator = catalog.acceleratorOf(type);
  Placement placement;
  placement.tier = type.tier;
  placement.accelerator = accelerator ? accelerator->name : "";
  placement.instanceType = type.type;
  placement.acceleratorCount = fit.devices;
  placement.acceleratorsPerInstance = type.acceleratorCount;
  if (accelerator && fit.migProfile >= 0) {
    placement.migProfile = accelerator->migProfiles[static_cast<std::size_t>(fit.migProfile)].name;
  }
  placement.timeSlices = fit.timeSlices;
  if (fit.nodes > 1) {
    placement.nodesPerReplica = fit.nodes;
    placement.efaInterfaces = type.efaInterfaces;
    placement.networkGbps = type.networkGbps;
    placement.training = fit.layout;
  }
  placement.claim = accelerator && offered && offered->offersClaims(instance, capacity);
  placement.claimByResource = placement.claim && !claimsWritable;
  placement.capacityType = capacity;
  return placement;
}

std::string memoryQuantity(double gib) {
  const auto mib = static_cast<long long>(std::ceil(gib * 1024 - 1e-6));
  // The API server writes quantities in canonical form; writing them so
  // keeps what we read back equal to what we wrote.
  return mib % 1024 == 0 ? std::to_string(mib / 1024) + "Gi" : std::to_string(mib) + "Mi";
}

std::string cpuQuantity(double vcpus) {
  const auto milli = static_cast<long long>(std::llround(vcpus * 1000));
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

Scheduling renderScheduling(const Placement& placement, const Catalog& catalog,
                            const Policy& policy) {
  return renderScheduling(placement, catalog, policy, nodeLabelsFor(policy, nullptr));
}

Scheduling renderScheduling(const Placement& placement, const Catalog& catalog,
                            const Policy& policy, const NodeLabels& labels) {
  Scheduling scheduling;
  const auto* instance = catalog.find(placement.instanceType);
  const auto* accelerator = instance ? catalog.acceleratorOf(*instance) : nullptr;
  selectNodeShape(placement, instance, accelerator, labels.scheme, scheduling.nodeSelector);
  const auto& capacity = labels.capacityLabel;
  if (placement.capacityType == CapacityType::Mixed) {
    scheduling.spreadKey = capacity.key;
  } else if (!capacity.key.empty()) {
    scheduling.nodeSelector[capacity.key] =
        placement.capacityType == CapacityType::Spot       ? capacity.spot
        : placement.capacityType == CapacityType::Reserved ? capacity.reserved
                                                           : capacity.onDemand;
  }

  scheduling.networkDomainKey = placement.networkDomainKey;

  const auto& tier = policy.tier(placement.tier);
  scheduling.tolerations = tier.tolerations;
  if (placement.claim && accelerator) {
    auto claim = deviceClaimFor(*accelerator, placement.tier, placement.acceleratorCount,
                                placement.migProfile);
    if (placement.claimByResource) {
      // The node selector has chosen the model: the class's devices on it
      // are the ones meant.
      scheduling.resources[deviceClassResourceName(claim.deviceClassName)] =
          std::to_string(claim.count);
    } else {
      scheduling.claim = std::move(claim);
    }
  } else if (placement.timeSlices > 0) {
    // Replicas of a time-sliced GPU, under the device plugin's renamed
    // resource: no node with whole GPUs advertises it.
    scheduling.resources["nvidia.com/gpu.shared"] = std::to_string(placement.acceleratorCount);
  } else if (!placement.migProfile.empty()) {
    // One MIG instance (acceleratorCount is 1), under the device plugin's
    // mixed-strategy name.
    scheduling.resources[migResourceName(placement.migProfile)] =
        std::to_string(placement.acceleratorCount);
  } else if (!tier.resourceName.empty() && placement.acceleratorCount > 0) {
    scheduling.resources[tier.resourceName] = std::to_string(placement.acceleratorCount);
  }
  // A group's pods talk over every EFA interface of their nodes: the EFA
  // device plugin advertises them as this resource (one pod a node).
  if (placement.nodesPerReplica > 1 && placement.efaInterfaces > 0) {
    scheduling.resources[kEfaResource] = std::to_string(placement.efaInterfaces);
  }
  if (placement.tier == Tier::CPU && placement.cpuRequest > 0) {
    scheduling.resources["cpu"] = cpuQuantity(placement.cpuRequest);
    scheduling.resources["memory"] = memoryQuantity(placement.memoryRequestGiB);
  } else if (placement.tier != Tier::CPU && placement.memoryRequestGiB > 0) {
    scheduling.requestsOnly["memory"] = memoryQuantity(placement.memoryRequestGiB);
  }
  return scheduling;
}

}  // namespace gpuplacement::core
