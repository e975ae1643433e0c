#include "core/fit.h"

#include <algorithm>
#include <cmath>

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
  return fit;
}

Fit fitCpu(const InstanceType& instance, const Requirement& need) {
  Fit fit;
  fit.cpuRequest = kCpuRequestVcpus;
  fit.memoryRequestGiB = cpuMemoryRequestGiB(need.requiredGiB, need.fillLimit);
  fit.offeredGiB = instance.allocatableMemoryGiB * need.fillLimit;
  const int byCpu =
      static_cast<int>(std::floor(instance.allocatableCpu / fit.cpuRequest + kEpsilon));
  const int byMemory =
      static_cast<int>(std::floor(instance.allocatableMemoryGiB / fit.memoryRequestGiB + kEpsilon));
  fit.replicasPerNode = std::min(byCpu, byMemory);
  if (fit.replicasPerNode < 1) {
    fit.misfit = byMemory < 1 ? Misfit::Memory : Misfit::Cpu;
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
  return fit;
}

}  // namespace gpuplacement::core
