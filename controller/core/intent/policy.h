#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/catalog/rules.h"
#include "core/catalog/types.h"
#include "core/kinds/toleration.h"

namespace gpuplacement::core {

// Where the candidates of a decision come from (PlacementPolicy
// spec.capacity.source).
enum class CapacitySource : std::uint8_t { Auto, Nodes, NodePools, None };

}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::CapacitySource> {
  static constexpr std::string_view what = "capacity source";
  static constexpr auto names =
      std::to_array<std::string_view>({"Auto", "Nodes", "NodePools", "None"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

// Memory needed = parameters x bytes per parameter x overhead. The defaults
// and why:
//   training 9.0, applied to 2 bytes a parameter whatever the storage
//     precision: Adam keeps 16-bit weights and gradients (4 bytes), fp32
//     master weights (4) and two fp32 moments (8), 16 bytes a parameter
//     (ZeRO, Rajbhandari et al. 2019), plus activations, taken as 2 bytes a
//     parameter with activation checkpointing (an assumption; raise it for
//     long sequences or large micro-batches). Full training at int8 or int4
//     is refused: quantized bases are trained through adapters (QLoRA).
//   fineTuning 1.5: parameter-efficient fine-tuning (LoRA, or QLoRA over an
//     int8/int4 base): frozen weights, small adapters with their optimizer
//     state, and activations; the seeds' figure. Full fine-tuning is training.
//   inference and batchInference 1.2: weights plus KV cache and activations
//     (seed 004).
//   runtime: host memory of the serving or training process before a
//     model loads (interpreter, framework, CUDA or Neuron runtime), added
//     to every pod's memory request. Assumptions, overridable per framework.
//   servingReserveGiB 1.5: with a serving load stated, the device memory
//     each device of a replica keeps besides the weights and the KV cache:
//     the CUDA context (527 MiB measured on an H200, 2026-11-27, issue 43)
//     and the activations of a step (0.3 GiB at 16 sequences of 4,096
//     tokens of Llama-2-13B there), with room for a prefill chunk's. An
//     assumption anchored on those two figures.
struct MemoryOverheads {
  double training = 9.0;
  double fineTuning = 1.5;
  double inference = 1.2;
  double batchInference = 1.2;
  double servingReserveGiB = 1.5;
  // GiB by Framework: PyTorch, TensorFlow, JAX, ONNX, Other, vLLM, Triton.
  std::array<double, 7> runtime = {1.0, 2.0, 1.0, 1.0, 1.0, 6.0, 1.5};

  double runtimeGiB(Framework framework) const {
    return runtime[static_cast<std::size_t>(framework)];
  }

  double forKind(WorkloadKind kind) const {
    switch (kind) {
      case WorkloadKind::Training:
        return training;
      case WorkloadKind::FineTuning:
        return fineTuning;
      case WorkloadKind::Inference:
        return inference;
      case WorkloadKind::BatchInference:
        return batchInference;
    }
    return inference;
  }
};

struct PriceOverride {
  std::optional<double> onDemand;
  std::optional<double> spot;
};

// Which node label tells Karpenter (or a node group) spot from on-demand.
// An empty key writes no capacity-type selector.
struct CapacityTypeLabel {
  std::string key = "karpenter.sh/capacity-type";
  std::string onDemand = "on-demand";
  std::string spot = "spot";
  std::string reserved = "reserved";  // a managed node group's: CAPACITY_BLOCK
};

struct TierSettings {
  std::string resourceName;  // nvidia.com/gpu, aws.amazon.com/neuron; empty for CPU
  std::vector<Toleration> tolerations;
};

// How the controller moves workloads when prices or rules change.
struct ReplacementSettings {
  double minSavingsPercent = 10;  // hysteresis: smaller savings never move a workload
  std::chrono::seconds cooldown{std::chrono::hours(1)};
  int maxConcurrentRollouts = 2;
};

// Where candidates come from and how long a type may leave pods unscheduled
// (PlacementPolicy spec.capacity).
struct CapacitySettings {
  // Auto: NodePools when Karpenter's CRD is served, else Nodes. None: every
  // catalog type is a candidate (the behaviour without a cluster).
  CapacitySource source = CapacitySource::Auto;
  std::chrono::seconds fallbackAfter{std::chrono::minutes(5)};
  std::chrono::seconds retryAfter{std::chrono::minutes(30)};
  // Online serving (kind Inference) asking for Any capacity may run on spot:
  // off by default, since an interruption drops requests (seed 004).
  bool spotForServing = false;
  // Whether fallback may leave the tier of the type it left (a CPU model
  // onto a GPU at several times the cost, say). Off by default: the
  // fallback stays within that tier, or the workload reads NoCapacity.
  bool fallbackAcrossTiers = false;
};

// What a workload whose spec.constraints.sharing is Auto may share, by
// kind (PlacementPolicy spec.sharing): serving takes a MIG slice that holds
// it; training, whose steps want every SM, takes whole devices.
struct SharingSettings {
  DeviceSharing inference = DeviceSharing::Isolated;  // Inference and BatchInference
  DeviceSharing training = DeviceSharing::None;       // Training and FineTuning

  bool operator==(const SharingSettings&) const = default;
};

// Everything a PlacementPolicy can set; the defaults are the built-in policy.
struct Policy {
  std::map<std::string, PriceOverride> prices;
  PriceSharing priceSharing = PriceSharing::None;  // whether Karpenter weighs them too
  std::set<std::string> disabledInstanceTypes;
  double hoursPerMonth = 730;
  // WholeInstance (default): replicas pack onto nodes of the chosen type
  // and pay for those nodes. AcceleratorShare: a replica pays its share of
  // a node, as if other workloads filled the rest (shared, packed nodes).
  CostModel costModel = CostModel::WholeInstance;
  MemoryOverheads memoryOverheads;
  // How full a model may fill the memory it is given: accelerator memory,
  // or a CPU replica's memory request. The rest is headroom for the runtime,
  // fragmentation and activation peaks.
  double memoryFillLimit = 0.9;
  // Rule knobs; nullopt keeps the rules file's value.
  std::optional<double> lowLatencyBelowMs;
  std::optional<double> realtimeBelowMs;
  std::optional<std::vector<Framework>> neuronFrameworks;
  std::optional<std::vector<Architecture>> neuronArchitectures;
  std::set<std::string> disabledRules;
  LabelScheme labelScheme = LabelScheme::Auto;
  PlaceAt placeAt = PlaceAt::Auto;
  CapacityTypeLabel capacityTypeLabel;
  bool capacityTypeLabelSet = false;  // nodeLabels.capacityType given: never detected
  CapacitySettings capacity;
  SharingSettings sharing;
  std::array<TierSettings, 4> tiers = defaultTiers();
  ReplacementSettings replacement;

  const TierSettings& tier(Tier tier) const { return tiers[static_cast<std::size_t>(tier)]; }
  static std::array<TierSettings, 4> defaultTiers();
};

// Reads a PlacementPolicy's spec. Instance types and rule names are checked
// against the catalog and rules, so a typo is an error, not a silent no-op.
// Field paths start at "spec".
Result<Policy> parsePolicySpec(const nlohmann::json& spec, const Catalog& catalog,
                               const RuleSet& rules);

}  // namespace gpuplacement::core
