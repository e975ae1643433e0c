#include "core/explain/explainer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "core/catalog/quantity.h"
#include "core/decide/render.h"
#include "core/explain/explainer_parts.h"

namespace gpuplacement::core {
namespace explaining {
namespace {

std::string tokensText(double tokens) {
  return base::formatCount(static_cast<long long>(std::floor(tokens)));
}

// "200 tokens a second", or "4 requests a second of 1,024 prompt and 256
// output tokens (1,024 tokens a second)".
std::string throughputTargetText(const ServingLoad& serving) {
  std::string tokens = base::formatCount(std::llround(serving.outputTokensPerSecond()));
  tokens += " tokens a second";
  if (serving.requestsPerSecond <= 0) {
    return tokens;
  }
  std::string text = base::formatFixed(serving.requestsPerSecond, 2);
  while (text.back() == '0') {
    text.pop_back();
  }
  if (text.back() == '.') {
    text.pop_back();
  }
  text += serving.requestsPerSecond == 1 ? " request a second of " : " requests a second of ";
  text += base::formatCount(serving.meanPromptTokens);
  text += " prompt and ";
  text += base::formatCount(serving.meanOutputTokens);
  text += " output tokens (";
  text += tokens;
  text += ")";
  return text;
}

// "16 sequences of 4,096 tokens: 50.0 GiB of fp16 KV cache at 0.78 MiB a
// token, beside 24.2 GiB of weights and 1.5 GiB of reserve a device"; or,
// without a load, what the overhead leaves for one.
std::string memoryNoteOf(const WorkloadIntent& intent, const MemoryEstimate& memory) {
  const bool served =
      (intent.kind == WorkloadKind::Inference || intent.kind == WorkloadKind::BatchInference) &&
      intent.architecture == Architecture::Transformer;
  if (!served) {
    return "";
  }
  const std::string perToken =
      formatFixed(memory.kvBytesPerToken / (1024.0 * 1024.0), 2) + " MiB a token";
  if (memory.serving.stated()) {
    const auto& serving = memory.serving;
    return std::to_string(serving.concurrentSequences) +
           (serving.concurrentSequences == 1 ? " sequence of " : " sequences of ") +
           tokensText(serving.contextTokens) + " tokens: " + formatGiB(memory.kvCacheGiB) +
           " GiB of " + std::string(nameOf(serving.kvPrecision)) + " KV cache at " + perToken +
           ", beside " + formatGiB(memory.weightsGiB) + " GiB of weights and " +
           formatGiB(memory.reserveGiB) + " GiB of reserve a device";
  }
  const double headroomGiB = memory.requiredGiB - memory.weightsGiB;
  std::string note = "no serving load stated (spec.workload.serving): the overhead's " +
                     formatGiB(headroomGiB) + " GiB beyond the weights stands for the KV cache " +
                     "and activations";
  if (memory.kvBytesPerToken > 0) {
    note += ", at most " + tokensText(headroomGiB * kBytesPerGiB / memory.kvBytesPerToken) +
            " tokens of fp16 KV cache at " + perToken + (intent.family.empty() ? "" : " (") +
            intent.family + (intent.family.empty() ? "" : ")") + " in all, less the runtime's own";
  }
  return note;
}

}  // namespace

Decision Explainer::explain(const Weighing& weighing) const {
  Decision decision;
  decision.memory = weighing.memory;
  const auto& request = weighing.request;
  decision.memoryNote = memoryNoteOf(request.intent, weighing.memory);
  decision.sizeBucket = knobs_.sizeBuckets[request.bucket].name;
  decision.latency = request.latency;
  if (!weighing.placed()) {
    explainFailure(weighing, decision);
    return decision;
  }
  choose(weighing, decision);
  if (weighing.rule == &userTiersRule_) {
    decision.ruleSource += "; " + userTiersNote(request.intent, request.bucket, request.latency);
  }
  return decision;
}

void Explainer::choose(const Weighing& weighing, Decision& decision) const {
  const auto& request = weighing.request;
  const auto& evaluation = weighing.evaluation;
  const Option& best = weighing.best();
  decision.placement = placementOf(best, request);
  decision.latencyTargetUnreachable = request.need.latencyTargetMs && !best.fit.meetsLatency;
  explainChoice(*weighing.rule, best, request, decision);
  if (best.fit.migProfile >= 0 || best.fit.timeSlices > 0) {
    explainSlice(best, evaluation, decision);
  }
  if (!evaluation.reservationPassedOver.empty()) {
    decision.reason += "; " + evaluation.reservationPassedOver;
  }
  if (evaluation.claimsUnwritable) {
    decision.reason +=
        "; MIG devices offered only through Dynamic Resource Allocation not considered: a "
        "Job's pod template cannot gain spec.resourceClaims once created, and a DeviceClass's "
        "extended resource cannot name a profile";
  }
  if (evaluation.devicesFixedOut) {
    const auto& fixed = request.intent.fixedDevices;
    decision.reason += "; only placements asked for with " + fixed.resource + ": " +
                       std::to_string(fixed.count) + " considered, as the pod set " + fixed.podSet +
                       " asks, which cannot change once it is created";
  }
  if (evaluation.spotWithheld) {
    decision.reason +=
        "; spot not considered: online serving on spot needs the policy's consent "
        "(PlacementPolicy spec.capacity.spotForServing)";
  }
  listRunnersUp(best, request, evaluation, decision);
  listUnoffered(&best, request, evaluation, decision);
  listRuledOut(request, evaluation, decision);
}

Placement Explainer::placementOf(const Option& option, const Request& request) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto& fit = option.fit;
  Placement placement = replicaShape(*catalog_, option.instance, fit, option.capacity,
                                     request.capacity, request.intent.claimsWritable);
  placement.latencyUnit = latencyUnitOf(request.intent.architecture);
  placement.hourlyCost = option.cost.perReplicaHourly;
  placement.monthlyCost = placement.hourlyCost * policy_.hoursPerMonth;
  // A replica across nodes is a group of them: the groups are the replicas.
  placement.replicas = fit.nodes > 1 ? replicasOf(fit, request) : request.intent.replicas;
  if (fit.nodes > 1 && !request.intent.groups.labels.empty()) {
    placement.networkDomainKey = request.networkDomainKey;
  }
  placement.totalHourlyCost = placement.hourlyCost * placement.replicas;
  placement.totalMonthlyCost = placement.monthlyCost * placement.replicas;
  // A share is one device's worth; whole devices need each one's reserve,
  // and KV heads copied past their count.
  placement.requiredMemoryGiB =
      fit.migProfile >= 0 || fit.timeSlices > 0
          ? request.need.requiredGiB
          : requiredOn(request.need, std::max(fit.devices, 1) * std::max(fit.nodes, 1));
  placement.availableMemoryGiB = fit.availableGiB;
  placement.memoryFillLimit = request.need.fillLimit;
  placement.performance = fit.performance;
  placement.performanceUnit =
      request.need.training || request.need.batch           ? "sustained TFLOPS"
      : placement.latencyUnit == LatencyUnit::OutputToken   ? "output tokens/s at batch 1"
      : placement.latencyUnit == LatencyUnit::DiffusionStep ? "diffusion steps/s at batch 1"
                                                            : "requests/s at batch 1";
  placement.costModel = option.cost.basis;
  placement.nodeHourlyCost = option.nodeHourly;
  if (option.capacity == CapacityType::Mixed) {
    const auto split = mixedSplit(replicasOf(fit, request));
    placement.onDemandReplicas = split.onDemand;
    placement.spotReplicas = split.spot;
    placement.spotNodeHourlyCost = option.spotNodeHourly;
  }
  if (option.capacity == CapacityType::Reserved && request.capacity) {
    placement.reservation = request.capacity->reservationsOf(option.instance);
  }
  placement.nodes = option.cost.nodes;
  placement.replicasPerNode = fit.replicasPerNode;
  placement.replicasOnIdle = option.cost.replicasOnIdle;
  if (option.cost.cluster) {
    placement.clusterHourlyCost = option.cost.marginalHourly;
  }
  placement.idleAccelerators = engine_.idleDevicesOf(option, request);
  placement.cpuRequest = fit.cpuRequest;
  placement.memoryRequestGiB = fit.memoryRequestGiB;
  placement.neededAccelerators = fit.neededDevices;
  if (request.need.inference) {
    placement.latencyMs = fit.latencyMs;
    placement.latencyComputeBound = fit.roofline.computeBound();
    placement.bandwidthUtilization = request.need.bandwidthShareOn(instance.tier);
    if (request.intent.serving.stated() && !request.need.batch) {
      placement.tokensPerSecondPerReplica = fit.performance;
      placement.replicasForThroughput = replicasToCarry(option, request);
      if (const int prompt = request.intent.serving.meanPromptTokens; prompt > 0) {
        placement.timeToFirstTokenMs = timeToFirstTokenMs(fit.roofline, request.need, prompt);
      }
    }
    const auto* basis = knobs_.servingBandwidthOf(instance.tier, request.intent.framework);
    placement.bandwidthAssumed = basis && basis->assumed;
  }
  placement.costNote = costNote(option, placement);
  if (const auto below = sizingBelowNeed(request.need, placement); !below.empty()) {
    placement.costNote += "; " + below;
  }
  return placement;
}

namespace {

// "tensor parallel 16 within a node over NeuronLink, pipeline parallel 3
// across nodes, no data parallelism: a device holds 24.7 GiB (weights and
// gradients 6.1, optimizer states 16.4, activations 2.2)".
std::string trainingLayoutText(const TrainingLayout& layout, std::string_view link) {
  std::vector<std::string> degrees;
  if (layout.tensor > 1) {
    degrees.push_back("tensor parallel " + std::to_string(layout.tensor) + " within a node over " +
                      std::string(link));
  }
  if (layout.pipeline > 1) {
    degrees.push_back("pipeline parallel " + std::to_string(layout.pipeline) + " across nodes");
  }
  degrees.push_back(layout.data > 1 ? "data parallel " + std::to_string(layout.data) +
                                          (layout.perDevice.optimizerGiB > 0
                                               ? " with the optimizer's states sharded over it"
                                               : "")
                                    : std::string("no data parallelism"));
  std::string text;
  for (const auto& degree : degrees) {
    text += (text.empty() ? "" : ", ") + degree;
  }
  const auto& part = layout.perDevice;
  text += ": a device holds " + base::formatGiB(part.totalGiB()) + " GiB (weights" +
          (part.optimizerGiB > 0 ? " and gradients " : " ") +
          base::formatGiB(part.weightsGradientsGiB);
  if (part.optimizerGiB > 0) {
    text += ", optimizer states " + base::formatGiB(part.optimizerGiB);
  }
  text += std::string(part.optimizerGiB > 0 ? ", activations " : ", adapters and activations ") +
          base::formatGiB(part.activationsGiB) + ")";
  return text;
}

}  // namespace

// "no single node holds it: 2 trn1.32xlarge nodes, 16 Trainium each, 32 in
// all, tensor parallel within a node over NeuronLink and pipeline parallel
// across nodes over EFA (8 interfaces, 800 Gbps a node)", and the group
// size to set where the target's is another (or, where the operator sets
// it, that it does).
std::string Explainer::acrossNodesText(const Placement& placement, const Request& request) const {
  const auto* instance = catalog_->find(placement.instanceType);
  const std::string link(instance ? nameOf(instance->interconnect) : "its links");
  const int nodes = placement.nodesPerReplica;
  std::string text = "no single node holds it: " + std::to_string(nodes) + " " +
                     placement.instanceType + " nodes, " +
                     std::to_string(placement.acceleratorCount) + " " + placement.accelerator +
                     " each, " + std::to_string(placement.acceleratorCount * nodes) + " in all, ";
  text += "joined by EFA (" + std::to_string(placement.efaInterfaces) + " interfaces, " +
          base::formatCount(std::llround(placement.networkGbps)) + " Gbps a node); ";
  text += placement.training.found() ? trainingLayoutText(placement.training, link)
                                     : "tensor parallel within a node over " + link +
                                           " and pipeline parallel across nodes";
  const auto& groups = request.intent.groups;
  if (!groups.labels.empty()) {
    text += std::string(", each group kept in one zone (a required pod affinity on ") + kZoneLabel +
            " by " + groups.labels.group + ")";
    if (const auto& key = placement.networkDomainKey; !key.empty()) {
      text += std::string(" and, where there is room, in one ") +
              (key == kPlacementGroupKey ? "EC2 placement group" : "network node") +
              " (a preferred pod affinity on " + key + ")";
    }
  } else if (groups.affinityFixed) {
    text += std::string(
                "; its pods' affinity is not the operator's to write, so a group stays in "
                "one zone only where the team keeps it there (a required pod affinity on ") +
            kZoneLabel + " in the manifest, or NodePools of one zone)";
  }
  if (groups.size > 0 && groups.size != nodes && groups.sizeSet) {
    text += "; groups of " + std::to_string(nodes) + " pods set in " + groups.sizeField + " (was " +
            std::to_string(groups.size) + ")";
  } else if (groups.size > 0 && groups.size != nodes) {
    text += "; a group needs " + std::to_string(nodes) + " pods, one a node, and " +
            groups.sizeField + " gives " + std::to_string(groups.size) +
            (groups.sizeFixed ? ": create it again with " : ": set it to ") + std::to_string(nodes);
  }
  return text;
}

void Explainer::explainChoice(const Rule& rule, const Option& best, const Request& request,
                              Decision& decision) const {
  const auto& instance = catalog_->instances[best.instance];
  const auto* accelerator = catalog_->acceleratorOf(instance);
  const auto objective = request.intent.objective;
  const char* superlative = objective == Objective::CostOptimized ? "the cheapest"
                            : objective == Objective::Balanced ? "the best performance per dollar"
                                                               : "the fastest";
  decision.rule = rule.name;
  decision.ruleSource = rule.source;
  const auto& placement = *decision.placement;
  // The rule's words name its candidate tiers; say which of them this
  // workload could not have, so "Inferentia2 competes" is not read as
  // "Inferentia2 was weighed".
  std::string leftOut;
  for (const Tier tier : {Tier::NVIDIA, Tier::Trainium, Tier::Inferentia, Tier::CPU}) {
    if (!rule.tiers.contains(tier)) {
      continue;
    }
    std::string why;
    if ((request.tiers & tierBit(tier)) == 0) {
      why = std::string(nameOf(tier)) + " left out by spec.constraints.tiers";
    } else if ((request.neuronBlocked & tierBit(tier)) != 0) {
      why = neuronIneligibility(tier, request.intent);
    }
    if (!why.empty()) {
      leftOut += (leftOut.empty() ? " (" : "; ") + why;
    }
  }
  if (!leftOut.empty()) {
    leftOut += ")";
  }
  decision.reason = rule.reason + leftOut + "; " + describeShape(instance, accelerator, best.fit) +
                    ", " + capacityLabel(best.capacity) + ", is " + superlative + " that holds " +
                    formatGiB(placement.requiredMemoryGiB) + " GiB at " +
                    formatMoney(best.cost.perReplicaHourly) + "/h per replica";
  if (placement.nodesPerReplica > 1) {
    decision.reason += "; " + acrossNodesText(placement, request);
  } else if (request.need.training && placement.acceleratorCount > placement.neededAccelerators &&
             placement.neededAccelerators > 0) {
    decision.reason += "; data-parallel across all " + std::to_string(placement.acceleratorCount) +
                       " " + placement.accelerator + " (the model needs " +
                       std::to_string(placement.neededAccelerators) +
                       "): the node is paid whole and the run is shorter";
  }
  if (best.capacity == CapacityType::Mixed && request.intent.kind == WorkloadKind::Inference) {
    decision.reason +=
        "; the spot half can be interrupted with two minutes' notice, the on-demand half stays";
  }
  if (best.capacity == CapacityType::Spot && request.intent.kind == WorkloadKind::Inference) {
    decision.reason += "; on spot, replicas can be interrupted with two minutes' notice: " +
                       std::string(request.intent.constraints.capacityType == CapacityType::Spot
                                       ? "the workload asks for spot"
                                       : "the policy allows spot for serving");
  }
  if (placement.replicasForThroughput > 0) {
    const int needed = placement.replicasForThroughput;
    const auto& serving = request.intent.serving;
    decision.reason += "; one replica carries about " +
                       formatCount(std::llround(placement.tokensPerSecondPerReplica)) +
                       " tokens a second at " + std::to_string(serving.concurrentSequences) +
                       " sequences";
    if (serving.meanPromptTokens > 0) {
      decision.reason += ", prefilling " + formatFixed(serving.promptTokensPerOutputToken(), 1) +
                         " prompt tokens for each";
    }
    decision.reason += ", so " + throughputTargetText(serving) + " take " + std::to_string(needed) +
                       (needed == 1 ? " replica" : " replicas") + " (" +
                       formatMoney(placement.hourlyCost * needed) + "/h)";
    if (needed > request.intent.replicas) {
      decision.reason += "; the target runs " + std::to_string(request.intent.replicas) +
                         ": its replicas are the team's to set";
    }
  }
  if (!request.need.latencyTargetMs) {
    return;
  }
  const char* unit = latencyUnitName(placement.latencyUnit);
  // A bound where the peak bandwidth binds; an estimate where a measured (or
  // assumed) share of it, or the compute, does.
  const bool bound = !best.fit.roofline.computeBound() && placement.bandwidthUtilization >= 1;
  const std::string estimate =
      (bound ? "at least " : "about ") + milliseconds(best.fit.latencyMs) + " per " + unit;
  const std::string weights = request.need.expertsReadShare < 0.995
                                  ? "the shared weights and the experts its tokens route to (" +
                                        base::formatPercent(request.need.expertsReadShare) +
                                        " of the weights)"
                                  : "weights";
  const std::string read =
      weights + (request.intent.serving.stated() ? " and the load's KV cache read once per "
                                                 : " read once per ");
  const std::string binds =
      best.fit.roofline.computeBound() ? " (its arithmetic at the stated utilization binds)"
      : bound
          ? " (" + read + unit + " at peak bandwidth)"
          : " (" + read + unit + " at " + base::formatPercent(placement.bandwidthUtilization) +
                " of peak bandwidth" + (placement.bandwidthAssumed ? ", an assumption" : "") + ")";
  const std::string target = milliseconds(*request.need.latencyTargetMs);
  if (decision.latencyTargetUnreachable) {
    decision.reason += "; LatencyTargetUnreachable: no option meets " + target +
                       "; this is the fastest, " + estimate + binds;
  } else {
    decision.reason += "; " + estimate + binds + ", within the " + target + " target";
  }
}

// A share of a GPU: what of it the replica has, what isolates it (a MIG
// slice) or does not (time-slicing), and what the best whole-device option
// the engine weighed would cost instead.
void Explainer::explainSlice(const Option& best, const Evaluation& evaluation,
                             Decision& decision) const {
  const auto& instance = catalog_->instances[best.instance];
  const auto& spec = *catalog_->acceleratorOf(instance);
  if (best.fit.migProfile >= 0) {
    const auto& profile = spec.migProfiles[static_cast<std::size_t>(best.fit.migProfile)];
    decision.reason += "; a MIG " + profile.name + " slice has " +
                       std::to_string(profile.computeSevenths) + "/7 of the " + spec.name +
                       "'s SMs and " + std::to_string(profile.memoryEighths) +
                       "/8 of its memory (" + formatGiB(migMemoryGiB(spec, profile)) +
                       " GiB) and bandwidth, isolated from the other slices' memory and faults";
  } else {
    const int ways = best.fit.timeSlices;
    const int taken = best.fit.devices;
    decision.reason += "; " + std::to_string(taken) + " of the " + std::to_string(ways) +
                       " time-sliced replicas of its " + spec.name + ", for " +
                       formatGiB(best.fit.availableGiB) +
                       " GiB of its memory: time-slicing isolates neither memory nor faults, so "
                       "it fits only where every replica's model keeps to its share; the latency "
                       "is the GPU's when the other " +
                       std::to_string(ways - taken) + " replicas are busy too";
  }
  const Option* whole = nullptr;
  for (const auto& option : evaluation.feasible) {
    if (option.fit.migProfile < 0 && option.fit.timeSlices == 0 &&
        (!whole || better(option, *whole))) {
      whole = &option;
    }
  }
  if (!whole) {
    return;
  }
  auto& placement = *decision.placement;
  placement.wholeDeviceHourlyCost = whole->cost.perReplicaHourly;
  decision.reason +=
      "; on whole devices the best is " +
      describeShape(catalog_->instances[whole->instance],
                    catalog_->acceleratorOf(catalog_->instances[whole->instance]), whole->fit) +
      " at " + formatMoney(whole->cost.perReplicaHourly) + "/h per replica";
}

Alternative Explainer::alternativeOf(const Option& option, std::string why) const {
  const auto& other = catalog_->instances[option.instance];
  const auto* accelerator = catalog_->acceleratorOf(other);
  return Alternative{
      other.type,
      accelerator ? accelerator->name : "",
      other.tier,
      option.fit.devices,
      option.capacity,
      option.cost.perReplicaHourly,
      std::move(why),
      accelerator && option.fit.migProfile >= 0
          ? accelerator->migProfiles[static_cast<std::size_t>(option.fit.migProfile)].name
          : "",
      option.fit.timeSlices};
}

// How much less performance per dollar `option` gives than `best`, in
// what the cluster pays more; both on devices already paid for: per dollar
// of their shares. Nothing when it gives as much (it lost on latency).
std::optional<double> Explainer::valueLoss(const Option& option, const Option& best) {
  const auto free = [](const Option& o) { return o.cost.marginalHourly <= kSamePrice; };
  const bool shares = free(option) && free(best);
  const auto value = [&](const Option& o) {
    if (!shares && free(o)) {
      return std::numeric_limits<double>::infinity();
    }
    return o.fit.performance /
           std::max(shares ? o.cost.perReplicaHourly : o.cost.marginalHourly, 1e-9);
  };
  const double mine = value(option);
  const double theirs = value(best);
  if (mine >= theirs) {
    return std::nullopt;
  }
  return std::isinf(theirs) ? 1.0 : 1 - mine / theirs;
}

std::string Explainer::lostBecause(const Option& option, const Option& best,
                                   const Request& request) const {
  if (request.need.latencyTargetMs && best.fit.meetsLatency != option.fit.meetsLatency) {
    const bool bound =
        !option.fit.roofline.computeBound() &&
        request.need.bandwidthShareOn(catalog_->instances[option.instance].tier) >= 1;
    return (bound ? "at least " : "about ") + milliseconds(option.fit.latencyMs) + " per " +
           latencyUnitName(latencyUnitOf(request.intent.architecture)) + ", above the " +
           milliseconds(*request.need.latencyTargetMs) + " target";
  }
  const double cost = option.cost.perReplicaHourly;
  const double bestCost = best.cost.perReplicaHourly;
  const double more = option.cost.marginalHourly - best.cost.marginalHourly;
  if (more > kSamePrice && best.cost.replicasOnIdle > 0 &&
      request.intent.objective != Objective::MaxPerformance) {
    return formatMoney(more) + "/h more per replica for the cluster: new nodes, where the " +
           "choice uses idle devices already paid for";
  }
  const int replicas = replicasToCarry(option, request);
  const int bestReplicas = replicasToCarry(best, request);
  if (request.intent.objective == Objective::CostOptimized && replicas > 0 && bestReplicas > 0) {
    // What carrying the throughput costs, as the ranking weighed it.
    const double carry = option.cost.marginalHourly * replicas;
    const double bestCarry = best.cost.marginalHourly * bestReplicas;
    if (carry - bestCarry > kSamePrice) {
      return formatMoney(carry - bestCarry) + "/h more to carry " +
             formatCount(std::llround(request.need.tokensPerSecond)) + " tokens a second (" +
             std::to_string(replicas) + (replicas == 1 ? " replica)" : " replicas)");
    }
  }
  switch (request.intent.objective) {
    case Objective::CostOptimized:
      return more > kSamePrice ? formatMoney(more) + "/h more per replica"
             : cost - bestCost > kSamePrice
                 ? formatMoney(cost - bestCost) + "/h more per replica"
                 : "same price, " +
                       base::formatPercent(1 - option.fit.performance /
                                                   std::max(best.fit.performance, 1e-9)) +
                       " less performance";
    case Objective::Balanced:
      if (const auto loss = valueLoss(option, best)) {
        return base::formatPercent(*loss) + " less performance per dollar";
      }
      break;  // it lost on latency: say how much slower
    case Objective::MaxPerformance:
      break;
  }
  return option.fit.performance < best.fit.performance
             ? base::formatPercent(1 - option.fit.performance / best.fit.performance) + " slower"
             : "as fast, but " + formatMoney(cost - bestCost) + "/h more";
}

// Runners-up: the best option of each other instance type.
void Explainer::listRunnersUp(const Option& best, const Request& request,
                              const Evaluation& evaluation, Decision& decision) const {
  // The types already named: the best's and one per runner-up.
  std::array<int, kRunnersUp + 1> listed{};
  std::size_t named = 0;
  listed[named++] = best.instance;
  const auto isListed = [&](int instance) {
    return std::find(listed.begin(), listed.begin() + named, instance) != listed.begin() + named;
  };
  for (std::uint32_t index : evaluation.ranked) {
    const auto& option = evaluation.feasible[index];
    if (decision.alternatives.size() >= kRunnersUp || named == listed.size()) {
      break;
    }
    if (isListed(option.instance)) {
      continue;
    }
    listed[named++] = option.instance;
    decision.alternatives.push_back(alternativeOf(option, lostBecause(option, best, request)));
  }
  // A cheaper option that lost only on latency says so.
  if (!request.need.latencyTargetMs || !best.fit.meetsLatency) {
    return;
  }
  const Option* cheaper = nullptr;
  for (const auto& option : evaluation.feasible) {
    if (!option.fit.meetsLatency && option.cost.perReplicaHourly < best.cost.perReplicaHourly &&
        (!cheaper || option.cost.perReplicaHourly < cheaper->cost.perReplicaHourly)) {
      cheaper = &option;
    }
  }
  if (cheaper && !isListed(cheaper->instance)) {
    decision.alternatives.push_back(alternativeOf(*cheaper, lostBecause(*cheaper, best, request)));
  }
}

// The best options of up to `limit` instance types that no node or NodePool
// offers, better than `best` when one was chosen.
std::vector<const Unoffered*> Explainer::bestUnoffered(const Evaluation& evaluation,
                                                       const Option* best, std::size_t limit,
                                                       bool eachCapacityType) const {
  std::vector<const Unoffered*> options;
  for (const auto& unoffered : evaluation.unoffered) {
    if (!best || better(unoffered.option, *best)) {
      options.push_back(&unoffered);
    }
  }
  std::sort(options.begin(), options.end(),
            [](const Unoffered* a, const Unoffered* b) { return better(a->option, b->option); });
  std::vector<const Unoffered*> chosen;
  for (const Unoffered* candidate : options) {
    const auto& option = candidate->option;
    const bool listed = std::any_of(chosen.begin(), chosen.end(), [&](const Unoffered* other) {
      return other->option.instance == option.instance &&
             (!eachCapacityType || other->option.capacity == option.capacity);
    });
    if (!listed && chosen.size() < limit) {
      chosen.push_back(candidate);
    }
  }
  return chosen;
}

// "the 2 nodes of m5.xlarge have room for 2 of 3 replicas", "no node
// of g6.xlarge, and NodePool gpu, which would launch one, is at its
// limits"; empty when no node or NodePool offers it. The numbers are the
// engine's (Shortfall): of a Mixed option, the half that lacks them.
std::string Explainer::shortOfRoom(const Unoffered& unoffered, const Request& request) const {
  const auto& shortfall = unoffered.shortfall;
  const auto* offer = request.capacity
                          ? request.capacity->offer(unoffered.option.instance, shortfall.part)
                          : nullptr;
  if (!offer) {
    return "";
  }
  const std::string type = catalog_->instances[unoffered.option.instance].type +
                           (shortfall.part == CapacityType::Spot ? " spot" : "");
  if (shortfall.offered) {
    const int needed = shortfall.needed;
    const int replicas = shortfall.replicas;
    return (offer->nodes == 1 ? "the 1 node of "
                              : "the " + std::to_string(offer->nodes) + " nodes of ") +
           type + " " + (offer->nodes == 1 ? "has" : "have") + " room for " +
           std::to_string(shortfall.room) + " of " + std::to_string(needed) +
           (needed == 1 ? " replica" : " replicas") +
           (needed > replicas ? " (" + std::to_string(replicas) + " and a rollout's surge of " +
                                    std::to_string(needed - replicas) + " beside its pods there)"
                              : "") +
           (offer->poolsAtLimit.empty() ? "" : " and its NodePools are at their limits") +
           (offer->unavailable ? " and Karpenter marks its offerings unavailable in every zone"
                               : "");
  }
  if (offer->unavailable) {
    return "no node of " + type +
           ", and Karpenter marks its offerings unavailable in every zone (after an "
           "insufficient-capacity error): it launches none while it does";
  }
  std::string pools;
  for (const auto& pool : offer->poolsAtLimit) {
    pools += (pools.empty() ? "" : ", ") + pool;
  }
  return pools.empty() ? ""
                       : "no node of " + type + ", and NodePool " + pools +
                             ", which would launch one, is at its limits";
}

std::string Explainer::typeLabel(const Option& option) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto* spec = catalog_->acceleratorOf(instance);
  const std::string slice =
      spec && option.fit.migProfile >= 0
          ? " MIG " + spec->migProfiles[static_cast<std::size_t>(option.fit.migProfile)].name
      : option.fit.timeSlices > 0 ? " time-sliced"
                                  : "";
  return instance.type + slice +
         (option.capacity == CapacityType::Spot    ? " spot"
          : option.capacity == CapacityType::Mixed ? " spot and on-demand"
                                                   : "");
}

// Better options the cluster cannot run: "no node or NodePool offers g5.xlarge".
void Explainer::listUnoffered(const Option* best, const Request& request,
                              const Evaluation& evaluation, Decision& decision) const {
  for (const Unoffered* unoffered : bestUnoffered(evaluation, best, 2)) {
    const auto why = shortOfRoom(*unoffered, request);
    decision.alternatives.push_back(alternativeOf(
        unoffered->option,
        why.empty() ? "no node or NodePool offers " + typeLabel(unoffered->option) : why));
  }
}

Assessment Explainer::assess(const WorkloadIntent& intent, const std::string& instanceType,
                             int count, const DeviceShare& share, CapacityType capacity,
                             const ClusterContext* cluster) const {
  Assessment assessment;
  std::optional<ClusterCost> clusterCosts;
  const auto weighing =
      engine_.weighInForce(intent, instanceType, count, share, capacity, cluster, clusterCosts);
  if (!weighing.option) {
    assessment.reason =
        weighing.verdict == InForceVerdict::NotInCatalog && weighing.instance >= 0
            ? "the catalog lists no MIG profile " + share.migProfile + " for " + instanceType
        : weighing.verdict == InForceVerdict::NotInCatalog
            ? instanceType + " is no longer in the catalog"
            : instanceType + " has no " + capacityLabel(capacity) + " price any more";
    return assessment;
  }
  const auto& option = *weighing.option;
  assessment.placement = placementOf(option, *weighing.request);
  assessment.hourlyCost = option.cost.perReplicaHourly;
  assessment.clusterHourlyCost = assessment.placement->clusterHourlyCost;
  assessment.performance = option.fit.performance;
  assessment.reason = whyNotKept(weighing, intent);
  assessment.feasible = weighing.keeps();
  return assessment;
}

// The engine's verdict on a placement in force, in words; empty when it
// keeps.
std::string Explainer::whyNotKept(const InForceWeighing& weighing,
                                  const WorkloadIntent& intent) const {
  const auto& instance = catalog_->instances[weighing.instance];
  const auto& option = *weighing.option;
  switch (weighing.verdict) {
    case InForceVerdict::Keeps:
    case InForceVerdict::NotInCatalog:
    case InForceVerdict::Unpriced:
      return "";
    case InForceVerdict::OutsideConstraints:
      return instance.type + " is outside the workload's constraints";
    case InForceVerdict::CapacityNotAllowed:
      return "the workload now asks for " + std::string(nameOf(intent.constraints.capacityType)) +
             " capacity";
    case InForceVerdict::NeuronIneligible:
      return neuronIneligibility(instance.tier, intent);
    case InForceVerdict::SpotWithheld:
      return "online serving on spot needs the policy's consent, which it no longer gives "
             "(PlacementPolicy spec.capacity.spotForServing)";
    case InForceVerdict::NoLongerFits:
      return describeShape(instance, catalog_->acceleratorOf(instance), weighing.count) +
             " no longer runs the model: " + formatGiB(weighing.memory.requiredGiB) + " GiB at " +
             std::string(nameOf(intent.precision)) + " within the " + fillLimitText() +
             " fill limit";
    case InForceVerdict::OverBudget:
      return instance.type + " now costs " + formatMoney(option.cost.perReplicaHourly) +
             "/h, over maxHourlyCost";
  }
  return "";
}

}  // namespace explaining

Decision explain(const PlacementEngine& engine, const Weighing& weighing) {
  return explaining::Explainer(engine).explain(weighing);
}

Decision decide(const PlacementEngine& engine, const WorkloadIntent& intent) {
  return decide(engine, intent, costModelFor(engine.policy().costModel));
}

Decision decide(const PlacementEngine& engine, const WorkloadIntent& intent,
                const NodeCostModel& costs) {
  return explain(engine, engine.weigh(intent, costs, nullptr));
}

Decision decide(const PlacementEngine& engine, const WorkloadIntent& intent,
                const ClusterContext& cluster) {
  std::optional<ClusterCost> storage;
  const auto& costs = engine.costsFor(&cluster, storage);
  return explain(engine, engine.weigh(intent, costs, &cluster));
}

Assessment assess(const PlacementEngine& engine, const WorkloadIntent& intent,
                  const std::string& instanceType, int count, const DeviceShare& share,
                  CapacityType capacity, const ClusterContext* cluster) {
  return explaining::Explainer(engine).assess(intent, instanceType, count, share, capacity,
                                              cluster);
}

}  // namespace gpuplacement::core
