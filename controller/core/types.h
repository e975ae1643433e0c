#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gpuplacement::core {

// The vocabularies of the API. Each enum's names are its CRD spelling; input
// is matched case-insensitively and ignoring '-' and '_', so "on-demand",
// "ONDEMAND" and "OnDemand" are one value.

enum class Tier : std::uint8_t { NVIDIA, Trainium, Inferentia, CPU };
enum class WorkloadKind : std::uint8_t { Training, FineTuning, Inference, BatchInference };
enum class Precision : std::uint8_t { FP32, FP16, BF16, FP8, INT8, INT4 };
enum class Framework : std::uint8_t { PyTorch, TensorFlow, JAX, ONNX, Other };
enum class Architecture : std::uint8_t { Transformer, Diffusion, CNN, Speech, Other };
enum class Objective : std::uint8_t { CostOptimized, Balanced, MaxPerformance };
enum class CapacityType : std::uint8_t { OnDemand, Spot, Any };
enum class CostModel : std::uint8_t { AcceleratorShare, WholeInstance };
enum class LabelScheme : std::uint8_t { InstanceType, Karpenter, GPUFeatureDiscovery };

template <typename E>
struct EnumNames;

#define GPUPLACEMENT_ENUM_NAMES(Enum, What, ...)                                  \
  template <>                                                                     \
  struct EnumNames<Enum> {                                                        \
    static constexpr std::string_view what = What;                                \
    static constexpr auto names = std::to_array<std::string_view>({__VA_ARGS__}); \
  }

GPUPLACEMENT_ENUM_NAMES(Tier, "tier", "NVIDIA", "Trainium", "Inferentia", "CPU");
GPUPLACEMENT_ENUM_NAMES(WorkloadKind, "workload kind", "Training", "FineTuning", "Inference",
                        "BatchInference");
GPUPLACEMENT_ENUM_NAMES(Precision, "precision", "fp32", "fp16", "bf16", "fp8", "int8", "int4");
GPUPLACEMENT_ENUM_NAMES(Framework, "framework", "PyTorch", "TensorFlow", "JAX", "ONNX", "Other");
GPUPLACEMENT_ENUM_NAMES(Architecture, "architecture", "Transformer", "Diffusion", "CNN", "Speech",
                        "Other");
GPUPLACEMENT_ENUM_NAMES(Objective, "objective", "CostOptimized", "Balanced", "MaxPerformance");
GPUPLACEMENT_ENUM_NAMES(CapacityType, "capacity type", "OnDemand", "Spot", "Any");
GPUPLACEMENT_ENUM_NAMES(CostModel, "cost model", "AcceleratorShare", "WholeInstance");
GPUPLACEMENT_ENUM_NAMES(LabelScheme, "label scheme", "InstanceType", "Karpenter",
                        "GPUFeatureDiscovery");

#undef GPUPLACEMENT_ENUM_NAMES

template <typename E>
constexpr std::string_view nameOf(E value) {
  return EnumNames<E>::names[static_cast<std::size_t>(value)];
}

template <typename E>
constexpr std::size_t enumCount() {
  return EnumNames<E>::names.size();
}

// "a, b or c": the allowed values, for error messages.
template <typename E>
std::string allowedValues() {
  std::string text;
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) {
      text += i + 1 == names.size() ? " or " : ", ";
    }
    text += names[i];
  }
  return text;
}

namespace detail {
bool sameName(std::string_view input, std::string_view name);
}

template <typename E>
Result<E> parseEnum(std::string_view text) {
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (detail::sameName(text, names[i])) {
      return static_cast<E>(i);
    }
  }
  return Error{"", "\"" + std::string(text) + "\" is not a valid " +
                       std::string(EnumNames<E>::what) + " (use " + allowedValues<E>() + ")"};
}

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

}  // namespace gpuplacement::core
