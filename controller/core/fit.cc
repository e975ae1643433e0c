#include "core/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gpuplacement::core {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kEpsilon = 1e-9;

// How long one unit of work takes on `devices` of this accelerator.
Roofline rooflineOn(const AcceleratorSpec& spec, const InstanceType& instance,
                    const Requirement& need, int devices) {
  return rooflineOf(workOf(need.architecture, need.parameters, need.weightsGiB * kGiB),
                    need.parameters, denseTflops(spec, need.precision), spec.memoryBandwidthGBs,
                    devices, instance.interconnect);
}

// Fills in what follows from a device count on an accelerated instance.
void describeDevices(const AcceleratorSpec& spec, const InstanceType& instance,
                     const Requirement& need, int devices, Fit& fit) {
  fit.devices = devices;
  fit.replicasPerNode = instance.acceleratorCount / devices;
  fit.share = static_cast<double>(devices) / instance.acceleratorCount;
  fit.availableGiB = devices * spec.memoryGiB;
  fit.memoryRequestGiB = hostMemoryRequestGiB(need);
  if (need.training) {
    fit.performance =
        trainingTflops(denseTflops(spec, need.precision), devices, instance.interconnect);
  }
  if (need.inference) {
    fit.roofline = rooflineOn(spec, instance, need, devices);
    fit.latencyMs = fit.roofline.ms();
    fit.performance = need.batch ? trainingTflops(denseTflops(spec, need.precision), devices,
                                                  instance.interconnect)
                      : fit.latencyMs > 0 ? 1000 / fit.latencyMs
                                          : 0;
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
// The host memory counts the larger of the team's request and the
// placement's (the runtime), as the pod will ask for.
int replicasByPodRequests(const InstanceType& instance, const Requirement& need,
                          double hostMemoryGiB) {
  int replicas = std::numeric_limits<int>::max();
  if (need.podCpu > 0) {
    replicas = std::min(
        replicas, static_cast<int>(std::floor(instance.allocatableCpu / need.podCpu + kEpsilon)));
  }
  const double memory = std::max(need.podMemoryGiB, hostMemoryGiB);
  if (memory > 0) {
    replicas = std::min(
        replicas, static_cast<int>(std::floor(instance.allocatableMemoryGiB / memory + kEpsilon)));
  }
  return replicas;
}

// Devices are not all a pod needs: a node whose allocatable cpu or memory
// cannot hold the pod template's own requests leaves the pod Pending (a
// 4-CPU, 32Gi vLLM container on a g6e.xlarge, 3.92 CPUs and 27.6 GiB
// allocatable), and holds fewer replicas than it has devices for.
void limitByPodRequests(const InstanceType& instance, const Requirement& need, Fit& fit) {
  const int replicas = replicasByPodRequests(instance, need, fit.memoryRequestGiB);
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
  int devices = *holds;
  if (need.inference && need.latencyTargetMs) {
    // More devices read the weights in parallel: the first count that meets
    // the target, or the fastest when none does.
    double fastestMs = std::numeric_limits<double>::max();
    for (auto count = holds; count != allowed.end(); ++count) {
      const double ms = rooflineOn(spec, instance, need, *count).ms();
      if (ms <= *need.latencyTargetMs) {
        devices = *count;
        break;
      }
      if (ms < fastestMs - kEpsilon) {
        fastestMs = ms;
        devices = *count;
      }
    }
  }
  describeDevices(spec, instance, need, devices, fit);
  fit.neededDevices = *holds;
  limitByPodRequests(instance, need, fit);
  return fit;
}

Fit fitCpu(const InstanceType& instance, const Requirement& need) {
  Fit fit;
  fit.cpuRequest = kCpuRequestVcpus;
  fit.memoryRequestGiB = cpuMemoryRequestGiB(need.requiredGiB, need.fillLimit, need.runtimeGiB);
  fit.offeredGiB = std::max(instance.allocatableMemoryGiB - need.runtimeGiB, 0.0) * need.fillLimit;
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
  fit.availableGiB = fit.memoryRequestGiB - need.runtimeGiB;
  // The replica computes on its own cores and reads memory at its cores'
  // share of the node's bandwidth (the catalog's figure is per vCPU x vCPUs).
  const double tflops = cpuShare * instance.cpuTflops;
  if (need.training) {
    fit.performance = trainingTflops(tflops, 1, Interconnect::None);
  }
  if (need.inference) {
    fit.roofline = rooflineOf(workOf(need.architecture, need.parameters, need.weightsGiB * kGiB),
                              need.parameters, tflops, cpuShare * instance.cpuMemoryBandwidthGBs, 1,
                              Interconnect::None);
    fit.latencyMs = fit.roofline.ms();
    fit.performance = need.batch          ? trainingTflops(tflops, 1, Interconnect::None)
                      : fit.latencyMs > 0 ? 1000 / fit.latencyMs
                                          : 0;
    fit.meetsLatency = !need.latencyTargetMs || fit.latencyMs <= *need.latencyTargetMs;
  }
  return fit;
}

}  // namespace

double tokenLatencyMs(double weightsGiB, double bandwidthGBs) {
  return bandwidthGBs > 0 ? weightsGiB * kGiB / (bandwidthGBs * 1e9) * 1000 : 0;
}

double cpuMemoryRequestGiB(double requiredGiB, double fillLimit, double runtimeGiB) {
  const double quarters = std::ceil((requiredGiB / fillLimit + runtimeGiB) * 4 - kEpsilon);
  return std::max(quarters, 1.0) / 4;
}

double hostMemoryRequestGiB(const Requirement& need) {
  const double host = need.runtimeGiB + need.stagingGiB;
  return host > 0 ? std::ceil(host * 4 - kEpsilon) / 4 : 0;
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
  fit.neededDevices = devices;
  limitByPodRequests(instance, need, fit);
  return fit;
}

std::optional<Fit> scaledFit(const Catalog& catalog, const InstanceType& instance,
                             const Requirement& need, const Fit& base) {
  const auto* spec = catalog.acceleratorOf(instance);
  // Online serving splits only Transformers across devices (tensor
  // parallelism); a diffusion, CNN or speech model, or a batch job, on more
  // devices is more replicas.
  const bool splits =
      need.training || (!need.batch && need.architecture == Architecture::Transformer);
  if (!spec || !base.fits() || !splits) {
    return std::nullopt;
  }
  std::optional<Fit> best;
  double performance = base.performance;
  for (int count : instance.allowedAcceleratorCounts) {
    if (count <= base.devices) {
      continue;
    }
    Fit fit;
    fit.offeredGiB = base.offeredGiB;
    describeDevices(*spec, instance, need, count, fit);
    fit.neededDevices = base.neededDevices;
    limitByPodRequests(instance, need, fit);
    if (!fit.fits() || fit.performance < performance * kWorthwhileGain) {
      break;
    }
    performance = fit.performance;
    best = fit;
  }
  return best;
}

}  // namespace gpuplacement::core
