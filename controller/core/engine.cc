#include "core/engine.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/decimal.h"
#include "core/quantity.h"

namespace gpuplacement::core {
namespace {

using base::formatGiB;
using base::formatMoney;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// A CPU replica may use this much of the host's memory; the rest is the
// kernel, kubelet and daemons.
constexpr double kCpuUsableMemory = 0.9;
// The smallest CPU share a model server gets, in vCPUs.
constexpr int kCpuMinVcpus = 2;
// How many runner-up and rejected options a decision reports.
constexpr std::size_t kRunnersUp = 3;
constexpr std::size_t kMaxAlternatives = 6;

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

bool containsTier(const std::vector<Tier>& tiers, Tier tier) {
  return tiers.empty() || std::find(tiers.begin(), tiers.end(), tier) != tiers.end();
}

bool containsString(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

MemoryEstimate estimateMemory(const WorkloadIntent& intent, const MemoryOverheads& overheads) {
  MemoryEstimate memory;
  memory.parameters = intent.parameters;
  memory.precision = intent.precision;
  memory.bytesPerParameter = bytesPerParameter(intent.precision);
  memory.overhead = overheads.forKind(intent.kind);
  memory.weightsGiB = static_cast<double>(intent.parameters) * memory.bytesPerParameter / kGiB;
  memory.requiredGiB = memory.weightsGiB * memory.overhead;
  return memory;
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

// One way to run a replica: an instance type, a capacity type and a count.
struct PlacementEngine::Option {
  int instance = -1;
  CapacityType capacity = CapacityType::OnDemand;
  int count = 0;
  double hourly = 0;
  double performance = 0;
  double availableGiB = 0;
};

// Everything learned while trying a rule's candidates: the options that
// work, and enough about the others to explain a failure. No strings are
// built here; that waits until the few that are reported are known.
struct PlacementEngine::Evaluation {
  std::vector<Option> feasible;
  bool anyCandidate = false;
  bool anyPriced = false;
  bool anyFits = false;
  double largestGiB = 0;
  int largestInstance = -1;  // offers the most memory of the priced candidates
  bool largestFits = false;
  std::optional<Option> cheapestOverBudget;
  unsigned neuronBlockedTiers = 0;  // bit per Tier that the Neuron gate kept out

  void reset() {
    feasible.clear();
    anyCandidate = anyPriced = anyFits = largestFits = false;
    largestGiB = 0;
    largestInstance = -1;
    cheapestOverBudget.reset();
    neuronBlockedTiers = 0;
  }
};

PlacementEngine::PlacementEngine(std::shared_ptr<const Catalog> catalog,
                                 std::shared_ptr<const RuleSet> rules, Policy policy)
    : catalog_(std::move(catalog)), rules_(std::move(rules)), policy_(std::move(policy)) {}

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
  engine->onDemand_.resize(instances.size());
  engine->spot_.resize(instances.size());
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const auto& instance = instances[i];
    if (engine->policy_.disabledInstanceTypes.count(instance.type)) {
      continue;  // no price: never chosen
    }
    engine->onDemand_[i] = instance.onDemand;
    engine->spot_[i] = instance.spot;
    if (const auto it = engine->policy_.prices.find(instance.type);
        it != engine->policy_.prices.end()) {
      if (it->second.onDemand) {
        engine->onDemand_[i] = it->second.onDemand;
      }
      if (it->second.spot) {
        engine->spot_[i] = it->second.spot;
      }
    }
  }
  auto& knobs = engine->knobs_;
  const auto& effective = engine->policy_;
  knobs = engine->rules_->knobs;
  knobs.lowLatencyBelowMs = effective.lowLatencyBelowMs.value_or(knobs.lowLatencyBelowMs);
  knobs.realtimeBelowMs = effective.realtimeBelowMs.value_or(knobs.realtimeBelowMs);
  if (effective.neuronFrameworks) {
    knobs.neuronFrameworks = *effective.neuronFrameworks;
  }
  if (effective.neuronArchitectures) {
    knobs.neuronArchitectures = *effective.neuronArchitectures;
  }
  for (const auto& rule : engine->rules_->rules) {
    engine->disabledRules_.push_back(effective.disabledRules.count(rule.name) > 0);
  }
  return std::shared_ptr<const PlacementEngine>(std::move(engine));
}

std::optional<double> PlacementEngine::price(int instance, CapacityType capacity) const {
  return capacity == CapacityType::Spot ? spot_[instance] : onDemand_[instance];
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

void PlacementEngine::evaluateInstance(int index, const WorkloadIntent& intent, double requiredGiB,
                                       Evaluation& evaluation) const {
  const auto& instance = catalog_->instances[index];
  const auto* accelerator = catalog_->acceleratorOf(instance);
  evaluation.anyCandidate = true;

  // An instance without a price for the capacity asked for is never chosen,
  // so it does not count as "eligible" in the explanations either.
  const auto capacity = intent.constraints.capacityType;
  const bool priced = (capacity != CapacityType::Spot && price(index, CapacityType::OnDemand)) ||
                      (capacity != CapacityType::OnDemand && price(index, CapacityType::Spot));
  if (!priced) {
    return;
  }
  evaluation.anyPriced = true;

  // How many accelerators (or what share of a CPU host) the replica needs.
  int count = 0;
  double share = 0;
  double available = 0;
  double performance = 0;
  const bool training = isTraining(intent.kind);
  if (accelerator) {
    count = static_cast<int>(std::ceil(requiredGiB / accelerator->memoryGiB - 1e-9));
    count = std::max(count, 1);
    if (!instance.allowedAcceleratorCounts.empty()) {
      const auto& allowed = instance.allowedAcceleratorCounts;
      const auto it = std::lower_bound(allowed.begin(), allowed.end(), count);
      count = it == allowed.end() ? instance.acceleratorCount + 1 : *it;
    }
    const double offered = accelerator->memoryGiB * instance.acceleratorCount;
    const bool fits = count <= instance.acceleratorCount;
    if (offered > evaluation.largestGiB) {
      evaluation.largestGiB = offered;
      evaluation.largestInstance = index;
      evaluation.largestFits = fits;
    }
    if (!fits) {
      return;
    }
    share = policy_.costModel == CostModel::WholeInstance
                ? 1.0
                : static_cast<double>(count) / instance.acceleratorCount;
    available = count * accelerator->memoryGiB;
    performance = count * (training ? accelerator->fp16Tflops : accelerator->memoryBandwidthGBs);
  } else {
    const double usable = instance.memoryGiB * kCpuUsableMemory;
    const bool fits = requiredGiB <= usable;
    if (usable > evaluation.largestGiB) {
      evaluation.largestGiB = usable;
      evaluation.largestInstance = index;
      evaluation.largestFits = fits;
    }
    if (!fits) {
      return;
    }
    const double memoryShare = requiredGiB / instance.memoryGiB;
    const double cpuShare = static_cast<double>(kCpuMinVcpus) / instance.vcpus;
    share = policy_.costModel == CostModel::WholeInstance
                ? 1.0
                : std::min(1.0, std::max(memoryShare, cpuShare));
    available = usable;
    performance = share * (training ? instance.cpuTflops : instance.cpuMemoryBandwidthGBs);
  }
  evaluation.anyFits = true;

  for (CapacityType option : {CapacityType::OnDemand, CapacityType::Spot}) {
    if (capacity != CapacityType::Any && capacity != option) {
      continue;
    }
    const auto price = this->price(index, option);
    if (!price) {
      continue;
    }
    const double hourly = *price * share;
    Option candidate{index, option, count, hourly, performance, available};
    if (intent.constraints.maxHourlyCost && hourly > *intent.constraints.maxHourlyCost + 1e-12) {
      if (!evaluation.cheapestOverBudget || hourly < evaluation.cheapestOverBudget->hourly) {
        evaluation.cheapestOverBudget = candidate;
      }
      continue;
    }
    evaluation.feasible.push_back(candidate);
  }
}

std::optional<double> PlacementEngine::hourlyCost(const std::string& instanceType, int count,
                                                  CapacityType capacity,
                                                  double requiredMemoryGiB) const {
  const int index = catalog_->indexOf(instanceType);
  if (index < 0) {
    return std::nullopt;
  }
  const auto price = this->price(index, capacity);
  if (!price) {
    return std::nullopt;
  }
  const auto& instance = catalog_->instances[index];
  if (policy_.costModel == CostModel::WholeInstance) {
    const int instances = instance.acceleratorCount > 0
                              ? (count + instance.acceleratorCount - 1) / instance.acceleratorCount
                              : 1;
    return *price * std::max(instances, 1);
  }
  if (instance.acceleratorCount > 0) {
    return *price * count / instance.acceleratorCount;
  }
  const double share = std::max(requiredMemoryGiB / instance.memoryGiB,
                                static_cast<double>(kCpuMinVcpus) / instance.vcpus);
  return *price * std::min(1.0, share);
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
         !containsString(constraints.excludedInstanceTypes, instance.type);
}

void PlacementEngine::evaluateRule(const Rule& rule, const WorkloadIntent& intent,
                                   double requiredGiB, unsigned neuronBlocked,
                                   Evaluation& evaluation) const {
  const auto& instances = catalog_->instances;
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const auto& instance = instances[i];
    if (!isCandidate(rule, instance, intent.constraints)) {
      continue;
    }
    const unsigned tierBit = 1U << static_cast<unsigned>(instance.tier);
    if (neuronBlocked & tierBit) {
      evaluation.neuronBlockedTiers |= tierBit;
      continue;
    }
    evaluateInstance(static_cast<int>(i), intent, requiredGiB, evaluation);
  }
}

Assessment PlacementEngine::assess(const WorkloadIntent& intent, const std::string& instanceType,
                                   int count, CapacityType capacity) const {
  Assessment assessment;
  const int index = catalog_->indexOf(instanceType);
  if (index < 0) {
    assessment.reason = instanceType + " is no longer in the catalog";
    return assessment;
  }
  const auto& instance = catalog_->instances[index];
  const auto& constraints = intent.constraints;
  if (!containsTier(constraints.tiers, instance.tier) ||
      (!constraints.instanceTypes.empty() &&
       !containsString(constraints.instanceTypes, instanceType)) ||
      containsString(constraints.excludedInstanceTypes, instanceType)) {
    assessment.reason = instanceType + " is outside the workload's constraints";
    return assessment;
  }
  if (capacity != CapacityType::Any && constraints.capacityType != CapacityType::Any &&
      constraints.capacityType != capacity) {
    assessment.reason =
        "the workload now asks for " + std::string(nameOf(constraints.capacityType)) + " capacity";
    return assessment;
  }
  if (auto why = neuronIneligibility(instance.tier, intent); !why.empty()) {
    assessment.reason = why;
    return assessment;
  }
  const auto price = this->price(index, capacity);
  if (!price) {
    assessment.reason = instanceType + " has no " + capacityLabel(capacity) + " price any more";
    return assessment;
  }
  const double requiredGiB = estimateMemory(intent, policy_.memoryOverheads).requiredGiB;
  const auto* accelerator = catalog_->acceleratorOf(instance);
  const bool training = isTraining(intent.kind);
  double share = 1.0;
  if (accelerator) {
    if (count < 1 || count > instance.acceleratorCount ||
        count * accelerator->memoryGiB + 1e-9 < requiredGiB) {
      assessment.reason = std::to_string(count) + "x " + accelerator->name + " no longer holds " +
                          formatGiB(requiredGiB) + " GiB";
      return assessment;
    }
    if (policy_.costModel != CostModel::WholeInstance) {
      share = static_cast<double>(count) / instance.acceleratorCount;
    }
    assessment.performance =
        count * (training ? accelerator->fp16Tflops : accelerator->memoryBandwidthGBs);
  } else {
    if (requiredGiB > instance.memoryGiB * kCpuUsableMemory) {
      assessment.reason = instanceType + " no longer holds " + formatGiB(requiredGiB) + " GiB";
      return assessment;
    }
    if (policy_.costModel != CostModel::WholeInstance) {
      share = std::min(1.0, std::max(requiredGiB / instance.memoryGiB,
                                     static_cast<double>(kCpuMinVcpus) / instance.vcpus));
    }
    assessment.performance =
        share * (training ? instance.cpuTflops : instance.cpuMemoryBandwidthGBs);
  }
  assessment.hourlyCost = *price * share;
  if (constraints.maxHourlyCost && assessment.hourlyCost > *constraints.maxHourlyCost + 1e-12) {
    assessment.reason = instanceType + " now costs " + formatMoney(assessment.hourlyCost) +
                        "/h, over maxHourlyCost";
    return assessment;
  }
  assessment.feasible = true;
  return assessment;
}

Decision PlacementEngine::decide(const WorkloadIntent& intent) const {
  Decision decision;
  decision.memory = estimateMemory(intent, policy_.memoryOverheads);
  const std::size_t bucket = sizeBucketIndex(knobs_, intent.parameters);
  decision.sizeBucket = knobs_.sizeBuckets[bucket].name;
  decision.latency = latencyClassOf(knobs_, intent.latencyTargetMs);
  const double requiredGiB = decision.memory.requiredGiB;
  const auto& instances = catalog_->instances;

  // Which Neuron tiers this workload cannot use, decided once.
  unsigned neuronBlocked = 0;
  for (Tier tier : {Tier::Trainium, Tier::Inferentia}) {
    if (!neuronIneligibility(tier, intent).empty()) {
      neuronBlocked |= 1U << static_cast<unsigned>(tier);
    }
  }

  // The objective's order over options: best first, ties broken by
  // documented, deterministic keys so equal inputs give equal answers.
  const auto better = [&](const Option& a, const Option& b) {
    switch (intent.objective) {
      case Objective::CostOptimized:
        if (a.hourly != b.hourly)
          return a.hourly < b.hourly;
        if (a.performance != b.performance)
          return a.performance > b.performance;
        break;
      case Objective::Balanced: {
        const double valueA = a.performance / std::max(a.hourly, 1e-9);
        const double valueB = b.performance / std::max(b.hourly, 1e-9);
        if (valueA != valueB)
          return valueA > valueB;
        if (a.hourly != b.hourly)
          return a.hourly < b.hourly;
        break;
      }
      case Objective::MaxPerformance:
        if (a.performance != b.performance)
          return a.performance > b.performance;
        if (a.hourly != b.hourly)
          return a.hourly < b.hourly;
        break;
    }
    if (a.count != b.count)
      return a.count < b.count;
    if (a.capacity != b.capacity)
      return a.capacity == CapacityType::OnDemand;
    return instances[a.instance].type < instances[b.instance].type;
  };

  Evaluation evaluation;
  evaluation.feasible.reserve(2 * instances.size());
  std::vector<std::size_t> matched;
  for (std::size_t r = 0; r < rules_->rules.size(); ++r) {
    const auto& rule = rules_->rules[r];
    if (disabledRules_[r] || !matches(rule, intent, bucket, decision.latency)) {
      continue;
    }
    matched.push_back(r);
    evaluation.reset();
    evaluateRule(rule, intent, requiredGiB, neuronBlocked, evaluation);
    if (evaluation.feasible.empty()) {
      continue;  // this rule cannot place it; the next matching rule may
    }
    choose(rule, intent, requiredGiB, better, evaluation, decision);
    return decision;
  }
  explainFailure(intent, requiredGiB, matched, neuronBlocked, decision);
  return decision;
}

template <typename Better>
void PlacementEngine::choose(const Rule& rule, const WorkloadIntent& intent, double requiredGiB,
                             const Better& better, Evaluation& evaluation,
                             Decision& decision) const {
  const auto& instances = catalog_->instances;
  auto& feasible = evaluation.feasible;
  std::sort(feasible.begin(), feasible.end(), better);
  const Option& best = feasible.front();
  const auto& instance = instances[best.instance];
  const auto* accelerator = catalog_->acceleratorOf(instance);

  Placement placement;
  placement.tier = instance.tier;
  placement.accelerator = accelerator ? accelerator->name : "";
  placement.instanceType = instance.type;
  placement.acceleratorCount = best.count;
  placement.acceleratorsPerInstance = instance.acceleratorCount;
  placement.capacityType = best.capacity;
  placement.hourlyCost = best.hourly;
  placement.monthlyCost = best.hourly * policy_.hoursPerMonth;
  placement.replicas = intent.replicas;
  placement.totalHourlyCost = best.hourly * intent.replicas;
  placement.totalMonthlyCost = placement.monthlyCost * intent.replicas;
  placement.requiredMemoryGiB = requiredGiB;
  placement.availableMemoryGiB = best.availableGiB;
  placement.performance = best.performance;
  placement.performanceUnit = isTraining(intent.kind) ? "FP16 TFLOPS" : "GB/s memory bandwidth";

  const char* superlative = intent.objective == Objective::CostOptimized ? "the cheapest"
                            : intent.objective == Objective::Balanced
                                ? "the best performance per dollar"
                                : "the fastest";
  decision.rule = rule.name;
  decision.ruleSource = rule.source;
  decision.reason = rule.reason + "; " + describeShape(instance, accelerator, best.count) + ", " +
                    capacityLabel(best.capacity) + ", is " + superlative + " that fits " +
                    formatGiB(requiredGiB) + " GiB at " + formatMoney(best.hourly) +
                    "/h per replica";

  // Runners-up: the best option of each other instance type.
  const auto alternativeOf = [&](const Option& option, std::string why) {
    const auto& other = instances[option.instance];
    const auto* otherAccelerator = catalog_->acceleratorOf(other);
    return Alternative{other.type,      otherAccelerator ? otherAccelerator->name : "",
                       other.tier,      option.count,
                       option.capacity, option.hourly,
                       std::move(why)};
  };
  std::vector<int> listed{best.instance};
  for (const auto& option : feasible) {
    if (decision.alternatives.size() >= kRunnersUp) {
      break;
    }
    if (std::find(listed.begin(), listed.end(), option.instance) != listed.end()) {
      continue;
    }
    listed.push_back(option.instance);
    std::string lost;
    if (intent.objective == Objective::CostOptimized) {
      lost = option.hourly > best.hourly
                 ? formatMoney(option.hourly - best.hourly) + "/h more per replica"
                 : "same price, lower performance";
    } else if (intent.objective == Objective::Balanced) {
      const double bestValue = best.performance / std::max(best.hourly, 1e-9);
      const double value = option.performance / std::max(option.hourly, 1e-9);
      lost = base::formatPercent(1 - value / bestValue) + " less performance per dollar";
    } else {
      lost = option.performance < best.performance
                 ? base::formatPercent(1 - option.performance / best.performance) + " slower"
                 : "as fast, but " + formatMoney(option.hourly - best.hourly) + "/h more";
    }
    decision.alternatives.push_back(alternativeOf(option, std::move(lost)));
  }

  // Then what was ruled out: over budget, too small, not eligible.
  if (evaluation.cheapestOverBudget) {
    decision.alternatives.push_back(alternativeOf(
        *evaluation.cheapestOverBudget,
        "over maxHourlyCost " + formatMoney(*intent.constraints.maxHourlyCost) + "/h"));
  }
  if (evaluation.largestInstance >= 0 && !evaluation.largestFits) {
    const auto& largest = instances[evaluation.largestInstance];
    const auto* largestAccelerator = catalog_->acceleratorOf(largest);
    decision.alternatives.push_back(
        Alternative{largest.type, largestAccelerator ? largestAccelerator->name : "", largest.tier,
                    largest.acceleratorCount, CapacityType::OnDemand, std::nullopt,
                    "needs " + formatGiB(requiredGiB) + " GiB; it offers " +
                        formatGiB(evaluation.largestGiB) + " GiB"});
  }
  for (Tier tier : {Tier::Trainium, Tier::Inferentia}) {
    if (evaluation.neuronBlockedTiers & (1U << static_cast<unsigned>(tier)) &&
        decision.alternatives.size() < kMaxAlternatives) {
      decision.alternatives.push_back(Alternative{"", "", tier, 0, CapacityType::OnDemand,
                                                  std::nullopt, neuronIneligibility(tier, intent)});
    }
  }
  decision.placement = std::move(placement);
}

// Nothing fits under any matching rule: look at the union of their
// candidates and name the constraint that bound.
void PlacementEngine::explainFailure(const WorkloadIntent& intent, double requiredGiB,
                                     const std::vector<std::size_t>& matched,
                                     unsigned neuronBlocked, Decision& decision) const {
  const auto& instances = catalog_->instances;
  const auto& constraints = intent.constraints;
  Evaluation overall;
  std::vector<bool> seen(instances.size(), false);
  std::string rulesText;
  for (std::size_t r : matched) {
    const auto& rule = rules_->rules[r];
    rulesText += (rulesText.empty() ? "" : ", ") + rule.name;
    for (std::size_t i = 0; i < instances.size(); ++i) {
      if (seen[i] || !isCandidate(rule, instances[i], constraints)) {
        continue;
      }
      seen[i] = true;
      const unsigned tierBit = 1U << static_cast<unsigned>(instances[i].tier);
      if (neuronBlocked & tierBit) {
        overall.neuronBlockedTiers |= tierBit;
        continue;
      }
      evaluateInstance(static_cast<int>(i), intent, requiredGiB, overall);
    }
  }

  decision.rule = matched.empty() ? "" : rules_->rules[matched.front()].name;
  std::string& why = decision.cannotPlace;
  if (matched.empty()) {
    why = "no rule matches this workload";
  } else if (!overall.anyCandidate) {
    why =
        "no instance type is both allowed by the constraints and eligible under the matching "
        "rules (" +
        rulesText + ")";
    for (Tier tier : {Tier::Trainium, Tier::Inferentia}) {
      if (overall.neuronBlockedTiers & (1U << static_cast<unsigned>(tier))) {
        why += "; " + neuronIneligibility(tier, intent);
      }
    }
  } else if (!overall.anyPriced) {
    why = std::string("no eligible instance type has a") +
          (constraints.capacityType == CapacityType::Spot ? " spot price" : "n on-demand price");
  } else if (!overall.anyFits) {
    why = "needs " + formatGiB(requiredGiB) + " GiB; the largest eligible instance offers " +
          formatGiB(overall.largestGiB) + " GiB (" + instances[overall.largestInstance].type + ")";
  } else if (overall.cheapestOverBudget) {
    const auto& over = *overall.cheapestOverBudget;
    const auto& instance = instances[over.instance];
    why = "the cheapest placement that fits, " +
          describeShape(instance, catalog_->acceleratorOf(instance), over.count) + " " +
          capacityLabel(over.capacity) + ", costs " + formatMoney(over.hourly) +
          "/h per replica, above maxHourlyCost " + formatMoney(*constraints.maxHourlyCost) + "/h";
  } else {
    why = "no eligible instance type can run it";
  }
  decision.reason = "cannot place: " + why;
}

}  // namespace gpuplacement::core
