#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/types.h"

namespace gpuplacement::core {

// One accelerator model, shared by every instance type that carries it.
struct AcceleratorSpec {
  std::string name;  // T4, A10G, ..., Trainium, Inferentia2
  std::string vendor;
  double memoryGiB = 0;
  double fp16Tflops = 0;  // dense FP16/BF16 per accelerator
  double memoryBandwidthGBs = 0;
  std::string karpenterName;  // karpenter.k8s.aws/instance-gpu-name or -accelerator-name
  std::string gpuProduct;     // GPU Feature Discovery nvidia.com/gpu.product
};

// One EC2 instance type. Prices are per instance-hour; nullopt means the
// type is not sold that way (or no price is known) and so is never chosen
// for that capacity type unless a policy sets a price.
struct InstanceType {
  std::string type;
  std::string family;  // "g5" of "g5.xlarge"
  Tier tier = Tier::CPU;
  int accelerator = -1;  // index into Catalog::accelerators; -1 for CPU
  int acceleratorCount = 0;
  // Device counts a single container may request (Neuron topology rules);
  // empty means any count from 1 to acceleratorCount.
  std::vector<int> allowedAcceleratorCounts;
  int vcpus = 0;
  double memoryGiB = 0;
  std::optional<double> onDemand;
  std::optional<double> spot;
  // CPU instances: whole-instance estimates, so CPU and accelerators compare.
  double cpuTflops = 0;
  double cpuMemoryBandwidthGBs = 0;
};

struct Catalog {
  std::string region;
  std::string pricesAsOf;
  std::vector<AcceleratorSpec> accelerators;
  std::vector<InstanceType> instances;  // sorted by type name

  const InstanceType* find(std::string_view type) const;
  int indexOf(std::string_view type) const;
  const AcceleratorSpec* acceleratorOf(const InstanceType& instance) const {
    return instance.accelerator < 0 ? nullptr : &accelerators[instance.accelerator];
  }
  int acceleratorIndex(std::string_view name) const;
};

// Reads a catalog document (config/catalog.yaml, as JSON). Errors name the
// entry and the field: "instances[g5.xlarge].onDemand: must be ...".
Result<Catalog> parseCatalog(const nlohmann::json& document);

}  // namespace gpuplacement::core
