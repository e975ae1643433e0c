#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/enum_names.h"
#include "base/result.h"
#include "base/time_format.h"

namespace gpuplacement::core {

// The vocabulary every layer shares, used unqualified throughout core.
using base::allowedValues;
using base::enumCount;
using base::Error;
using base::nameOf;
using base::Ok;
using base::parseEnum;
using base::Result;
using base::Status;
using base::Timestamp;

// The vocabularies of the API. Each enum's names are its CRD spelling; input
// is matched case-insensitively and ignoring '-' and '_', so "on-demand",
// "ONDEMAND" and "OnDemand" are one value.

enum class Tier : std::uint8_t { NVIDIA, Trainium, Inferentia, CPU };
enum class WorkloadKind : std::uint8_t { Training, FineTuning, Inference, BatchInference };
enum class Precision : std::uint8_t { FP32, FP16, BF16, FP8, INT8, INT4 };
// vLLM and Triton are serving runtimes, named for their memory (runtime
// baselines), appended so stored values keep their meaning.
enum class Framework : std::uint8_t { PyTorch, TensorFlow, JAX, ONNX, Other, vLLM, Triton };
enum class Architecture : std::uint8_t { Transformer, Diffusion, CNN, Speech, Other };
enum class Objective : std::uint8_t { CostOptimized, Balanced, MaxPerformance };
// Mixed: half the replicas on each (the odd one on either), spread over the
// capacity-type label as Karpenter's documentation does. Reserved: nodes of
// a capacity reservation (an On-Demand Capacity Reservation or a Capacity
// Block), paid for whether used or not; never asked for, offered first
// where a workload may run on-demand.
enum class CapacityType : std::uint8_t { OnDemand, Spot, Any, Mixed, Reserved };
inline constexpr std::string_view kReservedNotAsked =
    "Reserved is not asked for: reserved nodes are offered first wherever a workload may run "
    "on-demand (OnDemand or Any)";
enum class CostModel : std::uint8_t { AcceleratorShare, WholeInstance };
// Auto: detected from the labels the cluster's nodes and NodePools carry
// (InstanceType when there is no cluster to look at).
enum class LabelScheme : std::uint8_t { InstanceType, Karpenter, GPUFeatureDiscovery, Auto };
// Where the node selector and tolerations go: the pod template, or each
// pod as it is created (behind a scheduling gate). Auto: the pod template,
// until an apply takes either field back whole (a GitOps tool re-applying
// a manifest that sets its own), then the pods (core/plan/template_patch.h).
enum class PlaceAt : std::uint8_t { Auto, PodTemplate, Pods };
// Whether a PlacementPolicy's own prices are Karpenter's too: None keeps
// them the operator's; NodeOverlay writes one NodeOverlay per price, so
// that Karpenter launches and consolidates by them (core/plan/price_sharing.h).
enum class PriceSharing : std::uint8_t { None, NodeOverlay };
// Whether a replica may take a share of a device rather than whole ones.
// Isolated: a MIG slice, whose memory, cache and SMs are its own. Any: a
// time-sliced replica too, which shares memory and faults with the others
// on its GPU. Auto (a workload's only): as the policy says for its kind.
enum class DeviceSharing : std::uint8_t { Auto, None, Isolated, Any };

// The part of a GPU a replica takes instead of whole devices: a MIG
// instance of a profile, or replicas of a GPU the device plugin
// time-slices `timeSlices` ways (the placement's acceleratorCount of them,
// in proportion to the memory it needs). Neither: whole devices.
struct DeviceShare {
  std::string migProfile;  // "1g.10gb"
  int timeSlices = 0;

  bool whole() const { return migProfile.empty() && timeSlices == 0; }
  bool operator==(const DeviceShare&) const = default;
};
// The link between the devices of one instance, which bounds how well a
// replica split across them scales (core/decide/performance_model.h).
enum class Interconnect : std::uint8_t { None, PCIe, NVLink, NVSwitch, NeuronLink };

}  // namespace gpuplacement::core

namespace gpuplacement::base {
#define GPUPLACEMENT_ENUM_NAMES(Enum, What, ...)                                  \
  template <>                                                                     \
  struct EnumNames<Enum> {                                                        \
    static constexpr std::string_view what = What;                                \
    static constexpr auto names = std::to_array<std::string_view>({__VA_ARGS__}); \
  }

GPUPLACEMENT_ENUM_NAMES(core::Tier, "tier", "NVIDIA", "Trainium", "Inferentia", "CPU");
GPUPLACEMENT_ENUM_NAMES(core::WorkloadKind, "workload kind", "Training", "FineTuning", "Inference",
                        "BatchInference");
GPUPLACEMENT_ENUM_NAMES(core::Precision, "precision", "fp32", "fp16", "bf16", "fp8", "int8",
                        "int4");
GPUPLACEMENT_ENUM_NAMES(core::Framework, "framework", "PyTorch", "TensorFlow", "JAX", "ONNX",
                        "Other", "vLLM", "Triton");
GPUPLACEMENT_ENUM_NAMES(core::Architecture, "architecture", "Transformer", "Diffusion", "CNN",
                        "Speech", "Other");
GPUPLACEMENT_ENUM_NAMES(core::Objective, "objective", "CostOptimized", "Balanced",
                        "MaxPerformance");
GPUPLACEMENT_ENUM_NAMES(core::CapacityType, "capacity type", "OnDemand", "Spot", "Any", "Mixed",
                        "Reserved");
GPUPLACEMENT_ENUM_NAMES(core::CostModel, "cost model", "AcceleratorShare", "WholeInstance");
GPUPLACEMENT_ENUM_NAMES(core::LabelScheme, "label scheme", "InstanceType", "Karpenter",
                        "GPUFeatureDiscovery", "Auto");
GPUPLACEMENT_ENUM_NAMES(core::PlaceAt, "place at", "Auto", "PodTemplate", "Pods");
GPUPLACEMENT_ENUM_NAMES(core::PriceSharing, "price sharing", "None", "NodeOverlay");
GPUPLACEMENT_ENUM_NAMES(core::DeviceSharing, "device sharing", "Auto", "None", "Isolated", "Any");
GPUPLACEMENT_ENUM_NAMES(core::Interconnect, "interconnect", "None", "PCIe", "NVLink", "NVSwitch",
                        "NeuronLink");

#undef GPUPLACEMENT_ENUM_NAMES

}  // namespace gpuplacement::base

namespace gpuplacement::core {

// Bytes one parameter takes at this precision.
constexpr double bytesPerParameter(Precision precision) {
  switch (precision) {
    case Precision::FP32:
      return 4;
    case Precision::FP16:
    case Precision::BF16:
      return 2;
    case Precision::FP8:
    case Precision::INT8:
      return 1;
    case Precision::INT4:
      return 0.5;
  }
  return 2;
}

constexpr bool isTraining(WorkloadKind kind) {
  return kind == WorkloadKind::Training || kind == WorkloadKind::FineTuning;
}

// A bit set over an enum's values; empty means "any".
template <typename E>
struct EnumSet {
  std::uint32_t bits = 0;
  bool any() const { return bits == 0; }
  bool contains(E value) const { return any() || (bits >> static_cast<unsigned>(value)) & 1U; }
  // Unlike contains(), an empty set holds nothing.
  bool has(E value) const { return (bits >> static_cast<unsigned>(value)) & 1U; }
  void insert(E value) { bits |= 1U << static_cast<unsigned>(value); }
};

}  // namespace gpuplacement::core
