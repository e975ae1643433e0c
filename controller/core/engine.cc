#include "core/engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "base/decimal.h"
#include "core/quantity.h"

namespace gpuplacement::core {
namespace {

using base::formatFixed;
using base::formatGiB;
using base::formatMoney;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// How many runner-up and rejected options a decision reports.
constexpr std::size_t kRunnersUp = 3;
constexpr std::size_t kMaxAlternatives = 6;
// Money closer than this is the same price.
constexpr double kSamePrice = 5e-5;
// Ranks MaxPerformance options that pay for idle devices after all others.
constexpr double kIdlePenalty = 1e15;

const char* capacityLabel(CapacityType capacity) {
  return capacity == CapacityType::Spot ? "spot" : "on-demand";
}

std::string describeShape(const InstanceType& instance, const AcceleratorSpec* accelerator,
                          int count) {
  if (!accelerator) {
    return instance.type + " (CPU)";
  }
  return instance.type + " (" + std::to_string(count) + "x " + accelerator->name + ")";
}

std::string milliseconds(double ms) {
  return formatFixed(ms, ms < 100 ? 1 : 0) + " ms";
}

bool containsTier(const std::vector<Tier>& tiers, Tier tier) {
  return tiers.empty() || std::find(tiers.begin(), tiers.end(), tier) != tiers.end();
}

bool containsString(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

unsigned tierBit(Tier tier) {
  return 1U << static_cast<unsigned>(tier);
}

// How many instance types the first `count` ranked options cover.
template <typename Options>
std::size_t distinctTypes(const Options& options, const std::vector<std::uint32_t>& ranked,
                          std::size_t count) {
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < count; ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) {
      seen = options[ranked[j]].instance == options[ranked[i]].instance;
    }
    distinct += seen ? 0 : 1;
  }
  return distinct;
}

// "Inference or BatchInference": the values a rule condition allows.
template <typename E>
std::string namesIn(const EnumSet<E>& set) {
  std::string text;
  for (std::size_t i = 0; i < enumCount<E>(); ++i) {
    if (set.has(static_cast<E>(i))) {
      text += (text.empty() ? "" : ", ") + std::string(nameOf(static_cast<E>(i)));
    }
  }
  return text;
}

}  // namespace

MemoryEstimate estimateMemory(const WorkloadIntent& intent, const MemoryOverheads& overheads) {
  MemoryEstimate memory;
  memory.parameters = intent.parameters;
  memory.precision = intent.precision;
  memory.bytesPerParameter = bytesPerParameter(intent.precision);
  memory.overhead = overheads.forKind(intent.kind);
  memory.weightsGiB = static_cast<double>(intent.parameters) * memory.bytesPerParameter / kGiB;
  memory.method = methodOf(intent);
  // Full training keeps 16-bit weights and gradients, fp32 master weights
  // and Adam's moments whatever the storage format: the overhead applies to
  // 2 bytes a parameter (8 of them: 16 bytes), activations on top.
  const double basisGiB = intent.kind == WorkloadKind::Training
                              ? static_cast<double>(intent.parameters) * 2 / kGiB
                              : memory.weightsGiB;
  memory.requiredGiB = basisGiB * memory.overhead;
  memory.runtimeGiB = overheads.runtimeGiB(intent.framework);
  return memory;
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

// One way to run the replicas: an instance type, a capacity type, how a
// replica fits there, and what the cost model charges for it.
struct PlacementEngine::Option {
  int instance = -1;
  CapacityType capacity = CapacityType::OnDemand;
  Fit fit;
  CostQuote cost;
  double nodeHourly = 0;
  // The decision's order as a key, smallest best (see rankOf).
  std::tuple<double, double, double, double, int, int, int> rank{};
};

// Everything learned while trying a rule's candidates: the options that
// work, and enough about the others to explain a failure. No strings are
// built here; that waits until the few that are reported are known.
struct PlacementEngine::Evaluation {
  std::vector<Option> feasible;
  std::vector<std::uint32_t> ranked;  // indexes into feasible, best first (see choose)
  bool anyCandidate = false;
  bool anyPriced = false;
  bool anyRunnable = false;  // some candidate's hardware runs the precision
  bool anyFits = false;
  bool spotWithheld = false;  // spot offered nothing: online serving without the policy's consent
  double bestMs = 0;          // tryRule: the best option's latency when all miss the target
  double largestGiB = 0;
  int largestInstance = -1;  // offers the most usable memory of the runnable candidates
  bool largestFits = false;
  Misfit largestMisfit = Misfit::None;
  std::optional<Option> cheapestOverBudget;
  unsigned neuronBlockedTiers = 0;     // bit per Tier that the Neuron gate kept out
  std::uint64_t precisionBlocked = 0;  // bit per accelerator that cannot run the precision
  std::uint64_t karpenterBlocked = 0;  // bit per fractional accelerator under Karpenter
  std::vector<Option> unoffered;       // would run, but no node or NodePool offers them
  FitChoices fits;                     // scratch for one instance type's choices

  // Forgets everything but the storage of the options and their ranking.
  void reset() {
    auto options = std::move(feasible);
    auto order = std::move(ranked);
    auto absent = std::move(unoffered);
    options.clear();
    order.clear();
    absent.clear();
    *this = Evaluation{};
    feasible = std::move(options);
    ranked = std::move(order);
    unoffered = std::move(absent);
  }
};

// One decision's inputs, worked out once.
struct PlacementEngine::Request {
  const WorkloadIntent& intent;
  const NodeCostModel& costs;
  Requirement need;
  const Capacity* capacity = nullptr;  // null or source None: every type is offered
  int replicas = 1;                    // for pricing: at least one
  // Online serving asked for Any capacity and the policy does not allow
  // spot for it: only on-demand is priced.
  bool spotWithheld = false;
  unsigned neuronBlocked = 0;
  std::size_t bucket = 0;
  LatencyClass latency = LatencyClass::Relaxed;
};

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
  }
  for (const auto& instance : instances) {
    if (instance.accelerator >= 0) {
      engine->acceleratorsOfTier_[static_cast<std::size_t>(instance.tier)] |=
          1ULL << instance.accelerator;
    }
  }
  engine->fillLimitText_ = base::formatPercent(effective.memoryFillLimit);
  engine->defaultScheme_ = nodeLabelsFor(effective, nullptr).scheme;
  return std::shared_ptr<const PlacementEngine>(std::move(engine));
}

std::optional<double> PlacementEngine::price(int instance, CapacityType capacity) const {
  return capacity == CapacityType::Spot ? spot_[instance] : onDemand_[instance];
}

PlacementEngine::Request PlacementEngine::requestFor(const WorkloadIntent& intent,
                                                     const MemoryEstimate& memory,
                                                     const NodeCostModel& costs,
                                                     const ClusterView* view) const {
  Request request{intent, costs, {}};
  if (view && view->capacity.source != CapacitySource::None) {
    request.capacity = &view->capacity;
  }
  auto& need = request.need;
  need.requiredGiB = memory.requiredGiB;
  need.weightsGiB = memory.weightsGiB;
  need.architecture = intent.architecture;
  need.work = workOf(intent.architecture, intent.parameters, memory.weightsGiB * kGiB);
  need.precision = intent.precision;
  need.training = isTraining(intent.kind);
  need.inference = !need.training;
  need.batch = intent.kind == WorkloadKind::BatchInference;
  need.latencyTargetMs = need.inference ? intent.latencyTargetMs : std::nullopt;
  need.fillLimit = policy_.memoryFillLimit;
  need.karpenter = (view ? view->labels.scheme : defaultScheme_) == LabelScheme::Karpenter;
  need.runtimeGiB = memory.runtimeGiB;
  need.stagingGiB = std::min(memory.weightsGiB, kLoadShardGiB);
  need.podCpu = intent.podCpu;
  need.podMemoryGiB = intent.podMemoryGiB;
  request.replicas = std::max(intent.replicas, 1);
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
  if (!neuronSoftware || !need.training) {
    request.neuronBlocked |= tierBit(Tier::Trainium);
  }
  if (!neuronSoftware || need.training) {
    request.neuronBlocked |= tierBit(Tier::Inferentia);
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

// The first condition of `rule` the workload fails, as "sizes small (this
// model is large)"; empty when the rule matches.
std::string PlacementEngine::whyNotMatched(const Rule& rule, const WorkloadIntent& intent,
                                           std::size_t bucket, LatencyClass latency) const {
  const auto condition = [](std::string allowed, std::string_view actual) {
    return allowed + " only (this workload: " + std::string(actual) + ")";
  };
  if (!rule.kinds.contains(intent.kind)) {
    return condition("kinds " + namesIn(rule.kinds), nameOf(intent.kind));
  }
  const auto& size = knobs_.sizeBuckets[bucket].name;
  if (!rule.sizes.empty() && !containsString(rule.sizes, size)) {
    std::string sizes;
    for (const auto& name : rule.sizes) {
      sizes += (sizes.empty() ? "" : ", ") + name;
    }
    return condition("sizes " + sizes, size);
  }
  if (!rule.latency.contains(latency)) {
    return condition("latency " + namesIn(rule.latency), nameOf(latency));
  }
  if (!rule.objectives.contains(intent.objective)) {
    return condition("objectives " + namesIn(rule.objectives), nameOf(intent.objective));
  }
  if (!rule.frameworks.contains(intent.framework)) {
    return condition("frameworks " + namesIn(rule.frameworks), nameOf(intent.framework));
  }
  if (!rule.architectures.contains(intent.architecture)) {
    return condition("architectures " + namesIn(rule.architectures), nameOf(intent.architecture));
  }
  return "";
}

// Why a Neuron tier cannot run this workload, or empty if it can. The seeds
// (002) and the Neuron SDK: Trainium trains, Inferentia serves, both with
// the supported frameworks and architectures only.
std::string PlacementEngine::neuronIneligibility(Tier tier, const WorkloadIntent& intent) const {
  if (tier != Tier::Trainium && tier != Tier::Inferentia) {
    return "";
  }
  const std::string name(nameOf(tier));
  if (tier == Tier::Trainium && !isTraining(intent.kind)) {
    return name + " is for training; " + std::string(nameOf(intent.kind)) + " goes elsewhere";
  }
  if (tier == Tier::Inferentia && isTraining(intent.kind)) {
    return name + " serves models; it does not train them";
  }
  const auto& frameworks = knobs_.neuronFrameworks;
  if (std::find(frameworks.begin(), frameworks.end(), intent.framework) == frameworks.end()) {
    return name + ": the Neuron SDK does not support framework " +
           std::string(nameOf(intent.framework));
  }
  const auto& architectures = knobs_.neuronArchitectures;
  if (std::find(architectures.begin(), architectures.end(), intent.architecture) ==
      architectures.end()) {
    return name + ": Neuron is not used for " + std::string(nameOf(intent.architecture)) +
           " models";
  }
  return "";
}

bool PlacementEngine::isCandidate(const Rule& rule, const InstanceType& instance,
                                  const Constraints& constraints) const {
  if (!rule.tiers.contains(instance.tier) || !containsTier(constraints.tiers, instance.tier)) {
    return false;
  }
  if (instance.accelerator >= 0 && !rule.accelerators.empty() &&
      std::find(rule.accelerators.begin(), rule.accelerators.end(), instance.accelerator) ==
          rule.accelerators.end()) {
    return false;
  }
  return (constraints.instanceTypes.empty() ||
          containsString(constraints.instanceTypes, instance.type)) &&
         (constraints.excludedInstanceTypes.empty() ||
          !containsString(constraints.excludedInstanceTypes, instance.type));
}

void PlacementEngine::evaluateRule(const Rule& rule, const Request& request,
                                   Evaluation& evaluation) const {
  const auto& instances = catalog_->instances;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const auto& instance = instances[i];
    if (!isCandidate(rule, instance, request.intent.constraints)) {
      continue;
    }
    if (request.neuronBlocked & tierBit(instance.tier)) {
      evaluation.neuronBlockedTiers |= tierBit(instance.tier);
      continue;
    }
    evaluateInstance(static_cast<int>(i), request, evaluation);
  }
}

void PlacementEngine::evaluateInstance(int index, const Request& request,
                                       Evaluation& evaluation) const {
  const auto& instance = catalog_->instances[index];
  evaluation.anyCandidate = true;
  // An instance without a price for the capacity asked for is never chosen,
  // so it does not count as "eligible" in the explanations either.
  const auto capacity = request.intent.constraints.capacityType;
  const bool priced = (capacity != CapacityType::Spot && price(index, CapacityType::OnDemand)) ||
                      (capacity != CapacityType::OnDemand && price(index, CapacityType::Spot));
  if (!priced) {
    return;
  }
  evaluation.anyPriced = true;
  auto& fits = evaluation.fits;
  const int choices = fitChoices(*catalog_, instance, request.need, fits);
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
  if (!fit.fits()) {
    return;
  }
  evaluation.anyFits = true;
  for (int i = 0; i < choices; ++i) {
    addOptions(index, fits[i], request, evaluation);
  }
}

// Prices a fitting replica shape at each capacity type asked for.
void PlacementEngine::addOptions(int index, const Fit& fit, const Request& request,
                                 Evaluation& evaluation) const {
  const auto& constraints = request.intent.constraints;
  for (CapacityType capacity : {CapacityType::OnDemand, CapacityType::Spot}) {
    if (constraints.capacityType != CapacityType::Any && constraints.capacityType != capacity) {
      continue;
    }
    if (capacity == CapacityType::Spot && request.spotWithheld) {
      evaluation.spotWithheld = true;
      continue;
    }
    const auto nodeHourly = price(index, capacity);
    if (!nodeHourly) {
      continue;
    }
    const CostInput input{index,
                          &catalog_->instances[index],
                          capacity,
                          *nodeHourly,
                          request.replicas,
                          fit.replicasPerNode,
                          fit.share,
                          fit.devices};
    Option option{index, capacity, fit, request.costs.quote(input), *nodeHourly};
    rankOf(option, request);
    if (request.capacity && !request.capacity->offered(index, capacity)) {
      evaluation.unoffered.push_back(option);  // reported, never chosen
      continue;
    }
    const double hourly = option.cost.perReplicaHourly;
    if (constraints.maxHourlyCost && hourly > *constraints.maxHourlyCost + 1e-12) {
      if (!evaluation.cheapestOverBudget ||
          hourly < evaluation.cheapestOverBudget->cost.perReplicaHourly) {
        evaluation.cheapestOverBudget = option;
      }
      continue;
    }
    evaluation.feasible.push_back(option);
  }
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
      break;
    case Objective::Balanced:
      // Devices already paid for cost the cluster nothing more: they come
      // first, the best performance per dollar of their share among them.
      if (option.cost.cluster && option.cost.marginalHourly <= kSamePrice) {
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
  option.rank = {target && !meets ? 1.0 : 0.0,
                 target && !meets ? option.fit.latencyMs : 0.0,
                 primary,
                 secondary,
                 option.fit.devices,
                 static_cast<int>(option.capacity),
                 option.instance};
}

int PlacementEngine::idleDevicesOf(const Option& option, const Request& request) const {
  const int perNode = catalog_->instances[option.instance].acceleratorCount;
  const auto& cost = option.cost;
  if (cost.basis == CostModel::AcceleratorShare || perNode == 0) {
    return 0;  // a share of a node: the rest is not this workload's to pay
  }
  if (cost.cluster) {
    return std::max(0, (cost.newNodes + cost.ownNodes) * perNode -
                           (request.replicas - cost.replicasOnIdle) * option.fit.devices);
  }
  return std::max(0, cost.nodes * perNode - request.replicas * option.fit.devices);
}

bool PlacementEngine::better(const Option& a, const Option& b) {
  return a.rank < b.rank;
}

Decision PlacementEngine::decide(const WorkloadIntent& intent) const {
  return decideWith(intent, costModelFor(policy_.costModel), nullptr);
}

Decision PlacementEngine::decide(const WorkloadIntent& intent, const NodeCostModel& costs) const {
  return decideWith(intent, costs, nullptr);
}

Decision PlacementEngine::decide(const WorkloadIntent& intent,
                                 const ClusterContext& cluster) const {
  std::optional<ClusterCost> storage;
  return decideWith(intent, costsFor(&cluster, storage), cluster.view);
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

Decision PlacementEngine::decideWith(const WorkloadIntent& intent, const NodeCostModel& costs,
                                     const ClusterView* view) const {
  Decision decision;
  decision.memory = estimateMemory(intent, policy_.memoryOverheads);
  const Request request = requestFor(intent, decision.memory, costs, view);
  decision.sizeBucket = knobs_.sizeBuckets[request.bucket].name;
  decision.latency = request.latency;

  Evaluation evaluation;
  evaluation.feasible.reserve(4 * catalog_->instances.size());
  std::vector<std::size_t> matched;
  // A rule whose candidates all miss the latency target gives way to the
  // next matching rule, so a target decides by what the hardware can do,
  // not by which side of a class boundary it falls. When no rule meets it,
  // the rule with the fastest answer places it. Rules are weighed without
  // words; only the one that decides is explained.
  const Rule* fastestMiss = nullptr;
  double fastestMissMs = 0;
  const auto settle = [&](const Rule& rule) {
    const auto weighed = tryRule(rule, request, evaluation);
    if (weighed == RuleOutcome::Meets) {
      choose(rule, request, evaluation, decision);
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
    matched.push_back(r);
    const auto& mask = candidateMasks_[r];
    if (std::any_of(passed.begin(), passed.end(),
                    [&](const CandidateMask& wider) { return mask.within(wider); })) {
      continue;
    }
    if (settle(rule)) {
      return decision;
    }
    passed.push_back(mask);
  }
  // The tiers a workload names are the user's decision: when no matching
  // rule offers them, place on them directly, hardware checks and all.
  const bool userTiers = userTiersUnoffered(intent, matched);
  if (userTiers && settle(userTiersRule_)) {
    decision.ruleSource += "; " + userTiersNote(intent, request.bucket, request.latency);
    return decision;
  }
  if (fastestMiss) {
    tryRule(*fastestMiss, request, evaluation);
    choose(*fastestMiss, request, evaluation, decision);
    if (fastestMiss == &userTiersRule_) {
      decision.ruleSource += "; " + userTiersNote(intent, request.bucket, request.latency);
    }
    return decision;
  }
  explainFailure(request, matched, decision);
  return decision;
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

// Which rules offer the workload's tiers and why none of them matched:
// "small-model-inference offers CPU for sizes small only (this workload: large)".
std::string PlacementEngine::userTiersNote(const WorkloadIntent& intent, std::size_t bucket,
                                           LatencyClass latency) const {
  std::string note;
  for (std::size_t r = 0; r < rules_->rules.size(); ++r) {
    const auto& rule = rules_->rules[r];
    for (Tier tier : intent.constraints.tiers) {
      if (rule.tiers.any() || !rule.tiers.has(tier)) {
        continue;
      }
      note += (note.empty() ? "" : "; ") + rule.name + " offers " + std::string(nameOf(tier)) +
              (disabledRules_[r] ? " but is disabled by the policy"
                                 : " for " + whyNotMatched(rule, intent, bucket, latency));
      break;
    }
  }
  return note.empty() ? "no rule offers these tiers" : note;
}

void PlacementEngine::choose(const Rule& rule, const Request& request, Evaluation& evaluation,
                             Decision& decision) const {
  // Only the best and the runners-up of a few other types are reported:
  // rank the first few (an instance type has at most two options, one per
  // capacity type), and all only when those cover too few types.
  const auto& feasible = evaluation.feasible;
  auto& ranked = evaluation.ranked;
  ranked.resize(feasible.size());
  for (std::size_t i = 0; i < ranked.size(); ++i) {
    ranked[i] = static_cast<std::uint32_t>(i);
  }
  const auto order = [&](std::uint32_t a, std::uint32_t b) {
    return better(feasible[a], feasible[b]);
  };
  const std::size_t head = std::min<std::size_t>(ranked.size(), 2 * (kRunnersUp + 1));
  std::partial_sort(ranked.begin(), ranked.begin() + head, ranked.end(), order);
  if (head < ranked.size() && distinctTypes(feasible, ranked, head) <= kRunnersUp) {
    std::sort(ranked.begin() + head, ranked.end(), order);
  }
  const Option& best = feasible[ranked.front()];
  decision.placement = placementOf(best, request);
  decision.latencyTargetUnreachable = request.need.latencyTargetMs && !best.fit.meetsLatency;
  explainChoice(rule, best, request, decision);
  if (evaluation.spotWithheld) {
    decision.reason +=
        "; spot not considered: online serving on spot needs the policy's consent "
        "(PlacementPolicy spec.capacity.spotForServing)";
  }
  listRunnersUp(best, request, evaluation, decision);
  listUnoffered(&best, evaluation, decision);
  listRuledOut(request, evaluation, decision);
}

Placement PlacementEngine::placementOf(const Option& option, const Request& request) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto* accelerator = catalog_->acceleratorOf(instance);
  const auto& fit = option.fit;
  Placement placement;
  placement.latencyUnit = latencyUnitOf(request.intent.architecture);
  placement.tier = instance.tier;
  placement.accelerator = accelerator ? accelerator->name : "";
  placement.instanceType = instance.type;
  placement.acceleratorCount = fit.devices;
  placement.acceleratorsPerInstance = instance.acceleratorCount;
  placement.capacityType = option.capacity;
  placement.hourlyCost = option.cost.perReplicaHourly;
  placement.monthlyCost = placement.hourlyCost * policy_.hoursPerMonth;
  placement.replicas = request.intent.replicas;
  placement.totalHourlyCost = placement.hourlyCost * request.intent.replicas;
  placement.totalMonthlyCost = placement.monthlyCost * request.intent.replicas;
  placement.requiredMemoryGiB = request.need.requiredGiB;
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
  placement.nodes = option.cost.nodes;
  placement.replicasPerNode = fit.replicasPerNode;
  placement.replicasOnIdle = option.cost.replicasOnIdle;
  if (option.cost.cluster) {
    placement.clusterHourlyCost = option.cost.marginalHourly;
  }
  placement.idleAccelerators = idleDevicesOf(option, request);
  placement.cpuRequest = fit.cpuRequest;
  placement.memoryRequestGiB = fit.memoryRequestGiB;
  placement.neededAccelerators = fit.neededDevices;
  if (request.need.inference) {
    placement.latencyMs = fit.latencyMs;
    placement.latencyComputeBound = fit.roofline.computeBound();
  }
  placement.costNote = costNote(option, placement);
  return placement;
}

// The node behind the price, in one line: "1 of 16 Trainium on one
// trn1.32xlarge at $3.91/h; 15 idle", or the share and what it assumes.
std::string PlacementEngine::costNote(const Option& option, const Placement& placement) const {
  const auto& instance = catalog_->instances[option.instance];
  const std::string price = formatMoney(option.nodeHourly) + "/h";
  const std::string shape =
      placement.accelerator.empty()
          ? formatFixed(placement.cpuRequest, 0) + " vCPU and " +
                formatGiB(placement.memoryRequestGiB) + " GiB of " +
                std::to_string(instance.vcpus) + " vCPU, " + formatGiB(instance.memoryGiB) + " GiB"
          : std::to_string(placement.acceleratorCount) + " of " +
                std::to_string(instance.acceleratorCount) + " " + placement.accelerator;
  if (placement.costModel == CostModel::AcceleratorShare) {
    return shape + ": " + base::formatPercent(option.fit.share) + " of a " + instance.type +
           " at " + price + ", assuming other workloads pay for the rest (AcceleratorShare)";
  }
  if (option.cost.cluster) {
    return clusterCostNote(option, placement, shape, price);
  }
  std::string note = placement.nodes == 1
                         ? shape + " on one " + instance.type + " at " + price
                         : shape + " per replica on " + std::to_string(placement.nodes) + " " +
                               instance.type + " nodes at " + price + " each";
  if (placement.idleAccelerators > 0) {
    note +=
        "; " + std::to_string(placement.idleAccelerators) + " " + placement.accelerator + " idle";
  }
  return note;
}

// With a cluster view: which replicas use devices idle on existing nodes,
// which stay on nodes they have alone, and which need new nodes. "2 idle
// L4 on an existing g6.12xlarge at $4.60/h: 1 of 4 L4, charged its share
// (25%), nothing more for the cluster"; "1 of 1 L4 on a new g6.xlarge at
// $0.80/h".
std::string PlacementEngine::clusterCostNote(const Option& option, const Placement& placement,
                                             const std::string& shape,
                                             const std::string& price) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto& cost = option.cost;
  std::string note;
  if (cost.replicasOnIdle > 0) {
    note = std::to_string(cost.idleDevices) + " idle " + placement.accelerator + " on " +
           (cost.idleNodes <= 1
                ? "an existing " + instance.type
                : std::to_string(cost.idleNodes) + " existing " + instance.type + " nodes") +
           " at " + price + ": " + shape + ", charged its share (" +
           base::formatPercent(option.fit.share) + "), nothing more for the cluster";
    if (cost.replicasOnIdle < placement.replicas) {
      note += " for " + std::to_string(cost.replicasOnIdle) + " replicas";
    }
  }
  if (cost.ownNodes > 0) {
    note += (note.empty() ? shape + " on " : "; the rest on ") +
            (cost.ownNodes == 1 ? "the " + instance.type + " it runs on alone"
                                : std::to_string(cost.ownNodes) + " " + instance.type +
                                      " nodes it runs on alone") +
            " at " + price + (cost.ownNodes == 1 ? "" : " each") + ", the whole node";
  }
  if (cost.newNodes > 0) {
    note +=
        (note.empty() ? shape + " on " : "; the rest on ") +
        (cost.newNodes == 1 ? "a new " + instance.type
                            : std::to_string(cost.newNodes) + " new " + instance.type + " nodes") +
        " at " + price + (cost.newNodes == 1 ? "" : " each");
  }
  if (cost.newNodes + cost.ownNodes > 0 && placement.idleAccelerators > 0) {
    note +=
        "; " + std::to_string(placement.idleAccelerators) + " " + placement.accelerator + " idle";
  }
  return note;
}

void PlacementEngine::explainChoice(const Rule& rule, const Option& best, const Request& request,
                                    Decision& decision) const {
  const auto& instance = catalog_->instances[best.instance];
  const auto* accelerator = catalog_->acceleratorOf(instance);
  const auto objective = request.intent.objective;
  const char* superlative = objective == Objective::CostOptimized ? "the cheapest"
                            : objective == Objective::Balanced ? "the best performance per dollar"
                                                               : "the fastest";
  decision.rule = rule.name;
  decision.ruleSource = rule.source;
  decision.reason = rule.reason + "; " + describeShape(instance, accelerator, best.fit.devices) +
                    ", " + capacityLabel(best.capacity) + ", is " + superlative + " that holds " +
                    formatGiB(request.need.requiredGiB) + " GiB at " +
                    formatMoney(best.cost.perReplicaHourly) + "/h per replica";
  const auto& placement = *decision.placement;
  if (request.need.training && placement.acceleratorCount > placement.neededAccelerators &&
      placement.neededAccelerators > 0) {
    decision.reason += "; data-parallel across all " + std::to_string(placement.acceleratorCount) +
                       " " + placement.accelerator + " (the model needs " +
                       std::to_string(placement.neededAccelerators) +
                       "): the node is paid whole and the run is shorter";
  }
  if (best.capacity == CapacityType::Spot && request.intent.kind == WorkloadKind::Inference) {
    decision.reason += "; on spot, replicas can be interrupted with two minutes' notice: " +
                       std::string(request.intent.constraints.capacityType == CapacityType::Spot
                                       ? "the workload asks for spot"
                                       : "the policy allows spot for serving");
  }
  if (!request.need.latencyTargetMs) {
    return;
  }
  const char* unit = latencyUnitName(placement.latencyUnit);
  const std::string estimate = "at least " + milliseconds(best.fit.latencyMs) + " per " + unit;
  const std::string bound = best.fit.roofline.computeBound()
                                ? " (its arithmetic at the stated utilization binds)"
                                : " (weights read once per " + std::string(unit) + ")";
  const std::string target = milliseconds(*request.need.latencyTargetMs);
  if (decision.latencyTargetUnreachable) {
    decision.reason += "; LatencyTargetUnreachable: no option meets " + target +
                       "; this is the fastest, " + estimate + bound;
  } else {
    decision.reason += "; " + estimate + bound + ", within the " + target + " target";
  }
}

Alternative PlacementEngine::alternativeOf(const Option& option, std::string why) const {
  const auto& other = catalog_->instances[option.instance];
  const auto* accelerator = catalog_->acceleratorOf(other);
  return Alternative{
      other.type,      accelerator ? accelerator->name : "", other.tier,    option.fit.devices,
      option.capacity, option.cost.perReplicaHourly,         std::move(why)};
}

// How much less performance per dollar `option` gives than `best`, in
// what the cluster pays more; both on devices already paid for: per dollar
// of their shares. Nothing when it gives as much (it lost on latency).
std::optional<double> PlacementEngine::valueLoss(const Option& option, const Option& best) {
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

std::string PlacementEngine::lostBecause(const Option& option, const Option& best,
                                         const Request& request) const {
  if (request.need.latencyTargetMs && best.fit.meetsLatency != option.fit.meetsLatency) {
    return "at least " + milliseconds(option.fit.latencyMs) + " per " +
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
void PlacementEngine::listRunnersUp(const Option& best, const Request& request,
                                    const Evaluation& evaluation, Decision& decision) const {
  std::vector<int> listed{best.instance};
  for (std::uint32_t index : evaluation.ranked) {
    const auto& option = evaluation.feasible[index];
    if (decision.alternatives.size() >= kRunnersUp) {
      break;
    }
    if (std::find(listed.begin(), listed.end(), option.instance) != listed.end()) {
      continue;
    }
    listed.push_back(option.instance);
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
  if (cheaper && std::find(listed.begin(), listed.end(), cheaper->instance) == listed.end()) {
    decision.alternatives.push_back(alternativeOf(*cheaper, lostBecause(*cheaper, best, request)));
  }
}

// The best options of up to `limit` instance types that no node or NodePool
// offers, better than `best` when one was chosen.
std::vector<const PlacementEngine::Option*> PlacementEngine::bestUnoffered(
    const Evaluation& evaluation, const Option* best, std::size_t limit) const {
  std::vector<const Option*> options;
  for (const auto& option : evaluation.unoffered) {
    if (!best || better(option, *best)) {
      options.push_back(&option);
    }
  }
  std::sort(options.begin(), options.end(),
            [](const Option* a, const Option* b) { return better(*a, *b); });
  std::vector<const Option*> chosen;
  for (const Option* option : options) {
    const bool listed = std::any_of(chosen.begin(), chosen.end(), [&](const Option* other) {
      return other->instance == option->instance;
    });
    if (!listed && chosen.size() < limit) {
      chosen.push_back(option);
    }
  }
  return chosen;
}

// Better options the cluster cannot run: "no node or NodePool offers g5.xlarge".
void PlacementEngine::listUnoffered(const Option* best, const Evaluation& evaluation,
                                    Decision& decision) const {
  for (const Option* option : bestUnoffered(evaluation, best, 2)) {
    decision.alternatives.push_back(alternativeOf(
        *option, "no node or NodePool offers " + catalog_->instances[option->instance].type +
                     (option->capacity == CapacityType::Spot ? " spot" : "")));
  }
}

// Then what was ruled out: over budget, too small, hardware that cannot run
// the precision, types Karpenter cannot launch, Neuron tiers not eligible.
void PlacementEngine::listRuledOut(const Request& request, const Evaluation& evaluation,
                                   Decision& decision) const {
  auto& alternatives = decision.alternatives;
  if (evaluation.cheapestOverBudget) {
    alternatives.push_back(alternativeOf(
        *evaluation.cheapestOverBudget,
        "over maxHourlyCost " + formatMoney(*request.intent.constraints.maxHourlyCost) + "/h"));
  }
  if (evaluation.largestInstance >= 0 && !evaluation.largestFits) {
    const auto& largest = catalog_->instances[evaluation.largestInstance];
    const auto* accelerator = catalog_->acceleratorOf(largest);
    alternatives.push_back(Alternative{largest.type, accelerator ? accelerator->name : "",
                                       largest.tier, largest.acceleratorCount,
                                       CapacityType::OnDemand, std::nullopt,
                                       "needs " + formatGiB(request.need.requiredGiB) +
                                           " GiB; it offers " + formatGiB(evaluation.largestGiB) +
                                           " GiB within the " + fillLimitText_ + " fill limit"});
  }
  for (Tier tier : {Tier::NVIDIA, Tier::Trainium, Tier::Inferentia}) {
    const auto why = precisionBlocked(request, evaluation, tier);
    if (!why.empty() && alternatives.size() < kMaxAlternatives) {
      alternatives.push_back(
          Alternative{"", "", tier, 0, CapacityType::OnDemand, std::nullopt, why});
    }
  }
  if (evaluation.karpenterBlocked && alternatives.size() < kMaxAlternatives) {
    alternatives.push_back(Alternative{
        "", "", Tier::NVIDIA, 0, CapacityType::OnDemand, std::nullopt,
        "fractional GPUs (g6f): Karpenter counts no GPU on them and never launches one for "
        "nvidia.com/gpu"});
  }
  for (Tier tier : {Tier::Trainium, Tier::Inferentia}) {
    if ((evaluation.neuronBlockedTiers & tierBit(tier)) && alternatives.size() < kMaxAlternatives) {
      alternatives.push_back(Alternative{"", "", tier, 0, CapacityType::OnDemand, std::nullopt,
                                         neuronIneligibility(tier, request.intent)});
    }
  }
}

// "T4 (Turing), V100 (Volta) do not run bf16 natively": the accelerators of
// `tier` (of any tier when nullopt) that were ruled out for the precision.
std::string PlacementEngine::precisionBlocked(const Request& request, const Evaluation& evaluation,
                                              std::optional<Tier> tier) const {
  std::uint64_t blocked = evaluation.precisionBlocked;
  if (tier) {
    blocked &= acceleratorsOfTier_[static_cast<std::size_t>(*tier)];
  }
  std::string names;
  int count = 0;
  for (std::size_t i = 0; i < catalog_->accelerators.size(); ++i) {
    if (blocked & (1ULL << i)) {
      const auto& spec = catalog_->accelerators[i];
      names += (names.empty() ? "" : ", ") + spec.name +
               (spec.generation.empty() ? "" : " (" + spec.generation + ")");
      ++count;
    }
  }
  return count == 0 ? ""
                    : names + (count == 1 ? " does" : " do") + " not run " +
                          std::string(nameOf(request.need.precision)) + " natively";
}

// "cannot place on one node: needs 5,216 GiB; the largest eligible node,
// p6-b200.48xlarge, offers 1,289 GiB within the 90% fill limit (8x B200 of
// 179.06 GiB): it takes 5 nodes of p6-b200.48xlarge".
std::string PlacementEngine::tooSmall(const Request& request, const Evaluation& overall) const {
  const auto& largest = catalog_->instances[overall.largestInstance];
  if (overall.largestMisfit == Misfit::Pod) {
    return "the pod template requests " + formatFixed(request.need.podCpu, 2) + " vCPUs and " +
           formatGiB(request.need.podMemoryGiB) + " GiB per replica; the largest eligible node, " +
           largest.type + ", has " + formatFixed(largest.allocatableCpu, 2) + " vCPUs and " +
           formatGiB(largest.allocatableMemoryGiB) + " GiB allocatable";
  }
  if (overall.largestMisfit == Misfit::Cpu) {
    return "a CPU replica requests " + formatFixed(kCpuRequestVcpus, 0) +
           " vCPUs; the largest eligible node, " + largest.type + ", has " +
           formatFixed(largest.allocatableCpu, 2) + " allocatable";
  }
  const auto* accelerator = catalog_->acceleratorOf(largest);
  const std::string detail = accelerator
                                 ? std::to_string(largest.allowedAcceleratorCounts.back()) + "x " +
                                       accelerator->name + " of " +
                                       base::decimalString(accelerator->memoryGiB, 2) + " GiB"
                                 : formatGiB(largest.allocatableMemoryGiB) + " GiB allocatable";
  const int nodes =
      static_cast<int>(std::ceil(request.need.requiredGiB / std::max(overall.largestGiB, 1e-9)));
  return "cannot place on one node: needs " + formatGiB(request.need.requiredGiB) +
         " GiB; the largest eligible node, " + largest.type + ", offers " +
         formatGiB(overall.largestGiB) + " GiB within the " + fillLimitText_ + " fill limit (" +
         detail + "): it takes " + std::to_string(nodes) + " nodes of " + largest.type;
}

// Nothing fits under any rule tried: look at the union of their candidates
// and name the constraint that bound.
void PlacementEngine::explainFailure(const Request& request,
                                     const std::vector<std::size_t>& matched,
                                     Decision& decision) const {
  std::vector<const Rule*> tried;
  std::string rulesText;
  for (std::size_t r : matched) {
    tried.push_back(&rules_->rules[r]);
    rulesText += (rulesText.empty() ? "" : ", ") + rules_->rules[r].name;
  }
  if (userTiersUnoffered(request.intent, matched)) {
    tried.push_back(&userTiersRule_);
  }
  Evaluation overall;
  const auto& instances = catalog_->instances;
  std::vector<bool> seen(instances.size(), false);
  for (const Rule* rule : tried) {
    for (std::size_t i = 0; i < instances.size(); ++i) {
      if (seen[i] || !isCandidate(*rule, instances[i], request.intent.constraints)) {
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
  decision.cannotPlace = bindingConstraint(request, overall, rulesText);
  if (tried.size() > matched.size()) {
    // The workload's own tiers were tried: say which rules offer them and
    // what limits kept them from matching.
    const auto note = userTiersNote(request.intent, request.bucket, request.latency);
    decision.rule = userTiersRule_.name;
    decision.ruleSource = userTiersRule_.source + "; " + note;
    decision.cannotPlace += " (" + note + ")";
  } else if (!tried.empty()) {
    decision.rule = tried.front()->name;
    decision.ruleSource = tried.front()->source;
  }
  decision.reason = "cannot place: " + decision.cannotPlace;
  listRuledOut(request, overall, decision);
}

// "no node or NodePool offers g5.xlarge or g6.xlarge, the best that fit
// (capacity.source is Nodes: ...)".
std::string PlacementEngine::unofferedConstraint(const Request& request,
                                                 const Evaluation& overall) const {
  const auto absent = bestUnoffered(overall, nullptr, 3);
  std::string names;
  for (std::size_t i = 0; i < absent.size(); ++i) {
    names += (i == 0                   ? ""
              : i + 1 == absent.size() ? " or "
                                       : ", ") +
             catalog_->instances[absent[i]->instance].type;
  }
  return "no node or NodePool offers " + names + ", the best that fit (" + request.capacity->why +
         ")";
}

std::string PlacementEngine::bindingConstraint(const Request& request, const Evaluation& overall,
                                               const std::string& rulesText) const {
  const auto& constraints = request.intent.constraints;
  if (rulesText.empty() && constraints.tiers.empty()) {
    return "no rule matches this workload";
  }
  if (!overall.anyCandidate) {
    std::string why =
        "no instance type is both allowed by the constraints and eligible under the matching "
        "rules (" +
        rulesText + ")";
    for (Tier tier : {Tier::Trainium, Tier::Inferentia}) {
      if (overall.neuronBlockedTiers & tierBit(tier)) {
        why += "; " + neuronIneligibility(tier, request.intent);
      }
    }
    return why;
  }
  if (!overall.anyPriced) {
    return std::string("no eligible instance type has a") +
           (constraints.capacityType == CapacityType::Spot ? " spot price" : "n on-demand price");
  }
  if (!overall.anyRunnable) {
    return overall.precisionBlocked
               ? "no eligible accelerator runs the precision: " + precisionBlocked(request, overall)
               : "the only eligible types are fractional GPUs, which Karpenter never launches for "
                 "nvidia.com/gpu";
  }
  if (!overall.anyFits) {
    return tooSmall(request, overall);
  }
  if (!overall.unoffered.empty()) {
    return unofferedConstraint(request, overall);
  }
  if (overall.cheapestOverBudget) {
    const auto& over = *overall.cheapestOverBudget;
    const auto& instance = catalog_->instances[over.instance];
    return "the cheapest placement that fits, " +
           describeShape(instance, catalog_->acceleratorOf(instance), over.fit.devices) + " " +
           capacityLabel(over.capacity) + ", costs " + formatMoney(over.cost.perReplicaHourly) +
           "/h per replica, above maxHourlyCost " + formatMoney(*constraints.maxHourlyCost) + "/h";
  }
  return "no eligible instance type can run it";
}

// Why `instance` at `capacity` is outside what the workload allows now, or
// empty.
std::string PlacementEngine::outsideIntent(const WorkloadIntent& intent,
                                           const InstanceType& instance,
                                           CapacityType capacity) const {
  const auto& constraints = intent.constraints;
  if (!containsTier(constraints.tiers, instance.tier) ||
      (!constraints.instanceTypes.empty() &&
       !containsString(constraints.instanceTypes, instance.type)) ||
      containsString(constraints.excludedInstanceTypes, instance.type)) {
    return instance.type + " is outside the workload's constraints";
  }
  if (capacity != CapacityType::Any && constraints.capacityType != CapacityType::Any &&
      constraints.capacityType != capacity) {
    return "the workload now asks for " + std::string(nameOf(constraints.capacityType)) +
           " capacity";
  }
  return neuronIneligibility(instance.tier, intent);
}

Assessment PlacementEngine::assess(const WorkloadIntent& intent, const std::string& instanceType,
                                   int count, CapacityType capacity,
                                   const ClusterContext* cluster) const {
  Assessment assessment;
  const int index = catalog_->indexOf(instanceType);
  if (index < 0) {
    assessment.reason = instanceType + " is no longer in the catalog";
    return assessment;
  }
  const auto& instance = catalog_->instances[index];
  const auto nodeHourly = price(index, capacity);
  if (!nodeHourly) {
    assessment.reason = instanceType + " has no " + capacityLabel(capacity) + " price any more";
    return assessment;
  }
  const auto memory = estimateMemory(intent, policy_.memoryOverheads);
  std::optional<ClusterCost> clusterCosts;
  const auto& costs = costsFor(cluster, clusterCosts);
  const Request request = requestFor(intent, memory, costs, cluster ? cluster->view : nullptr);
  Fit fit = fitWithDevices(*catalog_, instance, request.need, count);
  std::string why = outsideIntent(intent, instance, capacity);
  if (why.empty() && !fit.fits()) {
    why = describeShape(instance, catalog_->acceleratorOf(instance), count) +
          " no longer runs the model: " + formatGiB(memory.requiredGiB) + " GiB at " +
          std::string(nameOf(intent.precision)) + " within the " + fillLimitText_ + " fill limit";
  }
  if (!fit.fits()) {
    fit = shapeInForce(instance, count);  // priced as it runs, for what it costs today
  }
  const CostInput input{index,       &instance,        capacity,
                        *nodeHourly, request.replicas, fit.replicasPerNode,
                        fit.share,   fit.devices};
  const Option option{index, capacity, fit, request.costs.quote(input), *nodeHourly};
  assessment.placement = placementOf(option, request);
  assessment.hourlyCost = option.cost.perReplicaHourly;
  assessment.clusterHourlyCost = assessment.placement->clusterHourlyCost;
  assessment.performance = fit.performance;
  const auto& budget = intent.constraints.maxHourlyCost;
  if (why.empty() && budget && assessment.hourlyCost > *budget + 1e-12) {
    why = instanceType + " now costs " + formatMoney(assessment.hourlyCost) +
          "/h, over maxHourlyCost";
  }
  assessment.reason = why;
  assessment.feasible = why.empty();
  return assessment;
}

// A replica shape that no longer fits, as it runs: `count` devices (or a
// whole CPU node) per replica.
Fit PlacementEngine::shapeInForce(const InstanceType& instance, int count) const {
  Fit fit;
  fit.devices = instance.acceleratorCount > 0 ? std::clamp(count, 1, instance.acceleratorCount) : 0;
  fit.replicasPerNode = instance.acceleratorCount > 0 ? instance.acceleratorCount / fit.devices : 1;
  fit.share = instance.acceleratorCount > 0
                  ? static_cast<double>(fit.devices) / instance.acceleratorCount
                  : 1.0;
  if (const auto* spec = catalog_->acceleratorOf(instance)) {
    fit.availableGiB = fit.devices * spec->memoryGiB;
  }
  return fit;
}

}  // namespace gpuplacement::core
