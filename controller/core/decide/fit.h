#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/catalog/catalog.h"
#include "core/catalog/types.h"
#include "core/decide/performance_model.h"
#include "core/decide/training_layout.h"

namespace gpuplacement::core {

// The vCPUs a CPU replica requests. A model server's minimum: one core for
// the model, one for the server; a 2-vCPU node (1.93 allocatable) holds none.
inline constexpr double kCpuRequestVcpus = 2;

// What one replica needs, from the intent, the memory model and the policy.
struct Requirement {
  double requiredGiB = 0;  // device memory on one device: weights x overhead (training: its state)
  // With a serving load: the KV cache within requiredGiB, the KV heads it
  // splits by, and the reserve each device keeps (core/decide/weighing.h).
  double kvCacheGiB = 0;
  int kvHeads = 0;
  double reserveGiB = 0;
  // Serving: the share of peak memory bandwidth the stack reaches on each
  // tier (rules servingBandwidth), by Tier; 1 for other work.
  std::array<double, 4> bandwidthShare{1, 1, 1, 1};
  // Online serving: the sequences a replica decodes at once (the load's;
  // 1 without one): its tokens a second are these over a step's latency.
  int sequences = 1;
  // The output tokens a second the whole service must carry; 0: none.
  double tokensPerSecond = 0;
  // A mixture of experts: the share of its weights a decode step reads
  // (the experts its tokens route to); 1 for a dense model.
  double expertsReadShare = 1;
  // The prompt tokens a replica prefills for each it outputs (the load's
  // mean lengths); 0: prefill not counted.
  double promptTokensPerOutputToken = 0;
  double bandwidthShareOn(Tier tier) const {
    return bandwidthShare[static_cast<std::size_t>(tier)];
  }
  double weightsGiB = 0;  // read once per unit of work
  Architecture architecture = Architecture::Transformer;
  Work work;  // one unit of work: workOf(architecture, parameters, weights)
  Precision precision = Precision::FP16;
  bool training = false;
  TrainingMemory trainingMemory;  // training: its memory by part (requiredGiB in all)
  bool inference = false;         // a latency estimate applies
  bool batch = false;  // batch inference: measured by throughput, not by one unit's latency
  std::optional<double> latencyTargetMs;  // inference kinds only
  double fillLimit = 0.9;                 // of the memory a replica is given
  bool karpenter = false;                 // Karpenter launches the nodes
  bool slices = false;  // a MIG slice may hold a replica (the sharing allowed is Isolated or Any)
  bool timeSlicing = false;  // so may replicas of a time-sliced GPU (the sharing allowed is Any)
  double runtimeGiB = 0;     // host memory of the framework's process before a model loads
  double stagingGiB = 0;     // host memory a GPU replica loads its weights through
  double podCpu = 0;         // the pod template's own requests per replica,
  double podMemoryGiB = 0;   // which the node's allocatable must hold too
};

// The device memory a replica needs over `devices` devices: requiredGiB,
// and with a serving load each further device's reserve, and the KV heads
// a device holds twice where there are more devices than KV heads (a
// tensor-parallel degree past them copies heads rather than splitting
// them: vLLM replicates KV heads so).
double requiredOn(const Requirement& need, int devices);

// How long a prompt of `promptTokens` takes to its first output token on a
// replica with room for it: the prompt's FLOPs at the roofline's sustained
// throughput, or the weights read once, whichever is longer, plus the
// all-reduces; queueing behind other requests is not in it.
double timeToFirstTokenMs(const Roofline& roofline, const Requirement& need, int promptTokens);

// Why a replica cannot run on an instance type, hardware-wise.
enum class Misfit : std::uint8_t {
  None,
  Precision,  // the accelerator does not run the precision natively
  Karpenter,  // a fractional GPU, which Karpenter never launches for a GPU pod
  Memory,     // too small even split across the most devices allowed
  Split,      // a device count the model cannot be split across here
  Cpu,        // a CPU node too small for one replica's request
  Pod,        // the node's allocatable cpu or memory cannot hold the pod template's requests
};

// How one replica sits on a node of one instance type, before prices.
struct Fit {
  Misfit misfit = Misfit::None;
  int devices = 0;      // accelerators per replica (1 for a MIG slice); 0 for CPU
  int migProfile = -1;  // a slice: index into the accelerator's migProfiles; -1: whole
  // Time-sliced: the ways the GPU is sliced; devices is the replicas of
  // it taken, in proportion to the memory needed. 0: not time-sliced.
  int timeSlices = 0;
  int replicasPerNode = 0;  // replicas one node holds
  // Nodes one replica spans (a group: one pod on each, `devices` each);
  // 1: the replica is one pod on one node.
  int nodes = 1;
  // Training across nodes: the parallel degrees that hold it there.
  TrainingLayout layout;
  double share = 0;             // the fraction of the node one replica uses
  double availableGiB = 0;      // device memory (CPU: memory request) the replica gets
  double offeredGiB = 0;        // the most one replica could fill here, after the fill limit
  int neededDevices = 0;        // the fewest that hold the model (devices may be more)
  double cpuRequest = 0;        // CPU placements
  double memoryRequestGiB = 0;  // host memory: the model and runtime (CPU), the runtime (GPU)
  // Training and batch inference: sustained TFLOPS of the replica (large
  // batches are compute-bound). Online inference: units of work a second at
  // batch 1 (1,000 / latencyMs), so it saturates as latency does.
  double performance = 0;
  Roofline roofline;         // inference: the estimate per unit, and what bounds it
  double latencyMs = 0;      // roofline.ms(); 0 when not estimated
  bool meetsLatency = true;  // no target, or the estimate is within it

  bool fits() const { return misfit == Misfit::None; }
};

// The fewest devices (CPU: the request) that hold the model under the fill
// limit, raised to the first count that meets the latency target when one
// is given (or to the fastest count when none does).
Fit fitReplica(const Catalog& catalog, const InstanceType& instance, const Requirement& need);

// The ways one replica may sit on an instance type that any objective could
// want, the same set whatever the objective: the fewest devices that hold
// the model and, for work split across devices (training; serving a
// Transformer online), the count where more devices stop paying (each step
// up the allowed counts must make the replica kWorthwhileGain faster), and
// the first count that meets the latency target when the fewest do not (or
// the fastest, when none does). Where slices are allowed and the GPU has
// MIG, also the smallest profile of `profiles` (a bit per index into the
// accelerator's: those the cluster's nodes advertise) that holds the model
// and meets the target (the fastest that holds it, when none does); else,
// where time-slicing is allowed and the type's one GPU is sliced
// `timeSlices` ways, the fewest of its replicas whose share of the memory
// holds the model. Last. Returns how many; out[0] says why when none fits
// (0).
using FitChoices = std::array<Fit, 6>;
int fitChoices(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
               FitChoices& out, unsigned profiles = 0, int timeSlices = 0);
inline constexpr double kWorthwhileGain = 1.10;

// The same for a given device count, a MIG profile (its index; -1: whole
// devices) or replicas of a GPU time-sliced `timeSlices` ways: a placement
// already in force.
Fit fitWithDevices(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
                   int devices, int migProfile = -1, int timeSlices = 0);

// A replica no node holds, across a group of nodes of the type: each node
// one pod with the fewest allowed devices that, on every node of the
// group, hold the model (core/decide/performance_model.h for its speed).
// `nodes` per group, or 0: the fewest, up to kMaxNodesPerReplica. Misfit
// Memory when they do not hold it.
Fit fitAcrossNodes(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
                   int nodes);

// A unit of work can be no shorter than reading every weight once: weight
// bytes / aggregate memory bandwidth (the memory side of the roofline).
double tokenLatencyMs(double weightsGiB, double bandwidthGBs);

// A CPU replica's memory request for a model that needs `requiredGiB`: the
// need over the fill limit plus the runtime, rounded up to 256 MiB.
double cpuMemoryRequestGiB(double requiredGiB, double fillLimit, double runtimeGiB = 0);

// A GPU or Neuron replica's host memory request: the runtime plus what its
// weights are loaded through, rounded up to 256 MiB.
double hostMemoryRequestGiB(const Requirement& need);

}  // namespace gpuplacement::core
