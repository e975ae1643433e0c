#include "core/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplacement::core {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kEpsilon = 1e-9;

// Fills in what follows from a device count on an accelerated instance.
void describeDevices(const AcceleratorSpec& spec, const InstanceType& instance,
                     const Requirement& need, int devices, Fit& fit) {
  fit.devices = devices;
  fit.replicasPerNode = instance.acceleratorCount / devices;
  fit.share = static_cast<double>(devices) / instance.acceleratorCount;
  fit.availableGiB = devices * spec.memoryGiB;
  fit.performance = devices * (need.training ? spec.fp16Tflops : spec.memoryBandwidthGBs);
  if (need.inference) {
    fit.latencyMs = tokenLatencyMs(need.weightsGiB, devices * spec.memoryBandwidthGBs);
    fit.meetsLatency = !need.latencyTargetMs || fit.latencyMs <= *need.latencyTargetMs;
  }
}

// Hardware that cannot run the workload at all, whatever the count.
Misfit unusable(const AcceleratorSpec& spec, const Requirement& need) {
  if (!spec.precisions.has(need.precision)) {
    return Misfit::Precision;
  }
  if (need.karpenter && spec.fractional) {
    return Misfit::Karpenter;
  }
  return Misfit::None;
}

// Replicas one node holds by the pod template's own cpu and memory requests.
int replicasByPodRequests(const InstanceType& instance, const Requirement& need) {
  int replicas = std::numeric_limits<int>::max();
  if (need.podCpu > 0) {
    replicas = std::min(
        replicas, static_cast<int>(std::floor(instance.allocatableCpu / need.podCpu + kEpsilon)));
  }
  if (need.podMemoryGiB > 0) {
    replicas = std::min(
        replicas,
        static_cast<int>(std::floor(instance.allocatableMemoryGiB / need.podMemoryGiB + kEpsilon)));
  }
  return replicas;
}

// Devices are not all a pod needs: a node whose allocatable cpu or memory
// cannot hold the pod template's own requests leaves the pod Pending (a
// 4-CPU, 32Gi vLLM container on a g6e.xlarge, 3.92 CPUs and 27.6 GiB
// allocatable), and holds fewer replicas than it has devices for.
void limitByPodRequests(const InstanceType& instance, const Requirement& need, Fit& fit) {
  const int replicas = replicasByPodRequests(instance, need);
  if (replicas < 1) {
    fit.misfit = Misfit::Pod;
    return;
  }
  if (replicas < fit.replicasPerNode) {
    fit.replicasPerNode = replicas;
    fit.share = std::max(fit.share, 1.0 / replicas);
  }
}

Fit fitAccelerated(const AcceleratorSpec& spec, const InstanceType& instance,
                   const Requirement& need) {
  Fit fit;
  const auto& allowed = instance.allowedAcceleratorCounts;
  const double perDevice = spec.memoryGiB * need.fillLimit;
  fit.offeredGiB = perDevice * allowed.back();
  if (fit.misfit = unusable(spec, need); !fit.fits()) {
    return fit;
  }
  const auto holds = std::find_if(allowed.begin(), allowed.end(), [&](int count) {
    return count * perDevice + kEpsilon >= need.requiredGiB;
  });
  if (holds == allowed.end()) {
    fit.misfit = Misfit::Memory;
    return fit;
  }
  int devices = need.fastest ? allowed.back() : *holds;
  if (need.inference && need.latencyTargetMs && !need.fastest) {
    // More devices read the weights in parallel: the first count that meets
    // the target, or the fastest this node has.
    const auto meets = std::find_if(holds, allowed.end(), [&](int count) {
      return tokenLatencyMs(need.weightsGiB, count * spec.memoryBandwidthGBs) <=
             *need.latencyTargetMs;
    });
    devices = meets == allowed.end() ? allowed.back() : *meets;
  }
  describeDevices(spec, instance, need, devices, fit);
  limitByPodRequests(instance, need, fit);
  return fit;
}

Fit fitCpu(const InstanceType& instance, const Requirement& need) {
  Fit fit;
  fit.cpuRequest = kCpuRequestVcpus;
  fit.memoryRequestGiB = cpuMemoryRequestGiB(need.requiredGiB, need.fillLimit);
  fit.offeredGiB = instance.allocatableMemoryGiB * need.fillLimit;
  // A team's own cpu and memory sizing stands where it is set (the
  // placement's request is a default for containers without one), so a
  // replica takes the larger of the two.
  const double cpu = std::max(fit.cpuRequest, need.podCpu);
  const double memory = std::max(fit.memoryRequestGiB, need.podMemoryGiB);
  const int byCpu = static_cast<int>(std::floor(instance.allocatableCpu / cpu + kEpsilon));
  const int byMemory =
      static_cast<int>(std::floor(instance.allocatableMemoryGiB / memory + kEpsilon));
  fit.replicasPerNode = std::min(byCpu, byMemory);
  if (fit.replicasPerNode < 1) {
    const bool pod = need.podCpu > fit.cpuRequest || need.podMemoryGiB > fit.memoryRequestGiB;
    fit.misfit = pod ? Misfit::Pod : byMemory < 1 ? Misfit::Memory : Misfit::Cpu;
    return fit;
  }
  const double cpuShare = fit.cpuRequest / instance.vcpus;
  fit.share = std::min(1.0, std::max(cpuShare, fit.memoryRequestGiB / instance.memoryGiB));
  fit.availableGiB = fit.memoryRequestGiB;
  fit.performance =
      cpuShare * (need.training ? instance.cpuTflops : instance.cpuMemoryBandwidthGBs);
  if (need.inference) {
    // The whole node's bandwidth: a bound the replica cannot beat.
    fit.latencyMs = tokenLatencyMs(need.weightsGiB, instance.cpuMemoryBandwidthGBs);
    fit.meetsLatency = !need.latencyTargetMs || fit.latencyMs <= *need.latencyTargetMs;
  }
  return fit;
}

}  // namespace

double tokenLatencyMs(double weightsGiB, double bandwidthGBs) {
  return bandwidthGBs > 0 ? weightsGiB * kGiB / (bandwidthGBs * 1e9) * 1000 : 0;
}

double cpuMemoryRequestGiB(double requiredGiB, double fillLimit) {
  const double quarters = std::ceil(requiredGiB / fillLimit * 4 - kEpsilon);
  return std::max(quarters, 1.0) / 4;
}

Fit fitReplica(const Catalog& catalog, const InstanceType& instance, const Requirement& need) {
  const auto* spec = catalog.acceleratorOf(instance);
  return spec ? fitAccelerated(*spec, instance, need) : fitCpu(instance, need);
}

Fit fitWithDevices(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
                   int devices) {
  const auto* spec = catalog.acceleratorOf(instance);
  if (!spec) {
    return fitCpu(instance, need);
  }
  Fit fit;
  fit.offeredGiB = spec->memoryGiB * need.fillLimit * std::max(devices, 0);
  if (fit.misfit = unusable(*spec, need); !fit.fits()) {
    return fit;
  }
  const auto& allowed = instance.allowedAcceleratorCounts;
  if (std::find(allowed.begin(), allowed.end(), devices) == allowed.end()) {
    fit.misfit = Misfit::Split;
    return fit;
  }
  if (fit.offeredGiB + kEpsilon < need.requiredGiB) {
    fit.misfit = Misfit::Memory;
    return fit;
  }
  describeDevices(*spec, instance, need, devices, fit);
  limitByPodRequests(instance, need, fit);
  return fit;
}

}  // namespace gpuplacement::core
