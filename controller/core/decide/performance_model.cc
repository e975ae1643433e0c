#include "core/decide/performance_model.h"

#include <array>
#include <cmath>

namespace gpuplacement::core {

LatencyUnit latencyUnitOf(Architecture architecture) {
  switch (architecture) {
    case Architecture::Transformer:
      return LatencyUnit::OutputToken;
    case Architecture::Diffusion:
      return LatencyUnit::DiffusionStep;
    case Architecture::CNN:
    case Architecture::Speech:
    case Architecture::Other:
      break;
  }
  return LatencyUnit::Request;
}

const char* latencyUnitName(LatencyUnit unit) {
  switch (unit) {
    case LatencyUnit::OutputToken:
      return "output token";
    case LatencyUnit::DiffusionStep:
      return "diffusion step";
    case LatencyUnit::Request:
      break;
  }
  return "request";
}

double scalingPerDoubling(Interconnect link) {
  switch (link) {
    case Interconnect::NVSwitch:
      return 0.95;
    case Interconnect::NVLink:
      return 0.92;
    case Interconnect::NeuronLink:
      return 0.93;
    case Interconnect::PCIe:
    case Interconnect::None:
      break;
  }
  return 0.85;
}

double allReduceMicroseconds(Interconnect link) {
  switch (link) {
    case Interconnect::NVSwitch:
      return 15;
    case Interconnect::NVLink:
    case Interconnect::NeuronLink:
      return 20;
    case Interconnect::PCIe:
    case Interconnect::None:
      break;
  }
  return 40;
}

int layersOf(std::uint64_t parameters) {
  // 32 layers at 7B, growing as the 0.35th power of size: 16 at 1B, 40 at
  // 13B, 71 at 70B, 132 at 405B (Llama: 16, 40, 80, 126).
  const double layers = 32 * std::pow(static_cast<double>(parameters) / 7e9, 0.35);
  return std::clamp(static_cast<int>(std::lround(layers)), 4, 160);
}

Work workOf(Architecture architecture, std::uint64_t parameters, double weightsBytes) {
  const auto p = static_cast<double>(parameters);
  double perParameter = 2;
  switch (architecture) {
    case Architecture::Diffusion:
      perParameter = kDiffusionFlopsPerParameter;
      break;
    case Architecture::CNN:
      perParameter = kCnnFlopsPerParameter;
      break;
    case Architecture::Speech:
      perParameter = kSpeechFlopsPerParameter;
      break;
    case Architecture::Transformer:
    case Architecture::Other:
      break;
  }
  return Work{weightsBytes, p * perParameter, layersOf(parameters)};
}

Roofline rooflineOf(const Work& work, double tflopsPerDevice, double bandwidthGBsPerDevice,
                    int devices, Interconnect link) {
  Roofline roofline;
  const int n = std::max(devices, 1);
  // A smaller share of the model per device is read and computed less
  // efficiently (smaller kernels, more synchronization).
  const double scaled = n * scalingEfficiency(n, link);
  if (bandwidthGBsPerDevice > 0) {
    roofline.memoryMs = work.bytes / (scaled * bandwidthGBsPerDevice * 1e9) * 1000;
  }
  if (tflopsPerDevice > 0) {
    roofline.computeMs =
        work.flops / (scaled * tflopsPerDevice * kComputeUtilization * 1e12) * 1000;
  }
  if (n > 1) {
    roofline.communicationMs = 2.0 * work.layers * allReduceMicroseconds(link) / 1000;
  }
  return roofline;
}

namespace {

// scalingEfficiency as a table, as it is asked for every device count of
// every candidate: built once, before any decision.
constexpr int kTabled = 64;
using ScalingTable = std::array<std::array<double, kTabled + 1>, enumCount<Interconnect>()>;

ScalingTable tabulateScaling() {
  ScalingTable values{};
  for (std::size_t link = 0; link < values.size(); ++link) {
    for (int n = 1; n <= kTabled; ++n) {
      values[link][n] = std::pow(scalingPerDoubling(static_cast<Interconnect>(link)),
                                 std::log2(static_cast<double>(n)));
    }
  }
  return values;
}

const ScalingTable kScaling = tabulateScaling();

}  // namespace

double scalingEfficiency(int devices, Interconnect link) {
  const int n = std::max(devices, 1);
  if (n <= kTabled) {
    return kScaling[static_cast<std::size_t>(link)][n];
  }
  return std::pow(scalingPerDoubling(link), std::log2(static_cast<double>(n)));
}

double trainingTflops(double tflopsPerDevice, int devices, Interconnect link) {
  const int n = std::max(devices, 1);
  return n * tflopsPerDevice * kComputeUtilization * scalingEfficiency(n, link);
}

Roofline rooflineAcrossNodes(const Work& work, double tflopsPerDevice, double bandwidthGBsPerDevice,
                             int devicesPerNode, Interconnect link, int nodes) {
  Roofline roofline =
      rooflineOf(work, tflopsPerDevice, bandwidthGBsPerDevice, devicesPerNode, link);
  roofline.communicationMs += std::max(nodes - 1, 0) * kCrossNodeHopMicroseconds / 1000;
  return roofline;
}

double trainingTflopsAcrossNodes(double tflopsPerDevice, int devicesPerNode, Interconnect link,
                                 int nodes) {
  const int n = std::max(nodes, 1);
  return n * trainingTflops(tflopsPerDevice, devicesPerNode, link) *
         std::pow(kCrossNodeScalingPerDoubling, std::log2(static_cast<double>(n)));
}

}  // namespace gpuplacement::core
