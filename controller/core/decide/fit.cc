#include "core/decide/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/catalog/quantity.h"

namespace gpuplacement::core {

namespace {

constexpr double kEpsilon = 1e-9;

// How long one unit of work takes on `devices` of this accelerator.
Roofline rooflineOn(const AcceleratorSpec& spec, const InstanceType& instance,
                    const Requirement& need, int devices) {
  return rooflineOf(need.work, denseTflops(spec, need.precision),
                    spec.memoryBandwidthGBs * need.bandwidthShareOn(instance.tier), devices,
                    instance.interconnect);
}

// The output tokens a second a serving replica carries: a decode step
// gives each of its sequences one token, and each output token brings its
// share of prompt tokens to prefill, which are compute-bound (a token's
// FLOPs at the roofline's sustained throughput). Counted one after the
// other: chunked prefill overlaps them in part, so this is the lower side.
double servingTokensPerSecond(const Roofline& roofline, double latencyMs, const Requirement& need) {
  const double msPerToken = latencyMs / need.sequences +
                            need.promptTokensPerOutputToken * roofline.computeMs / need.sequences;
  return msPerToken > 0 ? 1000 / msPerToken : 0;
}

// How fast a replica runs on `devices` of an accelerated instance.
struct Speed {
  Roofline roofline;  // inference
  double latencyMs = 0;
  double performance = 0;
  bool meetsLatency = true;
};

Speed speedOn(const AcceleratorSpec& spec, const InstanceType& instance, const Requirement& need,
              int devices) {
  Speed speed;
  if (need.training || need.batch) {
    speed.performance =
        trainingTflops(denseTflops(spec, need.precision), devices, instance.interconnect);
  }
  if (need.inference) {
    speed.roofline = rooflineOn(spec, instance, need, devices);
    speed.latencyMs = speed.roofline.ms();
    if (!need.batch) {
      speed.performance = servingTokensPerSecond(speed.roofline, speed.latencyMs, need);
    }
    speed.meetsLatency = !need.latencyTargetMs || speed.latencyMs <= *need.latencyTargetMs;
  }
  return speed;
}

// How fast a replica runs on one MIG instance: its sevenths of the SMs and
// its eighths of the memory bandwidth, alone (a slice is never split).
Speed speedOnSlice(const AcceleratorSpec& spec, const MigProfile& profile,
                   const Requirement& need) {
  const double tflops = denseTflops(spec, need.precision) * migComputeShare(profile);
  Speed speed;
  if (need.training || need.batch) {
    speed.performance = trainingTflops(tflops, 1, Interconnect::None);
  }
  if (need.inference) {
    speed.roofline = rooflineOf(
        need.work, tflops, migBandwidthGBs(spec, profile) * need.bandwidthShareOn(Tier::NVIDIA), 1,
        Interconnect::None);
    speed.latencyMs = speed.roofline.ms();
    if (!need.batch) {
      speed.performance = servingTokensPerSecond(speed.roofline, speed.latencyMs, need);
    }
    speed.meetsLatency = !need.latencyTargetMs || speed.latencyMs <= *need.latencyTargetMs;
  }
  return speed;
}

// Fills in what follows from a device count on an accelerated instance,
// running at `speed` there.
void describeDevices(const AcceleratorSpec& spec, const InstanceType& instance,
                     const Requirement& need, int devices, const Speed& speed, Fit& fit) {
  fit.devices = devices;
  fit.replicasPerNode = instance.acceleratorCount / devices;
  fit.share = static_cast<double>(devices) / instance.acceleratorCount;
  fit.availableGiB = devices * spec.memoryGiB;
  fit.memoryRequestGiB = hostMemoryRequestGiB(need);
  fit.roofline = speed.roofline;
  fit.latencyMs = speed.latencyMs;
  fit.performance = speed.performance;
  fit.meetsLatency = speed.meetsLatency;
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
  // Most nodes hold every replica their devices allow: checked by
  // multiplying, as the count itself is needed only when they do not.
  const double whole = fit.replicasPerNode - kEpsilon;
  const double memory = std::max(need.podMemoryGiB, fit.memoryRequestGiB);
  if (fit.replicasPerNode >= 1 && need.podCpu * whole <= instance.allocatableCpu &&
      memory * whole <= instance.allocatableMemoryGiB) {
    return;
  }
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

// Work that a replica splits across devices: training (data and model
// parallel) and serving a Transformer online (tensor parallel). Anything
// else on more devices is more replicas.
bool splits(const Requirement& need) {
  return need.training || (!need.batch && need.architecture == Architecture::Transformer);
}

// The fewest allowed devices that hold the model, or misfit. Written in
// place: a Fit is copied often enough on the hot path as it is.
void leastDevices(const AcceleratorSpec& spec, const InstanceType& instance,
                  const Requirement& need, Fit& fit) {
  fit = Fit{};
  const auto& allowed = instance.allowedAcceleratorCounts;
  const double perDevice = spec.memoryGiB * need.fillLimit;
  fit.offeredGiB = perDevice * allowed.back();
  if (fit.misfit = unusable(spec, need); !fit.fits()) {
    return;
  }
  const auto holds = std::find_if(allowed.begin(), allowed.end(), [&](int count) {
    return count * perDevice + kEpsilon >= requiredOn(need, count);
  });
  if (holds == allowed.end()) {
    fit.misfit = Misfit::Memory;
    return;
  }
  describeDevices(spec, instance, need, *holds, speedOn(spec, instance, need, *holds), fit);
  fit.neededDevices = *holds;
  limitByPodRequests(instance, need, fit);
}

// Fills in a replica on one instance of MIG profile `index`: a node holds
// as many replicas as its GPUs hold instances, and one pays that share.
void describeSlice(const AcceleratorSpec& spec, const InstanceType& instance,
                   const Requirement& need, int index, const Speed& speed, Fit& fit) {
  const auto& profile = spec.migProfiles[static_cast<std::size_t>(index)];
  fit.devices = 1;
  fit.migProfile = index;
  fit.replicasPerNode = instance.acceleratorCount * profile.perGpu;
  fit.share = 1.0 / fit.replicasPerNode;
  fit.availableGiB = migMemoryGiB(spec, profile);
  fit.memoryRequestGiB = hostMemoryRequestGiB(need);
  fit.roofline = speed.roofline;
  fit.latencyMs = speed.latencyMs;
  fit.performance = speed.performance;
  fit.meetsLatency = speed.meetsLatency;
  fit.neededDevices = 1;
  limitByPodRequests(instance, need, fit);
}

// The smallest MIG profile (the catalog lists them smallest first) that
// holds the model under the fill limit and meets the latency target, or
// the fastest that holds it when none does; false when none holds it.
bool leastSlice(const AcceleratorSpec& spec, const InstanceType& instance, const Requirement& need,
                unsigned profiles, const Fit& least, Fit& fit) {
  int chosen = -1;
  Speed chosenSpeed;
  for (std::size_t i = 0; i < spec.migProfiles.size(); ++i) {
    const auto& profile = spec.migProfiles[i];
    if ((profiles & (1U << i)) == 0 ||
        migMemoryGiB(spec, profile) * need.fillLimit + kEpsilon < need.requiredGiB) {
      continue;
    }
    const Speed speed = speedOnSlice(spec, profile, need);
    if (chosen < 0 || speed.meetsLatency ||
        (!chosenSpeed.meetsLatency && speed.latencyMs < chosenSpeed.latencyMs - kEpsilon)) {
      chosen = static_cast<int>(i);
      chosenSpeed = speed;
    }
    if (speed.meetsLatency) {
      break;
    }
  }
  if (chosen < 0) {
    return false;
  }
  fit = Fit{};
  fit.offeredGiB = least.offeredGiB;
  describeSlice(spec, instance, need, chosen, chosenSpeed, fit);
  return fit.fits();
}

// Replicas of a GPU time-sliced `ways` ways: `taken` of them, and the
// memory they stand for. Time-slicing isolates nothing: a replica is
// placed where its model fits the share of memory its replicas stand for,
// so that co-tenants who keep to theirs fit together; and it runs as fast
// as the GPU does when every other replica is busy too (one time slice in
// `ways - taken + 1`).
void describeTimeSliced(const AcceleratorSpec& spec, const InstanceType& instance,
                        const Requirement& need, int ways, int taken, Fit& fit) {
  Speed speed = speedOn(spec, instance, need, 1);
  const int tenants = ways - taken + 1;
  speed.roofline.computeMs *= tenants;
  speed.roofline.memoryMs *= tenants;
  speed.roofline.communicationMs *= tenants;
  speed.latencyMs = speed.roofline.ms();
  speed.performance /= tenants;
  speed.meetsLatency = !need.latencyTargetMs || speed.latencyMs <= *need.latencyTargetMs;
  if (need.inference && !need.batch) {
    speed.performance = servingTokensPerSecond(speed.roofline, speed.latencyMs, need);
  }
  fit.devices = taken;
  fit.timeSlices = ways;
  fit.replicasPerNode = ways / taken;
  fit.share = static_cast<double>(taken) / ways;
  fit.availableGiB = spec.memoryGiB * taken / ways;
  fit.memoryRequestGiB = hostMemoryRequestGiB(need);
  fit.roofline = speed.roofline;
  fit.latencyMs = speed.latencyMs;
  fit.performance = speed.performance;
  fit.meetsLatency = speed.meetsLatency;
  fit.neededDevices = taken;
  limitByPodRequests(instance, need, fit);
}

// The fewest replicas of a GPU time-sliced `ways` ways whose share of its
// memory holds the model under the fill limit; false when it takes them
// all (a whole GPU then) or the type has more than one GPU (the device
// plugin hands out replicas of any of them, so a pod's could span two).
bool leastReplicas(const AcceleratorSpec& spec, const InstanceType& instance,
                   const Requirement& need, int ways, const Fit& least, Fit& fit) {
  if (ways < 2 || instance.acceleratorCount != 1) {
    return false;
  }
  const double perReplica = spec.memoryGiB * need.fillLimit / ways;
  const int taken = static_cast<int>(std::ceil(need.requiredGiB / perReplica - kEpsilon));
  if (taken >= ways) {
    return false;
  }
  fit = Fit{};
  fit.offeredGiB = least.offeredGiB;
  describeTimeSliced(spec, instance, need, ways, std::max(taken, 1), fit);
  return fit.fits();
}

void withDevices(const AcceleratorSpec& spec, const InstanceType& instance, const Requirement& need,
                 const Fit& least, int devices, const Speed& speed, Fit& fit) {
  fit = Fit{};
  fit.offeredGiB = least.offeredGiB;
  describeDevices(spec, instance, need, devices, speed, fit);
  fit.neededDevices = least.neededDevices;
  limitByPodRequests(instance, need, fit);
}

int choicesAccelerated(const AcceleratorSpec& spec, const InstanceType& instance,
                       const Requirement& need, unsigned profiles, int timeSlices,
                       FitChoices& out) {
  leastDevices(spec, instance, need, out[0]);
  if (!out[0].fits()) {
    return 0;
  }
  const bool slices = need.slices && profiles != 0;
  // A share last: a MIG slice where the type has them, else replicas of a
  // time-sliced GPU.
  const auto share = [&](int at) {
    if (slices) {
      return leastSlice(spec, instance, need, profiles, out[0], out[at]);
    }
    return need.timeSlicing && leastReplicas(spec, instance, need, timeSlices, out[0], out[at]);
  };
  if (!splits(need)) {
    return share(1) ? 2 : 1;
  }
  // Up the allowed counts, by speed alone (the pod's room does not depend
  // on the count): every count while the walk pays, the first count that
  // meets the target when the fewest devices do not, and the fastest when
  // none does. Only those become fits, at the speeds the walk found. Every
  // count walked, not only the last: which of them is best per dollar does
  // not depend on the target, so a tighter target the answer still meets
  // never brings a better one into view.
  const bool seeking = need.latencyTargetMs && !out[0].meetsLatency;
  struct Count {
    int devices = 0;
    Speed speed;
  };
  std::array<Count, 3> walked{};  // the counts past the fewest the walk paid for
  int walkedCount = 0;
  Count meeting;
  Count fastest{out[0].devices, {}};
  double walkedPerformance = out[0].performance;
  double fastestMs = out[0].latencyMs;
  bool walking = true;
  for (int devices : instance.allowedAcceleratorCounts) {
    if (devices <= out[0].devices) {
      continue;
    }
    const Speed speed = speedOn(spec, instance, need, devices);
    walking = walking && walkedCount < static_cast<int>(walked.size()) &&
              speed.performance >= walkedPerformance * kWorthwhileGain;
    if (walking) {
      walked[static_cast<std::size_t>(walkedCount++)] = {devices, speed};
      walkedPerformance = speed.performance;
    }
    if (seeking && meeting.devices == 0 && speed.meetsLatency) {
      meeting = {devices, speed};
    }
    if (speed.latencyMs < fastestMs - kEpsilon) {
      fastest = {devices, speed};
      fastestMs = speed.latencyMs;
    }
    if (!walking && (!seeking || meeting.devices != 0)) {
      break;
    }
  }
  int count = 1;
  const auto add = [&](const Count& choice) {
    for (int i = 0; i < count; ++i) {
      if (out[i].devices == choice.devices) {
        return;  // out[0]'s count among them: only counts walked are added
      }
    }
    withDevices(spec, instance, need, out[0], choice.devices, choice.speed, out[count]);
    ++count;
  };
  if (meeting.devices != 0) {
    add(meeting);
  } else if (seeking) {
    add(fastest);
  }
  for (int i = 0; i < walkedCount; ++i) {
    add(walked[static_cast<std::size_t>(i)]);
  }
  if (share(count)) {
    ++count;
  }
  return count;
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
    fit.roofline =
        rooflineOf(need.work, tflops,
                   cpuShare * instance.cpuMemoryBandwidthGBs * need.bandwidthShareOn(Tier::CPU), 1,
                   Interconnect::None);
    fit.latencyMs = fit.roofline.ms();
    fit.performance = need.batch          ? trainingTflops(tflops, 1, Interconnect::None)
                      : fit.latencyMs > 0 ? 1000 * need.sequences / fit.latencyMs
                                          : 0;
    fit.meetsLatency = !need.latencyTargetMs || fit.latencyMs <= *need.latencyTargetMs;
  }
  return fit;
}

}  // namespace

double tokenLatencyMs(double weightsGiB, double bandwidthGBs) {
  return bandwidthGBs > 0 ? weightsGiB * kBytesPerGiB / (bandwidthGBs * 1e9) * 1000 : 0;
}

double timeToFirstTokenMs(const Roofline& roofline, const Requirement& need, int promptTokens) {
  const double computeMs = promptTokens * roofline.computeMs / need.sequences;
  const double readBytes = need.weightsGiB + need.kvCacheGiB;
  const double weightsMs =
      readBytes > 0 ? roofline.memoryMs * need.weightsGiB / readBytes : roofline.memoryMs;
  return std::max(computeMs, weightsMs) + roofline.communicationMs;
}

double requiredOn(const Requirement& need, int devices) {
  if (devices <= 1) {
    return need.requiredGiB;
  }
  double required = need.requiredGiB + need.reserveGiB * (devices - 1);
  if (need.kvHeads > 0 && devices > need.kvHeads) {
    required += need.kvCacheGiB * (static_cast<double>(devices) / need.kvHeads - 1);
  }
  return required;
}

double cpuMemoryRequestGiB(double requiredGiB, double fillLimit, double runtimeGiB) {
  const double quarters = std::ceil((requiredGiB / fillLimit + runtimeGiB) * 4 - kEpsilon);
  return std::max(quarters, 1.0) / 4;
}

double hostMemoryRequestGiB(const Requirement& need) {
  const double host = need.runtimeGiB + need.stagingGiB;
  return host > 0 ? std::ceil(host * 4 - kEpsilon) / 4 : 0;
}

Fit fitAcrossNodes(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
                   int nodes) {
  Fit fit;
  const auto* spec = catalog.acceleratorOf(instance);
  if (!spec) {
    fit.misfit = Misfit::Memory;
    return fit;
  }
  const auto& allowed = instance.allowedAcceleratorCounts;
  const double perDevice = spec->memoryGiB * need.fillLimit;
  const auto holds = [&](int groupNodes, int devices) {
    return groupNodes * devices * perDevice + kEpsilon >= requiredOn(need, groupNodes * devices);
  };
  int groupNodes = nodes;
  if (groupNodes <= 0) {
    groupNodes = 2;
    while (groupNodes < kMaxNodesPerReplica && !holds(groupNodes, allowed.back())) {
      ++groupNodes;
    }
  }
  fit.offeredGiB = perDevice * allowed.back() * groupNodes;
  if (fit.misfit = unusable(*spec, need); !fit.fits()) {
    return fit;
  }
  const auto devices = std::find_if(allowed.begin(), allowed.end(),
                                    [&](int count) { return holds(groupNodes, count); });
  if (groupNodes < 2 || devices == allowed.end()) {
    fit.misfit = Misfit::Memory;
    return fit;
  }
  if (need.training) {
    fit.layout =
        trainingLayout(need.trainingMemory, groupNodes, *devices, need.work.layers, perDevice);
    if (!fit.layout.found()) {
      fit.misfit = Misfit::Split;
      return fit;
    }
  }
  Speed speed;
  const double tflops = denseTflops(*spec, need.precision);
  if (need.training || need.batch) {
    speed.performance =
        trainingTflopsAcrossNodes(tflops, *devices, instance.interconnect, groupNodes);
  }
  if (need.inference) {
    speed.roofline = rooflineAcrossNodes(
        need.work, tflops, spec->memoryBandwidthGBs * need.bandwidthShareOn(instance.tier),
        *devices, instance.interconnect, groupNodes);
    speed.latencyMs = speed.roofline.ms();
    if (!need.batch) {
      speed.performance = servingTokensPerSecond(speed.roofline, speed.latencyMs, need);
    }
    speed.meetsLatency = !need.latencyTargetMs || speed.latencyMs <= *need.latencyTargetMs;
  }
  describeDevices(*spec, instance, need, *devices, speed, fit);
  // One pod of the group on each node, whatever devices it leaves.
  fit.nodes = groupNodes;
  fit.replicasPerNode = 1;
  fit.share = 1;
  fit.availableGiB *= groupNodes;
  fit.neededDevices = *devices * groupNodes;
  limitByPodRequests(instance, need, fit);
  return fit;
}

Fit fitReplica(const Catalog& catalog, const InstanceType& instance, const Requirement& need) {
  FitChoices choices;
  const int count = fitChoices(catalog, instance, need, choices);
  // Of the choices, the fewest devices that meet the target, else the fastest.
  const Fit* best = &choices[0];
  for (int i = 1; i < count && !best->meetsLatency; ++i) {
    if (choices[i].meetsLatency || choices[i].latencyMs < best->latencyMs - kEpsilon) {
      best = &choices[i];
    }
  }
  return *best;
}

Fit fitWithDevices(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
                   int devices, int migProfile, int timeSlices) {
  const auto* spec = catalog.acceleratorOf(instance);
  if (!spec) {
    return fitCpu(instance, need);
  }
  Fit fit;
  if (timeSlices > 1) {
    const int taken = std::clamp(devices, 1, timeSlices);
    fit.offeredGiB = spec->memoryGiB * need.fillLimit * taken / timeSlices;
    if (fit.misfit = unusable(*spec, need); !fit.fits()) {
      return fit;
    }
    if (fit.offeredGiB + kEpsilon < need.requiredGiB) {
      fit.misfit = Misfit::Memory;
      return fit;
    }
    describeTimeSliced(*spec, instance, need, timeSlices, taken, fit);
    return fit;
  }
  if (migProfile >= 0 && static_cast<std::size_t>(migProfile) < spec->migProfiles.size()) {
    const auto& profile = spec->migProfiles[static_cast<std::size_t>(migProfile)];
    fit.offeredGiB = migMemoryGiB(*spec, profile) * need.fillLimit;
    if (fit.misfit = unusable(*spec, need); !fit.fits()) {
      return fit;
    }
    if (fit.offeredGiB + kEpsilon < need.requiredGiB) {
      fit.misfit = Misfit::Memory;
      return fit;
    }
    describeSlice(*spec, instance, need, migProfile, speedOnSlice(*spec, profile, need), fit);
    return fit;
  }
  fit.offeredGiB = spec->memoryGiB * need.fillLimit * std::max(devices, 0);
  if (fit.misfit = unusable(*spec, need); !fit.fits()) {
    return fit;
  }
  const auto& allowed = instance.allowedAcceleratorCounts;
  if (std::find(allowed.begin(), allowed.end(), devices) == allowed.end()) {
    fit.misfit = Misfit::Split;
    return fit;
  }
  if (fit.offeredGiB + kEpsilon < requiredOn(need, devices)) {
    fit.misfit = Misfit::Memory;
    return fit;
  }
  describeDevices(*spec, instance, need, devices, speedOn(*spec, instance, need, devices), fit);
  fit.neededDevices = devices;
  limitByPodRequests(instance, need, fit);
  return fit;
}

int fitChoices(const Catalog& catalog, const InstanceType& instance, const Requirement& need,
               FitChoices& out, unsigned profiles, int timeSlices) {
  const auto* spec = catalog.acceleratorOf(instance);
  if (spec) {
    return choicesAccelerated(*spec, instance, need, profiles, timeSlices, out);
  }
  out[0] = fitCpu(instance, need);
  return out[0].fits() ? 1 : 0;
}

}  // namespace gpuplacement::core
