#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/types.h"

namespace gpuplacement::core {

// One MIG profile of a GPU, as NVIDIA's MIG user guide ("Supported MIG
// Profiles") gives it: its share of the GPU's memory in eighths (the L2
// cache and memory controllers, so the bandwidth, go with it) and of its
// SMs in sevenths, and how many instances of it one GPU holds.
struct MigProfile {
  std::string name;  // "1g.10gb": the device plugin's resource nvidia.com/mig-1g.10gb
  int memoryEighths = 1;
  int computeSevenths = 1;
  int perGpu = 1;
};

// One accelerator model, shared by every instance type that carries it.
struct AcceleratorSpec {
  std::string name;  // T4, A10G, ..., Trainium, Inferentia2
  std::string vendor;
  std::string generation;  // Turing, Ampere, ..., NeuronCore-v2: named in explanations
  // Memory a workload can use: what the driver reports (nvidia-smi), or
  // EC2's figure where that is lower. A T4 is 16 GiB on paper, 15 in use.
  double memoryGiB = 0;
  int ec2MemoryMiB = 0;   // EC2 GpuInfo per device: Karpenter's instance-gpu-memory; 0 unknown
  double fp16Tflops = 0;  // dense FP16/BF16 per accelerator
  double fp32Tflops = 0;  // dense FP32 (what an fp32 model gets by default); 0: as fp16
  std::optional<double> fp8Tflops;  // dense FP8, where the accelerator runs it
  double memoryBandwidthGBs = 0;
  EnumSet<Precision> precisions;  // the precisions it runs natively (never empty)
  std::string karpenterName;      // karpenter.k8s.aws/instance-gpu-name or -accelerator-name
  std::string gpuProduct;         // GPU Feature Discovery nvidia.com/gpu.product
  std::string productName;        // NVML's name ("NVIDIA L4"): the DRA driver's productName
  // A slice of a GPU (g6f). Karpenter reports 0 GPUs for these types, so it
  // never launches one for a pod that requests nvidia.com/gpu.
  bool fractional = false;
  // The MIG profiles it can be cut into, smallest first; empty: no MIG.
  std::vector<MigProfile> migProfiles;
};

// What one instance of a MIG profile offers: memory and bandwidth by its
// eighths, compute by its sevenths.
double migMemoryGiB(const AcceleratorSpec& spec, const MigProfile& profile);
double migBandwidthGBs(const AcceleratorSpec& spec, const MigProfile& profile);
double migComputeShare(const MigProfile& profile);
// The device plugin's resource for a profile (mixed strategy):
// "nvidia.com/mig-1g.10gb".
std::string migResourceName(std::string_view profile);
// The profile a MIG resource names, or empty when it names none.
std::string_view migProfileOf(std::string_view resource);

// A decoder's shape where serving memory depends on it: its layers and the
// keys and values each keeps per token (Hugging Face's config.json:
// num_hidden_layers, num_key_value_heads, head_dim or hidden_size /
// num_attention_heads). Zero: not known.
struct ModelShape {
  int layers = 0;
  int kvHeads = 0;
  int headDim = 0;

  bool known() const { return layers > 0 && kvHeads > 0 && headDim > 0; }
  // The keys and values one token keeps, at `bytesPerValue` each: 2 x layers
  // x KV heads x head dimension (Llama-2-13B at fp16: 0.78 MiB).
  double kvBytesPerToken(double bytesPerValue) const {
    return 2.0 * layers * kvHeads * headDim * bytesPerValue;
  }
  bool operator==(const ModelShape&) const = default;
};

// A well-known model, named by spec.model.family: its parameters and
// shape, with where they come from.
struct ModelFamily {
  std::string name;  // "llama-2-13b"
  std::uint64_t parameters = 0;
  // What it is, where a spec names the family and no architecture: a
  // Transformer decoder has a shape; Speech and Diffusion models do not.
  Architecture architecture = Architecture::Transformer;
  ModelShape shape;
  // A mixture of experts: each token runs expertsPerToken of experts, so a
  // decode step reads the shared weights and the experts its tokens route
  // to, and computes activeParameters a token. 0: dense.
  int experts = 0;
  int expertsPerToken = 0;
  std::uint64_t activeParameters = 0;
  std::string source;

  // The share of the weights one decode step of `sequences` tokens reads,
  // each token routed to expertsPerToken of the experts independently: 1
  // for a dense model.
  double weightsReadShare(int sequences) const;
  // The share of the parameters a token computes with: 1 for a dense model.
  double activeShare() const;
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
  // Device counts one replica may use, ascending: how a model can be split
  // (tensor parallelism) and what the device plugin schedules. Catalog data
  // for Neuron; powers of two up to acceleratorCount when not given.
  std::vector<int> allowedAcceleratorCounts;
  Interconnect interconnect = Interconnect::None;  // between this type's devices
  // Between nodes: the Elastic Fabric Adapters the type takes (EC2's
  // MaximumEfaInterfaces, which Karpenter advertises as the node resource
  // vpc.amazonaws.com/efa) and its network bandwidth. 0 interfaces: no EFA,
  // so a replica never spans two of its nodes.
  int efaInterfaces = 0;
  double networkGbps = 0;
  int vcpus = 0;
  double memoryGiB = 0;
  // What pods can request on a node of this type (EKS reservations taken
  // off); see allocatableOf().
  double allocatableCpu = 0;
  double allocatableMemoryGiB = 0;
  std::optional<double> onDemand;
  std::optional<double> spot;
  // CPU instances: whole-instance estimates, so CPU and accelerators compare.
  double cpuTflops = 0;
  double cpuMemoryBandwidthGBs = 0;
};

// Dense throughput at a precision: int8 and int4 are weight-only
// quantization (W8A16, W4A16), so their arithmetic runs at fp16.
double denseTflops(const AcceleratorSpec& spec, Precision precision);

// Where the prices in force come from.
enum class PricesFrom : std::uint8_t {
  Catalog,    // the catalog file's own
  PriceList,  // an imported AWS Price List (core/catalog/price_list.h)
  Karpenter,  // Karpenter's offering prices (core/catalog/offering_prices.h)
};

// What Karpenter's NodeOverlays did to the prices (core/cluster/node_overlays.h).
struct NodeOverlaysApplied {
  int offeringsPriced = 0;  // offerings (or types x capacity types) an overlay priced
  // Overlays the operator did not apply, each with why: refused by
  // Karpenter, in conflict with another of the same weight, or selecting
  // on a label the operator cannot see (a NodePool's name or its own
  // labels; a zone where the prices have none).
  std::vector<std::string> notApplied;

  bool operator==(const NodeOverlaysApplied&) const = default;
};

struct Catalog {
  std::string region;
  std::string pricesAsOf;
  std::string pricesSource;  // where the on-demand prices come from
  // Whose spot prices these are when not `region`'s (a price list for
  // another region replaced the on-demand ones); empty: `region`'s.
  std::string spotPricesRegion;
  std::vector<AcceleratorSpec> accelerators;
  std::vector<InstanceType> instances;  // sorted by type name
  std::vector<ModelFamily> modelFamilies;
  PricesFrom pricesFrom = PricesFrom::Catalog;
  NodeOverlaysApplied nodeOverlays;

  const InstanceType* find(std::string_view type) const;
  int indexOf(std::string_view type) const;
  const AcceleratorSpec* acceleratorOf(const InstanceType& instance) const {
    return instance.accelerator < 0 ? nullptr : &accelerators[instance.accelerator];
  }
  int acceleratorIndex(std::string_view name) const;
  const ModelFamily* modelFamily(std::string_view name) const;  // null: not listed
  // "llama-2-7b, llama-2-13b, ...": for errors; with decodersOnly, the
  // families with a shape (a KV cache to size).
  std::string modelFamilyNames(bool decodersOnly = false) const;
};

// What pods can request on a node with this many vCPUs and GiB, as EKS
// computes it: kube-reserved CPU (6% of the first core, 1% of the second,
// 0.5% of the next two, 0.25% of the rest); memory less Karpenter's 7.5% VM
// overhead, 255 MiB + 11 MiB per pod of kube-reserved and 100 MiB of
// eviction threshold. Karpenter's instance-types reference lists the
// results (c5.xlarge: 3920m; 32 GiB with 58 pods: 29317Mi).
struct Allocatable {
  double cpu = 0;
  double memoryGiB = 0;
};
Allocatable allocatableOf(int vcpus, double memoryGiB);

// What the catalog's prices are, in words, for every answer that shows a
// price: "us-east-1 prices of 2026-02-09 (the catalog's)", or with an
// imported price list "eu-central-1 on-demand prices of 2026-11-20 (an
// imported price list), spot the catalog's us-east-1 snapshot"; with
// Karpenter's "us-east-1 prices Karpenter pays (its offering prices, read
// live)".
std::string pricesText(const Catalog& catalog);

// Reads a catalog document (config/catalog.yaml, as JSON). Errors name the
// entry and the field: "instances[g5.xlarge].onDemand: must be ...".
Result<Catalog> parseCatalog(const nlohmann::json& document);

}  // namespace gpuplacement::core
