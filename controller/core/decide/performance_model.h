#pragma once

#include <algorithm>
#include <cstdint>

#include "core/catalog/types.h"

namespace gpuplacement::core {

// How fast a replica runs, as a roofline: a unit of work takes at least the
// bytes it reads over memory bandwidth and at least its floating-point work
// over sustained dense throughput, whichever is larger, plus the all-reduces
// that splitting it across devices costs. Every constant below is an
// assumption, named once here and in docs/placement-engine.md
// ("Performance model"), where the sourced facts behind it are listed.

// What latencyTargetMs measures, by architecture: the time of one output
// token (Transformer decode), one denoising step (Diffusion), or one request
// (CNN: one image; Speech: one 30-second window through the encoder; Other:
// one forward pass).
enum class LatencyUnit : std::uint8_t { OutputToken, DiffusionStep, Request };
LatencyUnit latencyUnitOf(Architecture architecture);
const char* latencyUnitName(LatencyUnit unit);  // "output token", "diffusion step", "request"

// The sustained fraction of dense peak throughput that tuned kernels reach
// (model FLOPs utilization); bandwidth is taken at its peak, a lower bound.
inline constexpr double kComputeUtilization = 0.4;
// Work of one unit per parameter, FLOPs = k x parameters:
//   Transformer and Other: 2 (one multiply-add per weight per token, batch 1).
//   Diffusion: 2 x 860 latent positions-equivalent x 2 for classifier-free
//     guidance: 12 TFLOPs a guided step for SDXL (3.5B) at 1024x1024, an
//     estimate scaled from SD 1.5's 1.68 at 512x512 (smaller images take
//     less: SD 1.5 at 512x512 is overestimated about twice).
//   CNN: 2 x 164, calibrated on ResNet-50 at 224x224 (4.1 GMACs, 25.6M).
//   Speech: 1,500 (the encoder, about half the parameters, over the 1,500
//     frames of a 30-second window: 2 x 0.5 x 1,500).
inline constexpr double kDiffusionFlopsPerParameter = 2.0 * 860 * 2;
inline constexpr double kCnnFlopsPerParameter = 2.0 * 164;
inline constexpr double kSpeechFlopsPerParameter = 1500;
// Scaling: a replica split across more devices never gains more than the
// devices add. It keeps scalingPerDoubling of linear speed-up per doubling
// of devices (lower on slower links: NVSwitch 0.95, NeuronLink 0.93, NVLink
// 0.92, PCIe 0.85), and serving pays two all-reduces per layer per unit.
double scalingPerDoubling(Interconnect link);
double scalingEfficiency(int devices, Interconnect link);  // per doubling, compounded
double allReduceMicroseconds(Interconnect link);
// Layers of a dense model of this size, for the all-reduces it needs
// (Llama: 1B 16, 7B 32, 13B 40, 70B 80, 405B 126).
int layersOf(std::uint64_t parameters);

// The work of one unit at batch 1, worked out once per decision.
struct Work {
  double bytes = 0;  // every weight read once
  double flops = 0;
  int layers = 0;  // layersOf(parameters): the all-reduces of a split replica
};
Work workOf(Architecture architecture, std::uint64_t parameters, double weightsBytes);

struct Roofline {
  double memoryMs = 0;         // bytes over the devices' peak bandwidth
  double computeMs = 0;        // FLOPs over their sustained dense throughput
  double communicationMs = 0;  // the all-reduces of a split replica
  double ms() const { return std::max(memoryMs, computeMs) + communicationMs; }
  bool computeBound() const { return computeMs > memoryMs; }
};

// One unit on `devices` devices of this throughput and bandwidth each (CPU:
// devices 1 with the replica's share of the node).
Roofline rooflineOf(const Work& work, double tflopsPerDevice, double bandwidthGBsPerDevice,
                    int devices, Interconnect link);

// Sustained training throughput of one replica across `devices`.
double trainingTflops(double tflopsPerDevice, int devices, Interconnect link);

// A replica across a group of nodes, over EFA. Serving runs tensor parallel
// within a node and pipeline parallel across nodes (vLLM's advice for
// serving across nodes), so a unit passes through every node in turn: each
// reads and computes its share of the layers on its devices, then hands
// the activations to the next node. The sum is one node's roofline over the
// whole model, plus a hop between nodes: no faster than one node could be,
// only larger. Pipelining more batches through the stages carries more
// tokens a second; that is not counted (the lower side). Training, split
// by core/decide/training_layout.h, keeps kCrossNodeScalingPerDoubling of
// linear speed-up per doubling of nodes: activations and gradients cross
// EFA, slower than the links inside a node.
inline constexpr double kCrossNodeHopMicroseconds = 30;
inline constexpr double kCrossNodeScalingPerDoubling = 0.9;
// The most nodes one replica is spread over.
inline constexpr int kMaxNodesPerReplica = 32;
Roofline rooflineAcrossNodes(const Work& work, double tflopsPerDevice, double bandwidthGBsPerDevice,
                             int devicesPerNode, Interconnect link, int nodes);
double trainingTflopsAcrossNodes(double tflopsPerDevice, int devicesPerNode, Interconnect link,
                                 int nodes);

}  // namespace gpuplacement::core
