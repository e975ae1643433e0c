#pragma once

#include <cstdint>
#include <optional>

#include "core/catalog.h"
#include "core/types.h"

namespace gpuplacement::core {

// The vCPUs a CPU replica requests. A model server's minimum: one core for
// the model, one for the server; a 2-vCPU node (1.93 allocatable) holds none.
inline constexpr double kCpuRequestVcpus = 2;

// What one replica needs, from the intent, the memory model and the policy.
struct Requirement {
  double requiredGiB = 0;  // weights x overhead
  double weightsGiB = 0;   // read once per generated token
  Precision precision = Precision::FP16;
  bool training = false;
  bool inference = false;                 // a latency estimate applies
  std::optional<double> latencyTargetMs;  // inference kinds only
  double fillLimit = 0.9;                 // of the memory a replica is given
  bool karpenter = false;                 // Karpenter launches the nodes
  bool fastest = false;                   // MaxPerformance: every device a replica may use
  double podCpu = 0;                      // the pod template's own requests per replica,
  double podMemoryGiB = 0;                // which the node's allocatable must hold too
};

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
  int devices = 0;              // accelerators per replica; 0 for CPU
  int replicasPerNode = 0;      // replicas one node holds
  double share = 0;             // the fraction of the node one replica uses
  double availableGiB = 0;      // device memory (CPU: memory request) the replica gets
  double offeredGiB = 0;        // the most one replica could fill here, after the fill limit
  double cpuRequest = 0;        // CPU placements
  double memoryRequestGiB = 0;  // CPU placements
  double performance = 0;       // TFLOPS (training) or GB/s (inference) of the replica
  double latencyMs = 0;         // lower bound per generated token; 0 when not estimated
  bool meetsLatency = true;     // no target, or the estimate is within it

  bool fits() const { return misfit == Misfit::None; }
};

// The fewest devices (CPU: the request) that hold the model under the fill
// limit, raised to the first count that meets the latency target when one
// is given (or to the fastest count when none does), or for MaxPerformance
// the most devices one replica may use.
Fit fitReplica(const Catalog& catalog, const InstanceType& instance, const Requirement& need);

// The same for a given device count (a placement already in force).
Fit fitWithDevices(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
                   int devices);

// Time to generate one token can be no shorter than reading every weight
// once: weight bytes / aggregate memory bandwidth. A lower bound: it ignores
// compute, KV-cache reads, interconnect and batching.
double tokenLatencyMs(double weightsGiB, double bandwidthGBs);

// A CPU replica's memory request for a model that needs `requiredGiB`: the
// need over the fill limit, rounded up to 256 MiB.
double cpuMemoryRequestGiB(double requiredGiB, double fillLimit);

}  // namespace gpuplacement::core
