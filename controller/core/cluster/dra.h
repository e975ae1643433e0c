#pragma once

#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/cluster/cluster.h"

// Dynamic Resource Allocation (resource.k8s.io/v1, GA in Kubernetes 1.34):
// the devices DRA drivers publish in ResourceSlices, the ones ResourceClaims
// hold, and the ResourceClaimTemplate a placement asks for its devices by.
namespace gpuplacement::core {

// The drivers whose devices placement counts, and the DeviceClasses their
// devices are asked for by (NVIDIA's dra-driver-nvidia-gpu: gpu.nvidia.com
// for whole GPUs, mig.nvidia.com for MIG devices; the AWS Neuron DRA
// driver: neuron.aws.com).
inline constexpr const char* kNvidiaDriver = "gpu.nvidia.com";
inline constexpr const char* kGpuDeviceClass = "gpu.nvidia.com";
inline constexpr const char* kMigDeviceClass = "mig.nvidia.com";
inline constexpr const char* kNeuronDriver = "neuron.aws.com";
inline constexpr const char* kNeuronDeviceClass = "neuron.aws.com";

// A device, as the scheduler allocates it: driver, pool and name.
using DeviceRef = std::tuple<std::string, std::string, std::string>;

// One ResourceSlice, as much as placement needs: the node its devices are
// on (node-local slices only), and what they are, counted as the device
// plugins count theirs: whole GPUs, MIG devices by profile (the NVIDIA
// driver's `type` and `profile` attributes), Neuron devices.
struct ResourceSliceView {
  std::string node;  // spec.nodeName; empty: not node-local, not counted
  Devices devices;
  std::vector<std::pair<DeviceRef, Devices>> each;  // what each device counts as

  bool operator==(const ResourceSliceView&) const = default;
};
ResourceSliceView resourceSliceFromJson(const nlohmann::json& object);

// The devices a ResourceClaim holds (status.allocation.devices.results).
struct ClaimAllocation {
  std::vector<DeviceRef> devices;

  bool operator==(const ClaimAllocation&) const = default;
};
ClaimAllocation claimAllocationFromJson(const nlohmann::json& object);

// The one device request of a placement's ResourceClaimTemplate: the
// DeviceClass, a CEL selector for the GPU model or MIG profile, and how
// many.
struct DeviceClaim {
  std::string deviceClassName;
  std::string selector;  // a CEL expression; empty: none
  int count = 1;

  bool operator==(const DeviceClaim&) const = default;
};

// The request a placement's devices are asked for by on a node whose driver
// publishes them through DRA: the accelerator's product name (NVML's, which
// the NVIDIA driver's productName attribute carries) or its MIG profile.
DeviceClaim deviceClaimFor(const AcceleratorSpec& accelerator, Tier tier, int count,
                           const std::string& migProfile);

// The ResourceClaimTemplate's name for a workload's claim: the workload's
// name and a digest of the request, so that another request is another
// template (a template's spec cannot change) and the same one is the same.
std::string claimTemplateName(const std::string& workload, const DeviceClaim& claim);

// The extended resource every DeviceClass is asked for by without a claim
// (KEP-5004, beta and on by default in Kubernetes 1.36): the scheduler
// allocates one of the class's devices per unit and makes the pod's claim
// itself. Container resources, which a suspended Job may change.
std::string deviceClassResourceName(const std::string& deviceClass);

// The name the pod template's spec.resourceClaims entry and the container's
// resources.claims entry carry.
inline constexpr const char* kPodClaimName = "gpu-placement";

// The ResourceClaimTemplate object (resource.k8s.io/v1), labelled with the
// workload and owned by it (`ownerUid`), so that it goes when the
// GpuWorkload does.
nlohmann::json claimTemplateObject(const std::string& ns, const std::string& name,
                                   const std::string& workload, const std::string& ownerUid,
                                   const DeviceClaim& claim);

// The label every ResourceClaimTemplate the operator writes carries: the
// GpuWorkload's name.
inline constexpr const char* kClaimTemplateLabel = "gpuplacement.io/claims-for";

}  // namespace gpuplacement::core
