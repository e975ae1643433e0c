#include "core/decide/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>

#include "base/time_format.h"
#include "core/catalog/quantity.h"
#include "core/decide/render.h"

namespace gpuplacement::core {
namespace {

// Ranks MaxPerformance options that pay for idle devices after all others.
constexpr double kIdlePenalty = 1e15;

bool containsString(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

unsigned tierBit(Tier tier) {
  return 1U << static_cast<unsigned>(tier);
}

// Whether constraints.capacityType `asked` allows a placement at
// `capacity`. Any is the cheaper of on-demand and spot: never Mixed.
bool allowsCapacity(CapacityType asked, CapacityType capacity) {
  return capacity == asked || capacity == CapacityType::Any ||
         (asked == CapacityType::Any && capacity != CapacityType::Mixed);
}

}  // namespace

MemoryEstimate estimateMemory(const WorkloadIntent& intent, const MemoryOverheads& overheads) {
  MemoryEstimate memory;
  memory.parameters = intent.parameters;
  memory.precision = intent.precision;
  memory.bytesPerParameter = bytesPerParameter(intent.precision);
  memory.overhead = overheads.forKind(intent.kind);
  memory.weightsGiB =
      static_cast<double>(intent.parameters) * memory.bytesPerParameter / kBytesPerGiB;
  memory.method = methodOf(intent);
  // Full training keeps 16-bit weights and gradients, fp32 master weights
  // and Adam's moments whatever the storage format: the overhead applies to
  // 2 bytes a parameter (8 of them: 16 bytes), activations on top.
  const double basisGiB = intent.kind == WorkloadKind::Training
                              ? static_cast<double>(intent.parameters) * 2 / kBytesPerGiB
                              : memory.weightsGiB;
  memory.requiredGiB = basisGiB * memory.overhead;
  memory.training = trainingMemoryOf(intent.kind, memory);
  memory.runtimeGiB = overheads.runtimeGiB(intent.framework);
  if (intent.shape.known()) {
    memory.kvBytesPerToken = intent.shape.kvBytesPerToken(
        bytesPerParameter(intent.serving.stated() ? intent.serving.kvPrecision : Precision::FP16));
  }
  if (intent.serving.stated() && intent.shape.known()) {
    // The load says what the KV cache holds: the overhead no longer
    // guesses it.
    const auto& serving = intent.serving;
    memory.serving = serving;
    memory.overhead = 1;
    memory.kvCacheGiB =
        memory.kvBytesPerToken * serving.contextTokens * serving.concurrentSequences / kBytesPerGiB;
    memory.reserveGiB = overheads.servingReserveGiB;
    memory.kvHeads = intent.shape.kvHeads;
    memory.requiredGiB = memory.weightsGiB + memory.kvCacheGiB + memory.reserveGiB;
    memory.method = intent.kind == WorkloadKind::BatchInference
                        ? "batch inference: weights, KV cache and reserve"
                        : "online inference: weights, KV cache and reserve";
  }
  return memory;
}

TrainingMemory trainingMemoryOf(WorkloadKind kind, const MemoryEstimate& memory) {
  TrainingMemory parts;
  const double required = memory.requiredGiB;
  if (kind == WorkloadKind::Training) {
    // Of the bytes a parameter the overhead gives (18 at 9.0): 16-bit
    // weights and gradients 4, fp32 master weights and Adam's moments 12,
    // activations the rest. An overhead below 8 leaves no activations and
    // scales the states down with it.
    const double perParameter = memory.overhead * 2;
    const double states = std::min(perParameter, 16.0);
    parts.weightsGradientsGiB = required * (states * 4 / 16) / perParameter;
    parts.optimizerGiB = required * (states * 12 / 16) / perParameter;
    parts.activationsGiB = required - parts.weightsGradientsGiB - parts.optimizerGiB;
  } else if (kind == WorkloadKind::FineTuning) {
    // The frozen base whole on every copy; the adapters, their optimizer
    // states and the activations are the rest, too small to shard.
    parts.weightsGradientsGiB = std::min(memory.weightsGiB, required);
    parts.activationsGiB = required - parts.weightsGradientsGiB;
  }
  return parts;
}

const char* methodOf(const WorkloadIntent& intent) {
  switch (intent.kind) {
    case WorkloadKind::Training:
      return "full training with Adam";
    case WorkloadKind::FineTuning:
      return intent.precision == Precision::INT4 || intent.precision == Precision::INT8
                 ? "QLoRA (adapters over a quantized base)"
                 : "LoRA (adapters over a frozen base)";
    case WorkloadKind::Inference:
      return "online inference";
    case WorkloadKind::BatchInference:
      break;
  }
  return "batch inference";
}

std::size_t sizeBucketIndex(const RuleKnobs& knobs, std::uint64_t parameters) {
  std::size_t index = 0;
  for (std::size_t i = 0; i < knobs.sizeBuckets.size(); ++i) {
    if (parameters >= knobs.sizeBuckets[i].fromParameters) {
      index = i;
    }
  }
  return index;
}

LatencyClass latencyClassOf(const RuleKnobs& knobs, std::optional<double> latencyTargetMs) {
  if (!latencyTargetMs) {
    return LatencyClass::Relaxed;
  }
  if (*latencyTargetMs < knobs.lowLatencyBelowMs) {
    return LatencyClass::LowLatency;
  }
  if (*latencyTargetMs < knobs.realtimeBelowMs) {
    return LatencyClass::Realtime;
  }
  return LatencyClass::Relaxed;
}

PlacementEngine::PlacementEngine(std::shared_ptr<const Catalog> catalog,
                                 std::shared_ptr<const RuleSet> rules, Policy policy)
    : catalog_(std::move(catalog)), rules_(std::move(rules)), policy_(std::move(policy)) {
  userTiersRule_.name = "constraints.tiers";
  userTiersRule_.source = "spec.constraints.tiers: the tiers the workload names";
  userTiersRule_.reason = "placed on the tiers the workload asks for";
}

Result<std::shared_ptr<const PlacementEngine>> PlacementEngine::create(
    std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules, Policy policy) {
  if (!catalog || catalog->instances.empty()) {
    return Error{"catalog", "is empty: no instance type to place on"};
  }
  if (!rules || rules->rules.empty()) {
    return Error{"rules", "is empty: no rule to decide with"};
  }
  std::shared_ptr<PlacementEngine> engine(
      new PlacementEngine(std::move(catalog), std::move(rules), std::move(policy)));
  const auto& instances = engine->catalog_->instances;
  const auto& effective = engine->policy_;
  engine->onDemand_.resize(instances.size());
  engine->spot_.resize(instances.size());
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const auto& instance = instances[i];
    if (effective.disabledInstanceTypes.count(instance.type)) {
      continue;  // no price: never chosen
    }
    const auto it = effective.prices.find(instance.type);
    const bool overridden = it != effective.prices.end();
    engine->onDemand_[i] =
        overridden && it->second.onDemand ? it->second.onDemand : instance.onDemand;
    engine->spot_[i] = overridden && it->second.spot ? it->second.spot : instance.spot;
  }
  auto& knobs = engine->knobs_;
  knobs = engine->rules_->knobs;
  knobs.lowLatencyBelowMs = effective.lowLatencyBelowMs.value_or(knobs.lowLatencyBelowMs);
  knobs.realtimeBelowMs = effective.realtimeBelowMs.value_or(knobs.realtimeBelowMs);
  knobs.neuronFrameworks = effective.neuronFrameworks.value_or(knobs.neuronFrameworks);
  knobs.neuronArchitectures = effective.neuronArchitectures.value_or(knobs.neuronArchitectures);
  for (const auto& rule : engine->rules_->rules) {
    engine->disabledRules_.push_back(effective.disabledRules.count(rule.name) > 0);
    CandidateMask mask;
    mask.tiers = rule.tiers.any() ? ~0U : rule.tiers.bits;
    if (!rule.accelerators.empty()) {
      mask.accelerators = 0;
      for (int accelerator : rule.accelerators) {
        mask.accelerators |= 1ULL << accelerator;
      }
    }
    engine->candidateMasks_.push_back(mask);
    auto& candidates = engine->candidatesOf_.emplace_back();
    for (std::size_t i = 0; i < instances.size(); ++i) {
      if (engine->withinMask(mask, instances[i])) {
        candidates.push_back(static_cast<int>(i));
      }
    }
  }
  for (std::size_t i = 0; i < instances.size(); ++i) {
    engine->everyInstance_.push_back(static_cast<int>(i));
  }
  for (const auto& instance : instances) {
    if (instance.accelerator >= 0) {
      engine->acceleratorsOfTier_[static_cast<std::size_t>(instance.tier)] |=
          1ULL << instance.accelerator;
    }
    if (instance.tier == Tier::Inferentia) {
      const auto* spec = engine->catalog_->acceleratorOf(instance);
      engine->inferentiaHoldsGiB_ =
          std::max(engine->inferentiaHoldsGiB_,
                   spec->memoryGiB * instance.acceleratorCount * effective.memoryFillLimit);
    }
  }
  const auto labels = nodeLabelsFor(effective, nullptr);
  engine->defaultScheme_ = labels.scheme;
  engine->defaultCapacityLabeled_ = !labels.capacityLabel.key.empty();
  return std::shared_ptr<const PlacementEngine>(std::move(engine));
}

std::optional<double> PlacementEngine::price(int instance, CapacityType capacity) const {
  switch (capacity) {
    case CapacityType::Spot:
      return spot_[instance];
    case CapacityType::Mixed:  // the on-demand node's, when both exist
      return spot_[instance] ? onDemand_[instance] : std::nullopt;
    case CapacityType::Reserved:  // paid for whether used or not: nothing more
      return 0.0;
    case CapacityType::OnDemand:
    case CapacityType::Any:
      break;
  }
  return onDemand_[instance];
}

void PlacementEngine::quote(Option& option, const Request& request) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto& fit = option.fit;
  const std::string_view slice = sliceName(option);
  const auto one = [&](CapacityType capacity, double nodeHourly, int replicas) {
    return request.costs.quote({option.instance, &instance, capacity, nodeHourly, replicas,
                                fit.replicasPerNode, fit.share, fit.devices, slice,
                                fit.timeSlices > 0, fit.nodes});
  };
  const int replicas = replicasOf(fit, request);
  if (option.capacity != CapacityType::Mixed) {
    option.cost = one(option.capacity, option.nodeHourly, replicas);
    return;
  }
  option.spotNodeHourly = price(option.instance, CapacityType::Spot).value_or(0);
  const auto split = mixedSplit(replicas);
  option.cost = one(CapacityType::OnDemand, option.nodeHourly, split.onDemand);
  if (split.spot > 0) {
    option.cost =
        combineQuotes(option.cost, split.onDemand,
                      one(CapacityType::Spot, option.spotNodeHourly, split.spot), split.spot);
  }
}

Request PlacementEngine::requestFor(const WorkloadIntent& intent, const MemoryEstimate& memory,
                                    const NodeCostModel& costs, const ClusterView* view) const {
  Request request{intent, costs, {}};
  if (view && view->capacity.source != CapacitySource::None) {
    request.capacity = &view->capacity;
  }
  if (view) {
    request.networkDomainKey = view->labels.networkDomainKey;
  }
  auto& need = request.need;
  need.requiredGiB = memory.requiredGiB;
  need.kvCacheGiB = memory.kvCacheGiB;
  need.kvHeads = memory.kvHeads;
  need.reserveGiB = memory.reserveGiB;
  need.weightsGiB = memory.weightsGiB;
  need.architecture = intent.architecture;
  need.work = workOf(intent.architecture, intent.parameters, memory.weightsGiB * kBytesPerGiB);
  need.precision = intent.precision;
  need.training = isTraining(intent.kind);
  need.trainingMemory = memory.training;
  need.inference = !need.training;
  need.batch = intent.kind == WorkloadKind::BatchInference;
  need.latencyTargetMs = need.inference ? intent.latencyTargetMs : std::nullopt;
  // What serving stacks reach of peak bandwidth is measured on decoders:
  // other architectures keep the peak, a bound.
  if (need.inference && intent.architecture == Architecture::Transformer) {
    for (const Tier tier : {Tier::NVIDIA, Tier::Trainium, Tier::Inferentia, Tier::CPU}) {
      const auto* entry = rules_->knobs.servingBandwidthOf(tier, intent.framework);
      need.bandwidthShare[static_cast<std::size_t>(tier)] = entry ? entry->utilization : 1;
    }
    // A mixture of experts reads, and computes with, only the experts its
    // tokens route to.
    if (const auto* family = catalog_->modelFamily(intent.family); family && family->experts > 0) {
      const int sequences = memory.serving.stated() ? memory.serving.concurrentSequences : 1;
      need.expertsReadShare = family->weightsReadShare(sequences);
      need.work.bytes *= need.expertsReadShare;
      need.work.flops *= family->activeShare();
    }
    if (memory.serving.stated()) {
      // A decode step of the load reads the weights once and every
      // sequence's keys and values, at the load's full context: the
      // latency a sequence sees when the replica is full.
      need.work.bytes += memory.kvCacheGiB * kBytesPerGiB;
      need.work.flops *= memory.serving.concurrentSequences;
      need.sequences = memory.serving.concurrentSequences;
      need.tokensPerSecond = memory.serving.outputTokensPerSecond();
      need.promptTokensPerOutputToken = memory.serving.promptTokensPerOutputToken();
    }
  }
  need.fillLimit = policy_.memoryFillLimit;
  need.karpenter = (view ? view->labels.scheme : defaultScheme_) == LabelScheme::Karpenter;
  const auto sharing = intent.constraints.sharing != DeviceSharing::Auto
                           ? intent.constraints.sharing
                       : need.training ? policy_.sharing.training
                                       : policy_.sharing.inference;
  // Slices come only from nodes whose GPUs are cut so: without a view of
  // them there are none to weigh.
  need.slices = (sharing == DeviceSharing::Isolated || sharing == DeviceSharing::Any) &&
                request.capacity != nullptr;
  need.timeSlicing = sharing == DeviceSharing::Any && request.capacity != nullptr;
  need.runtimeGiB = memory.runtimeGiB;
  need.stagingGiB = std::min(memory.weightsGiB, kLoadShardGiB);
  need.podCpu = intent.podCpu;
  need.podMemoryGiB = intent.podMemoryGiB;
  request.replicas = std::max(intent.replicas, 1);
  request.groups = intent.groups.groups;
  request.groupNodes = intent.groups.size > 1 ? intent.groups.size : 0;
  request.capacityLabeled =
      view ? !view->labels.capacityLabel.key.empty() : defaultCapacityLabeled_;
  request.spotWithheld = intent.kind == WorkloadKind::Inference &&
                         intent.constraints.capacityType == CapacityType::Any &&
                         !policy_.capacity.spotForServing;
  const auto& frameworks = knobs_.neuronFrameworks;
  const auto& architectures = knobs_.neuronArchitectures;
  const bool neuronSoftware =
      std::find(frameworks.begin(), frameworks.end(), intent.framework) != frameworks.end() &&
      std::find(architectures.begin(), architectures.end(), intent.architecture) !=
          architectures.end();
  // What neuronIneligibility() explains, decided without building its words.
  // Trainium trains; it serves only a model no Inferentia2 node holds,
  // across a group of its nodes (as ai-on-eks serves Llama-3.1-405B).
  if (!neuronSoftware || (!need.training && need.requiredGiB <= inferentiaHoldsGiB_)) {
    request.neuronBlocked |= tierBit(Tier::Trainium);
  }
  if (!neuronSoftware || need.training) {
    request.neuronBlocked |= tierBit(Tier::Inferentia);
  }
  if (!intent.constraints.tiers.empty()) {
    request.tiers = 0;
    for (Tier tier : intent.constraints.tiers) {
      request.tiers |= tierBit(tier);
    }
  }
  request.bucket = sizeBucketIndex(knobs_, intent.parameters);
  request.latency = latencyClassOf(knobs_, intent.latencyTargetMs);
  return request;
}

bool PlacementEngine::matches(const Rule& rule, const WorkloadIntent& intent, std::size_t bucket,
                              LatencyClass latency) const {
  if (!rule.kinds.contains(intent.kind) || !rule.latency.contains(latency) ||
      !rule.objectives.contains(intent.objective) || !rule.frameworks.contains(intent.framework) ||
      !rule.architectures.contains(intent.architecture)) {
    return false;
  }
  return rule.sizes.empty() || containsString(rule.sizes, knobs_.sizeBuckets[bucket].name);
}

bool PlacementEngine::withinMask(const CandidateMask& mask, const InstanceType& instance) const {
  return (mask.tiers & tierBit(instance.tier)) != 0 &&
         (instance.accelerator < 0 || ((mask.accelerators >> instance.accelerator) & 1U) != 0);
}

bool PlacementEngine::allowedBy(const Request& request, const InstanceType& instance) const {
  const auto& constraints = request.intent.constraints;
  return (request.tiers & tierBit(instance.tier)) != 0 &&
         (constraints.instanceTypes.empty() ||
          containsString(constraints.instanceTypes, instance.type)) &&
         (constraints.excludedInstanceTypes.empty() ||
          !containsString(constraints.excludedInstanceTypes, instance.type));
}

bool PlacementEngine::isCandidate(const Rule& rule, const InstanceType& instance,
                                  const Request& request) const {
  return withinMask(maskOf(rule), instance) && allowedBy(request, instance);
}

const PlacementEngine::CandidateMask& PlacementEngine::maskOf(const Rule& rule) const {
  static const CandidateMask everything;
  if (const auto r = indexOf(rule)) {
    return candidateMasks_[*r];
  }
  return everything;  // the workload's own tiers: the request's mask says which
}

const std::vector<int>& PlacementEngine::candidatesOf(const Rule& rule) const {
  if (const auto r = indexOf(rule)) {
    return candidatesOf_[*r];
  }
  return everyInstance_;
}

std::optional<std::size_t> PlacementEngine::indexOf(const Rule& rule) const {
  const auto& rules = rules_->rules;
  const std::less<const Rule*> before;
  if (!before(&rule, rules.data()) && before(&rule, rules.data() + rules.size())) {
    return static_cast<std::size_t>(&rule - rules.data());
  }
  return std::nullopt;
}

void PlacementEngine::evaluateRule(const Rule& rule, const Request& request,
                                   Evaluation& evaluation) const {
  // The rule's own candidates were listed when the engine was built.
  const auto& instances = catalog_->instances;
  for (int i : candidatesOf(rule)) {
    const auto& instance = instances[i];
    if (!allowedBy(request, instance)) {
      continue;
    }
    if (request.neuronBlocked & tierBit(instance.tier)) {
      evaluation.neuronBlockedTiers |= tierBit(instance.tier);
      continue;
    }
    evaluateInstance(i, request, evaluation);
  }
}

void PlacementEngine::evaluateInstance(int index, const Request& request,
                                       Evaluation& evaluation) const {
  const auto& instance = catalog_->instances[index];
  evaluation.anyCandidate = true;
  // An instance without a price for the capacity asked for is never chosen,
  // so it does not count as "eligible" in the explanations either.
  const auto capacity = request.intent.constraints.capacityType;
  const bool priced = capacity == CapacityType::Any
                          ? price(index, CapacityType::OnDemand) || price(index, CapacityType::Spot)
                          : price(index, capacity).has_value();
  if (!priced) {
    return;
  }
  evaluation.anyPriced = true;
  auto& fits = evaluation.fits;
  const int choices =
      fitChoices(*catalog_, instance, request.need, fits, slicesOffered(index, request),
                 request.need.timeSlicing ? timeSlicesOffered(index, request) : 0);
  const Fit& fit = fits[0];
  const std::uint64_t acceleratorBit = instance.accelerator >= 0 ? 1ULL << instance.accelerator : 0;
  if (fit.misfit == Misfit::Precision || fit.misfit == Misfit::Karpenter) {
    (fit.misfit == Misfit::Precision ? evaluation.precisionBlocked : evaluation.karpenterBlocked) |=
        acceleratorBit;
    return;
  }
  evaluation.anyRunnable = true;
  if (fit.offeredGiB > evaluation.largestGiB) {
    evaluation.largestGiB = fit.offeredGiB;
    evaluation.largestInstance = index;
    evaluation.largestFits = fit.fits();
    evaluation.largestMisfit = fit.misfit;
  }
  if (fit.misfit == Misfit::Memory && instance.accelerator >= 0) {
    evaluateAcrossNodes(index, request, evaluation);
  }
  if (!fit.fits()) {
    return;
  }
  evaluation.anyFits = true;
  for (int i = 0; i < choices; ++i) {
    addOptions(index, fits[i], request, evaluation);
  }
}

// No node of the type holds a replica: a group of its nodes may, joined by
// EFA, where the target's pods form groups. Otherwise what it would take is
// kept for the explanation.
void PlacementEngine::evaluateAcrossNodes(int index, const Request& request,
                                          Evaluation& evaluation) const {
  const auto& instance = catalog_->instances[index];
  const Fit group = fitAcrossNodes(*catalog_, instance, request.need, request.groupNodes);
  if (!group.fits()) {
    return;
  }
  // Kept: the type with the fewest nodes, the first of the catalog's order.
  const auto keep = [&](AcrossNodes& kept) {
    if (kept.instance < 0 || group.nodes < kept.nodes) {
      kept = {index, group.nodes};
    }
  };
  if (instance.efaInterfaces == 0) {
    keep(evaluation.acrossNodesWithoutEfa);
    return;
  }
  if (request.groups <= 0) {
    keep(evaluation.acrossNodesUnformed);
    return;
  }
  evaluation.anyFits = true;
  addOptions(index, group, request, evaluation);
}

// Prices a fitting replica shape at each capacity type asked for.
void PlacementEngine::addOptions(int index, const Fit& fit, const Request& request,
                                 Evaluation& evaluation) const {
  const auto& constraints = request.intent.constraints;
  for (CapacityType capacity :
       {CapacityType::OnDemand, CapacityType::Spot, CapacityType::Mixed, CapacityType::Reserved}) {
    if (capacity == CapacityType::Reserved) {
      if (!reservedOffered(index, request)) {
        continue;
      }
      if (auto why = reservationPassedOver(index, request)) {
        evaluation.reservationPassedOver = std::move(*why);
        continue;
      }
    } else if (!allowsCapacity(constraints.capacityType, capacity)) {
      continue;
    }
    if (capacity == CapacityType::Spot && request.spotWithheld) {
      evaluation.spotWithheld = true;
      continue;
    }
    if (capacity == CapacityType::Mixed && !request.capacityLabeled) {
      evaluation.mixedUnlabeled = true;
      continue;
    }
    if (!request.intent.claimsWritable && fit.migProfile >= 0 && request.capacity &&
        request.capacity->offersClaims(index, capacity)) {
      evaluation.claimsUnwritable = true;
      continue;
    }
    if (!keepsFixedDevices(index, fit, capacity, request)) {
      evaluation.devicesFixedOut = true;
      continue;
    }
    const auto nodeHourly = price(index, capacity);
    if (!nodeHourly) {
      continue;
    }
    // Built where it is kept: an option is large enough that copies show.
    auto& feasible = evaluation.feasible;
    Option& option = feasible.emplace_back(Option{index, capacity, fit, {}, *nodeHourly});
    quote(option, request);
    rankOf(option, request);
    if (request.capacity) {
      if (auto shortfall = shortfallOf(option, request, *request.capacity)) {
        evaluation.unoffered.push_back({option, *shortfall});  // reported, never chosen
        feasible.pop_back();
        continue;
      }
    }
    const double hourly = option.cost.perReplicaHourly;
    if (constraints.maxHourlyCost && hourly > *constraints.maxHourlyCost + 1e-12) {
      if (!evaluation.cheapestOverBudget ||
          hourly < evaluation.cheapestOverBudget->cost.perReplicaHourly) {
        evaluation.cheapestOverBudget = option;
      }
      feasible.pop_back();
    }
  }
}

bool PlacementEngine::keepsFixedDevices(int index, const Fit& fit, CapacityType capacity,
                                        const Request& request) const {
  const auto& fixed = request.intent.fixedDevices;
  if (fixed.resource.empty()) {
    return true;
  }
  // The shape as it would be written: render is what writes it.
  const auto shape = replicaShape(*catalog_, index, fit, capacity, request.capacity,
                                  request.intent.claimsWritable);
  const auto scheduling = renderScheduling(shape, *catalog_, policy_);
  bool asked = false;
  for (const auto& [name, value] : scheduling.resources) {
    // The team's own EFA request is its kind's to keep as well; a group
    // the manifest did not ask it for is reported by the plan.
    if (name == "cpu" || name == "memory" || name == kEfaResource) {
      continue;
    }
    if (name != fixed.resource || value != std::to_string(fixed.count)) {
      return false;
    }
    asked = true;
  }
  return asked && !scheduling.claim;
}

// Reserved nodes of the type exist, and the workload may run there: where
// it may run on-demand (a reservation is on-demand capacity paid ahead),
// and where a capacity-type selector keeps its pods on them (without one
// they could land on any node of the type, which the claim of nothing more
// would not cover).
bool PlacementEngine::reservedOffered(int index, const Request& request) const {
  const auto asked = request.intent.constraints.capacityType;
  if (!request.capacity || !request.capacityLabeled ||
      (asked != CapacityType::OnDemand && asked != CapacityType::Any)) {
    return false;
  }
  const Offer* offer = request.capacity->offer(index, CapacityType::Reserved);
  return offer && offer->nodes > 0;
}

// The type's reserved nodes are passed over when any of them belongs to a
// reservation the work cannot count on: one that ends before its deadline,
// or may (a Capacity Block whose end is not known); or one its owner may
// take back (interruptible), under work that did not consent to that (it
// asked for on-demand, or it serves online without the policy's consent, as
// for spot). The selector cannot keep the pods off one node of the type and
// on another.
std::optional<std::string> PlacementEngine::reservationPassedOver(int index,
                                                                  const Request& request) const {
  const auto& constraints = request.intent.constraints;
  const bool askedOnDemand = constraints.capacityType == CapacityType::OnDemand;
  const bool interruptionRefused =
      askedOnDemand ||
      (request.intent.kind == WorkloadKind::Inference && !policy_.capacity.spotForServing);
  const auto& deadline = constraints.deadline;
  const Offer* offer = request.capacity->offer(index, CapacityType::Reserved);
  const auto passedOver = [&](const NodeRoom& node, const std::string& why) {
    return "reserved " + catalog_->instances[static_cast<std::size_t>(index)].type +
           " not considered: " + node.reservation + why;
  };
  for (const auto& node : offer->room) {
    if (node.interruptible && interruptionRefused) {
      return passedOver(node, askedOnDemand
                                  ? " may be taken back by its owner, and "
                                    "spec.constraints.capacityType is OnDemand"
                                  : " may be taken back by its owner, and online serving runs "
                                    "on capacity that may be taken back only with the policy's "
                                    "consent (PlacementPolicy spec.capacity.spotForServing)");
    }
    if (!deadline) {
      continue;
    }
    const bool unknown = node.capacityBlock && !node.reservationEnds;
    if (!unknown && !(node.reservationEnds && *node.reservationEnds < *deadline)) {
      continue;
    }
    return passedOver(node, (unknown ? " has no end the cluster states (its EC2NodeClass's status)"
                                     : " ends " + base::formatRfc3339(*node.reservationEnds)) +
                                ", and spec.constraints.deadline is " +
                                base::formatRfc3339(*deadline));
  }
  return std::nullopt;
}

ReplicaRequests PlacementEngine::replicaRequests(const Option& option,
                                                 const Request& request) const {
  return replicaRequestsOf(option.fit.devices, request.need.podCpu, option.fit.cpuRequest,
                           request.need.podMemoryGiB, option.fit.memoryRequestGiB,
                           sliceName(option), option.fit.timeSlices > 0);
}

int PlacementEngine::timeSlicesOffered(int index, const Request& request) const {
  int fewest = 0;
  for (const auto capacity : {CapacityType::OnDemand, CapacityType::Spot, CapacityType::Reserved}) {
    const int ways = request.capacity ? request.capacity->timeSlicesOf(index, capacity) : 0;
    fewest = ways > 1 && (fewest == 0 || ways < fewest) ? ways : fewest;
  }
  return fewest;
}

std::string_view PlacementEngine::sliceName(const Option& option) const {
  if (option.fit.migProfile < 0) {
    return {};
  }
  const auto& spec = *catalog_->acceleratorOf(catalog_->instances[option.instance]);
  return spec.migProfiles[static_cast<std::size_t>(option.fit.migProfile)].name;
}

unsigned PlacementEngine::slicesOffered(int index, const Request& request) const {
  const auto* spec = catalog_->acceleratorOf(catalog_->instances[index]);
  if (!request.need.slices || !spec || !request.capacity) {
    return 0;
  }
  unsigned profiles = 0;
  for (std::size_t i = 0; i < spec->migProfiles.size(); ++i) {
    for (const auto capacity :
         {CapacityType::OnDemand, CapacityType::Spot, CapacityType::Reserved}) {
      if (request.capacity->offersSlice(index, capacity, spec->migProfiles[i].name)) {
        profiles |= 1U << i;
      }
    }
  }
  return profiles;
}

// An option needs its capacity type offered (a Mixed option both halves).
// And where no NodePool may add a node, the nodes there are must hold every
// replica: a type with room for some leaves the rest Pending until
// fallback moves them all. The placement in force is exempt from the room
// check: its own pods hold the room it needs, and leaving it is fallback's
// call.
std::optional<Shortfall> PlacementEngine::shortfallOf(const Option& option, const Request& request,
                                                      const Capacity& capacity) const {
  struct Part {
    CapacityType capacity;
    int replicas;
  };
  const int all = replicasOf(option.fit, request);
  std::array<Part, 2> parts{{{option.capacity, all}, {}}};
  std::size_t count = 1;
  if (option.capacity == CapacityType::Mixed) {
    const auto split = mixedSplit(all);
    parts = {{{CapacityType::OnDemand, split.onDemand}, {CapacityType::Spot, split.spot}}};
    count = 2;
  }
  const std::string_view slice = sliceName(option);
  for (std::size_t i = 0; i < count; ++i) {
    const bool offered =
        option.fit.timeSlices > 0 ? capacity.timeSlicesOf(option.instance, parts[i].capacity) > 1
        : slice.empty()           ? capacity.offered(option.instance, parts[i].capacity)
                                  : capacity.offersSlice(option.instance, parts[i].capacity, slice);
    if (!offered) {
      return Shortfall{parts[i].capacity, false, std::max(parts[i].replicas, 1), 0, 0};
    }
  }
  if (option.instance == request.ownInstance && option.capacity == request.ownCapacity &&
      slice == request.ownMigProfile && (option.fit.timeSlices > 0) == request.ownShared) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < count; ++i) {
    const auto [part, replicas] = parts[i];
    const Offer* offer = capacity.offer(option.instance, part);
    // A Mixed option of one replica has no spot half; NodePools add room,
    // but not slices: a node they launch has whole GPUs.
    if (replicas == 0 || !offer ||
        (!offer->nodesOnly() && slice.empty() && option.fit.timeSlices == 0)) {
      continue;
    }
    std::vector<const OwnPod*> own;
    // A group's pods, one on each of its nodes.
    const int needed = replicasNeeded(option, part, replicas, request, own) * option.fit.nodes;
    const int room = offer->replicasWithRoom(replicaRequests(option, request), needed, own);
    if (room < needed) {
      return Shortfall{part, true, std::max(replicas, 1), needed, room};
    }
  }
  return std::nullopt;
}

// Every replica; and where the workload's own pods already sit on nodes of
// the type (its pods before it was placed, say), a rollout's surge too:
// new pods start beside the old ones there, up to maxSurge of them.
int PlacementEngine::replicasNeeded(const Option& option, CapacityType capacity, int replicas,
                                    const Request& request,
                                    std::vector<const OwnPod*>& ownOnType) const {
  ownOnType.clear();
  if (request.ownPods) {
    const auto& type = catalog_->instances[option.instance].type;
    for (const auto& pod : *request.ownPods) {
      if (pod.instanceType == type && pod.capacity == capacity) {
        ownOnType.push_back(&pod);
      }
    }
  }
  return std::max(replicas, 1) +
         std::min(std::max(request.intent.surge, 0), static_cast<int>(ownOnType.size()));
}

// The decision's order over options, best first. A latency target comes
// first: options that meet it beat those that do not, and among those that
// do not, the faster wins. Then the objective, then documented,
// deterministic tie-breaks (fewer devices, on-demand before spot, instance
// type name, which is catalog order), so equal inputs give equal answers.
// Written as a key computed once per option, so ranking compares tuples.
void PlacementEngine::rankOf(Option& option, const Request& request) const {
  const bool target = request.need.latencyTargetMs.has_value();
  const bool meets = option.fit.meetsLatency;
  const double cost = option.cost.perReplicaHourly;
  const double performance = option.fit.performance;
  // CostOptimized: what the cluster pays more, then (with a cluster view,
  // where the two differ) what the workload is charged, else performance.
  double primary = option.cost.marginalHourly;
  double secondary = option.cost.cluster ? cost : -performance;
  switch (request.intent.objective) {
    case Objective::CostOptimized:
      // With a throughput to carry, the cheapest is what carrying it costs:
      // more replicas of a cheaper device can cost less than one dear one.
      if (const int replicas = replicasToCarry(option, request); replicas > 0) {
        primary *= replicas;
        secondary = option.cost.cluster ? cost * replicas : -performance;
      }
      break;
    case Objective::Balanced:
      // Devices already paid for cost the cluster nothing more: they come
      // first, the best performance per dollar of their share among them.
      if (option.cost.marginalHourly <= kSamePrice) {
        primary = -std::numeric_limits<double>::max();
        secondary = -(performance / std::max(cost, 1e-9));
      } else {
        primary = -(performance / option.cost.marginalHourly);
        secondary = cost;
      }
      break;
    case Objective::MaxPerformance:
      // The fastest, among options that leave no device they pay for idle
      // when there is one: a small model is not put on an eight-GPU node
      // for one device's speed; with enough replicas to fill it, it is.
      primary = (idleDevicesOf(option, request) > 0 ? kIdlePenalty : 0) - performance;
      secondary = cost;
      break;
  }
  // A slice sorts after whole devices at the same price and speed: a
  // whole device is the simpler thing to run.
  option.rank = {
      target && !meets ? 1.0 : 0.0,
      target && !meets ? option.fit.latencyMs : 0.0,
      primary,
      secondary,
      option.fit.devices * 8 + (option.fit.timeSlices > 0 ? 7 : option.fit.migProfile + 1),
      static_cast<int>(option.capacity),
      option.instance};
}

int replicasToCarry(const Option& option, const Request& request) {
  const double target = request.need.tokensPerSecond;
  if (target <= 0 || option.fit.performance <= 0) {
    return 0;
  }
  return static_cast<int>(std::ceil(target / option.fit.performance - 1e-9));
}

int PlacementEngine::idleDevicesOf(const Option& option, const Request& request) const {
  // A slice's node holds replicasPerNode slices; whole devices, the type's count.
  const int perNode = option.fit.migProfile >= 0 ? option.fit.replicasPerNode
                      : option.fit.timeSlices > 0
                          ? option.fit.timeSlices
                          : catalog_->instances[option.instance].acceleratorCount;
  const auto& cost = option.cost;
  if (cost.basis == CostModel::AcceleratorShare || perNode == 0) {
    return 0;  // a share of a node: the rest is not this workload's to pay
  }
  if (cost.cluster) {
    return std::max(0, (cost.newNodes + cost.ownNodes) * perNode -
                           (replicasOf(option.fit, request) - cost.replicasOnIdle) *
                               option.fit.nodes * option.fit.devices);
  }
  return std::max(0, cost.nodes * perNode -
                         replicasOf(option.fit, request) * option.fit.nodes * option.fit.devices);
}

// Whole nodes with the cluster's idle devices when the view has capacity
// and the policy prices whole nodes; the policy's model otherwise.
const NodeCostModel& PlacementEngine::costsFor(const ClusterContext* cluster,
                                               std::optional<ClusterCost>& storage) const {
  const ClusterView* view = cluster ? cluster->view : nullptr;
  if (!view || view->capacity.source == CapacitySource::None ||
      policy_.costModel != CostModel::WholeInstance) {
    return costModelFor(policy_.costModel);
  }
  return storage.emplace(view->capacity, cluster->own);
}

Weighing PlacementEngine::weigh(const WorkloadIntent& intent, const NodeCostModel& costs,
                                const ClusterContext* cluster) const {
  const auto memory = estimateMemory(intent, policy_.memoryOverheads);
  const ClusterView* view = cluster ? cluster->view : nullptr;
  Weighing weighing{memory, requestFor(intent, memory, costs, view), {}, nullptr, false, {}};
  if (cluster) {
    weighing.request.ownInstance = cluster->own.instance;
    weighing.request.ownCapacity = cluster->own.capacity;
    weighing.request.ownMigProfile = cluster->own.migProfile;
    weighing.request.ownShared = cluster->own.shared;
    weighing.request.ownPods = &cluster->ownPods;
  }
  const Request& request = weighing.request;
  auto& evaluation = weighing.evaluation;
  evaluation.feasible.reserve(4 * catalog_->instances.size());
  // A rule whose candidates all miss the latency target gives way to the
  // next matching rule, so a target decides by what the hardware can do,
  // not by which side of a class boundary it falls. When no rule meets it,
  // the rule with the fastest answer places it.
  const Rule* fastestMiss = nullptr;
  double fastestMissMs = 0;
  const auto settle = [&](const Rule& rule) {
    const auto weighed = tryRule(rule, request, evaluation);
    if (weighed == RuleOutcome::Meets) {
      weighing.rule = &rule;
      return true;
    }
    if (weighed == RuleOutcome::Misses && (!fastestMiss || evaluation.bestMs < fastestMissMs)) {
      fastestMiss = &rule;
      fastestMissMs = evaluation.bestMs;
    }
    return false;
  };
  // A rule whose candidates are among those of a rule already weighed and
  // passed over can place nothing that one could not: it is not weighed.
  std::vector<CandidateMask> passed;
  for (std::size_t r = 0; r < rules_->rules.size(); ++r) {
    const auto& rule = rules_->rules[r];
    if (disabledRules_[r] || !matches(rule, intent, request.bucket, request.latency)) {
      continue;
    }
    weighing.matched.push_back(r);
    const auto& mask = candidateMasks_[r];
    if (std::any_of(passed.begin(), passed.end(),
                    [&](const CandidateMask& wider) { return mask.within(wider); })) {
      continue;
    }
    if (settle(rule)) {
      rank(evaluation);
      return weighing;
    }
    passed.push_back(mask);
  }
  // The tiers a workload names are the user's decision: when no matching
  // rule offers them, place on them directly, hardware checks and all.
  weighing.userTiers = userTiersUnoffered(intent, weighing.matched);
  if (weighing.userTiers && settle(userTiersRule_)) {
    rank(evaluation);
    return weighing;
  }
  if (fastestMiss) {
    tryRule(*fastestMiss, request, evaluation);
    weighing.rule = fastestMiss;
    rank(evaluation);
    return weighing;
  }
  weighUnplaced(weighing);
  return weighing;
}

// Weighs the candidates of `rule`: none can run the workload (the next
// matching rule may), the best meets the latency target (or there is none),
// or all miss it (evaluation.bestMs: the fastest of them).
PlacementEngine::RuleOutcome PlacementEngine::tryRule(const Rule& rule, const Request& request,
                                                      Evaluation& evaluation) const {
  evaluation.reset();
  evaluateRule(rule, request, evaluation);
  const auto& feasible = evaluation.feasible;
  if (feasible.empty()) {
    return RuleOutcome::None;
  }
  if (!request.need.latencyTargetMs) {
    return RuleOutcome::Meets;
  }
  const auto best = std::min_element(feasible.begin(), feasible.end(), better);
  evaluation.bestMs = best->fit.latencyMs;
  return best->fit.meetsLatency ? RuleOutcome::Meets : RuleOutcome::Misses;
}

bool PlacementEngine::userTiersUnoffered(const WorkloadIntent& intent,
                                         const std::vector<std::size_t>& matched) const {
  const auto& tiers = intent.constraints.tiers;
  if (tiers.empty()) {
    return false;
  }
  for (std::size_t r : matched) {
    for (Tier tier : tiers) {
      if (rules_->rules[r].tiers.contains(tier)) {
        return false;
      }
    }
  }
  return true;
}

// Only the best option and the runners-up of a few other instance types are
// reported: rank each type's best option, and order only as many of those
// as are read. A type's options are added together, so its best is found
// in one pass.
void PlacementEngine::rank(Evaluation& evaluation) const {
  const auto& feasible = evaluation.feasible;
  auto& ranked = evaluation.ranked;
  ranked.clear();
  ranked.reserve(feasible.size());
  for (std::uint32_t i = 0; i < feasible.size(); ++i) {
    if (!ranked.empty() && feasible[ranked.back()].instance == feasible[i].instance) {
      if (better(feasible[i], feasible[ranked.back()])) {
        ranked.back() = i;
      }
      continue;
    }
    ranked.push_back(i);
  }
  // The first few in order by insertion: fewer comparisons than a heap
  // for so few, and most types lose to the last of them at once.
  const std::size_t head = std::min<std::size_t>(ranked.size(), kRunnersUp + 1);
  for (std::size_t i = 1; i < ranked.size(); ++i) {
    const std::uint32_t candidate = ranked[i];
    std::size_t at = std::min(i, head);
    if (at == head) {
      if (!better(feasible[candidate], feasible[ranked[head - 1]])) {
        continue;
      }
      ranked[i] = ranked[head - 1];  // displaced from the head, kept unordered
      --at;
    }
    for (; at > 0 && better(feasible[candidate], feasible[ranked[at - 1]]); --at) {
      ranked[at] = ranked[at - 1];
    }
    ranked[at] = candidate;
  }
}

// Nothing fits under any rule tried: weigh the union of their candidates,
// from which the explainer names the constraint that bound.
void PlacementEngine::weighUnplaced(Weighing& weighing) const {
  const Request& request = weighing.request;
  std::vector<const Rule*> tried;
  for (std::size_t r : weighing.matched) {
    tried.push_back(&rules_->rules[r]);
  }
  if (weighing.userTiers) {
    tried.push_back(&userTiersRule_);
  }
  auto& overall = weighing.evaluation;
  overall.reset();
  const auto& instances = catalog_->instances;
  std::vector<bool> seen(instances.size(), false);
  for (const Rule* rule : tried) {
    for (std::size_t i = 0; i < instances.size(); ++i) {
      if (seen[i] || !isCandidate(*rule, instances[i], request)) {
        continue;
      }
      seen[i] = true;
      if (request.neuronBlocked & tierBit(instances[i].tier)) {
        overall.neuronBlockedTiers |= tierBit(instances[i].tier);
        continue;
      }
      evaluateInstance(static_cast<int>(i), request, overall);
    }
  }
}

InForceWeighing PlacementEngine::weighInForce(const WorkloadIntent& intent,
                                              const std::string& instanceType, int count,
                                              const DeviceShare& share, CapacityType capacity,
                                              const ClusterContext* cluster,
                                              std::optional<ClusterCost>& costStorage) const {
  InForceWeighing weighing;
  weighing.instance = catalog_->indexOf(instanceType);
  weighing.count = count;
  if (weighing.instance < 0) {
    weighing.verdict = InForceVerdict::NotInCatalog;
    return weighing;
  }
  int profile = -1;
  if (const auto* spec = catalog_->acceleratorOf(catalog_->instances[weighing.instance]);
      spec && !share.migProfile.empty()) {
    for (std::size_t i = 0; i < spec->migProfiles.size(); ++i) {
      profile = spec->migProfiles[i].name == share.migProfile ? static_cast<int>(i) : profile;
    }
    if (profile < 0) {
      weighing.verdict = InForceVerdict::NotInCatalog;  // the catalog no longer lists the profile
      return weighing;
    }
  }
  if (!price(weighing.instance, capacity)) {
    weighing.verdict = InForceVerdict::Unpriced;
    return weighing;
  }
  weighing.memory = estimateMemory(intent, policy_.memoryOverheads);
  const auto& request = weighing.request.emplace(requestFor(
      intent, weighing.memory, costsFor(cluster, costStorage), cluster ? cluster->view : nullptr));
  const auto& option = weighing.option.emplace(
      inForce(weighing.instance, count, profile, share.timeSlices, capacity, request));
  const auto& instance = catalog_->instances[weighing.instance];
  const auto& budget = intent.constraints.maxHourlyCost;
  // In the order the explainer has always said them: what the workload
  // allows, then whether the model still fits, then what it costs.
  using V = InForceVerdict;
  if (!allowedBy(request, instance)) {
    weighing.verdict = V::OutsideConstraints;
  } else if (!allowsCapacity(intent.constraints.capacityType, capacity)) {
    weighing.verdict = V::CapacityNotAllowed;
  } else if ((request.neuronBlocked & tierBit(instance.tier)) != 0) {
    weighing.verdict = V::NeuronIneligible;
  } else if (capacity == CapacityType::Spot && request.spotWithheld) {
    weighing.verdict = V::SpotWithheld;
  } else if (!option.fit.fits()) {
    weighing.verdict = V::NoLongerFits;
  } else if (budget && option.cost.perReplicaHourly > *budget + 1e-12) {
    weighing.verdict = V::OverBudget;
  }
  return weighing;
}

Option PlacementEngine::inForce(int index, int count, int migProfile, int timeSlices,
                                CapacityType capacity, const Request& request) const {
  const auto& instance = catalog_->instances[index];
  Fit fit = fitWithDevices(*catalog_, instance, request.need, count, migProfile, timeSlices);
  if (fit.misfit == Misfit::Memory && migProfile < 0 && timeSlices <= 1 && request.groups > 0 &&
      instance.efaInterfaces > 0) {
    // A group across nodes, as weigh() would place it there: the same
    // devices a pod.
    if (Fit group = fitAcrossNodes(*catalog_, instance, request.need, request.groupNodes);
        group.fits() && group.devices == count) {
      fit = group;
    }
  }
  if (!fit.fits() && timeSlices > 1) {
    // Priced as the replicas it holds.
    const Misfit misfit = fit.misfit;
    const int taken = std::clamp(count, 1, timeSlices);
    fit = Fit{};
    fit.misfit = misfit;
    fit.devices = taken;
    fit.timeSlices = timeSlices;
    fit.replicasPerNode = timeSlices / taken;
    fit.share = static_cast<double>(taken) / timeSlices;
    fit.memoryRequestGiB = hostMemoryRequestGiB(request.need);
  } else if (!fit.fits() && migProfile >= 0) {
    // Priced as the slice it runs on.
    const auto& spec = *catalog_->acceleratorOf(instance);
    const auto& profile = spec.migProfiles[static_cast<std::size_t>(migProfile)];
    const Misfit misfit = fit.misfit;
    fit = Fit{};
    fit.misfit = misfit;
    fit.devices = 1;
    fit.migProfile = migProfile;
    fit.replicasPerNode = instance.acceleratorCount * profile.perGpu;
    fit.share = 1.0 / fit.replicasPerNode;
    fit.availableGiB = migMemoryGiB(spec, profile);
    fit.memoryRequestGiB = hostMemoryRequestGiB(request.need);
  } else if (!fit.fits()) {
    // Priced as it runs, for what it costs today.
    const Misfit misfit = fit.misfit;
    fit = Fit{};
    fit.misfit = misfit;
    fit.devices =
        instance.acceleratorCount > 0 ? std::clamp(count, 1, instance.acceleratorCount) : 0;
    fit.replicasPerNode =
        instance.acceleratorCount > 0 ? instance.acceleratorCount / fit.devices : 1;
    fit.share = instance.acceleratorCount > 0
                    ? static_cast<double>(fit.devices) / instance.acceleratorCount
                    : 1.0;
    if (const auto* spec = catalog_->acceleratorOf(instance)) {
      fit.availableGiB = fit.devices * spec->memoryGiB;
      fit.memoryRequestGiB = hostMemoryRequestGiB(request.need);
    } else {
      fit.cpuRequest = kCpuRequestVcpus;
      fit.memoryRequestGiB = cpuMemoryRequestGiB(request.need.requiredGiB, request.need.fillLimit,
                                                 request.need.runtimeGiB);
    }
  }
  // Unranked: an assessment compares its cost, not its place in an order.
  Option option{index, capacity, fit, {}, price(index, capacity).value_or(0)};
  quote(option, request);
  return option;
}

}  // namespace gpuplacement::core
