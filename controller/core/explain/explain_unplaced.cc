// What ruled options out, and what bound when nothing could be placed: the
// explainer's half that speaks of constraints (core/explain/explainer_parts.h).
#include <algorithm>
#include <cmath>
#include <string>

#include "core/explain/explainer_parts.h"

namespace gpuplacement::core::explaining {
namespace {

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

// The first condition of `rule` the workload fails, as "sizes small (this
// model is large)"; empty when the rule matches.
std::string Explainer::whyNotMatched(const Rule& rule, const WorkloadIntent& intent,
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
std::string Explainer::neuronIneligibility(Tier tier, const WorkloadIntent& intent) const {
  if (tier != Tier::Trainium && tier != Tier::Inferentia) {
    return "";
  }
  const std::string name(nameOf(tier));
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
  // What the software runs first: the tier's own use holds only then.
  if (tier == Tier::Trainium && !isTraining(intent.kind)) {
    return name + " is for training, and serves only a model no Inferentia2 node holds; " +
           std::string(nameOf(intent.kind)) + " of this one goes elsewhere";
  }
  if (tier == Tier::Inferentia && isTraining(intent.kind)) {
    return name + " serves models; it does not train them";
  }
  return "";
}

// Which rules offer the workload's tiers and why none of them matched:
// "small-model-inference offers CPU for sizes small only (this workload: large)".
std::string Explainer::userTiersNote(const WorkloadIntent& intent, std::size_t bucket,
                                     LatencyClass latency) const {
  std::string note;
  for (std::size_t r = 0; r < rules_->rules.size(); ++r) {
    const auto& rule = rules_->rules[r];
    for (Tier tier : intent.constraints.tiers) {
      if (rule.tiers.any() || !rule.tiers.has(tier)) {
        continue;
      }
      note += (note.empty() ? "" : "; ") + rule.name + " offers " + std::string(nameOf(tier)) +
              (engine_.ruleDisabled(r) ? " but is disabled by the policy"
                                       : " for " + whyNotMatched(rule, intent, bucket, latency));
      break;
    }
  }
  return note.empty() ? "no rule offers these tiers" : note;
}

// Then what was ruled out: over budget, too small, hardware that cannot run
// the precision, types Karpenter cannot launch, Neuron tiers not eligible.
void Explainer::listRuledOut(const Request& request, const Evaluation& evaluation,
                             Decision& decision) const {
  auto& alternatives = decision.alternatives;
  if (evaluation.cheapestOverBudget) {
    alternatives.push_back(alternativeOf(
        *evaluation.cheapestOverBudget,
        "over maxHourlyCost " + formatMoney(*request.intent.constraints.maxHourlyCost) + "/h"));
  }
  const auto placedOn = [&](int instance) {
    return std::any_of(evaluation.feasible.begin(), evaluation.feasible.end(),
                       [&](const Option& option) { return option.instance == instance; });
  };
  // Not where a group of its nodes holds it.
  if (evaluation.largestInstance >= 0 && !evaluation.largestFits &&
      !placedOn(evaluation.largestInstance)) {
    const auto& largest = catalog_->instances[evaluation.largestInstance];
    const auto* accelerator = catalog_->acceleratorOf(largest);
    alternatives.push_back(Alternative{largest.type, accelerator ? accelerator->name : "",
                                       largest.tier, largest.acceleratorCount,
                                       CapacityType::OnDemand, std::nullopt,
                                       "needs " + formatGiB(request.need.requiredGiB) +
                                           " GiB; it offers " + formatGiB(evaluation.largestGiB) +
                                           " GiB within the " + fillLimitText() + " fill limit"});
  }
  for (Tier tier : {Tier::NVIDIA, Tier::Trainium, Tier::Inferentia}) {
    if (alternatives.size() >= kMaxAlternatives) {
      break;
    }
    const auto why = precisionBlocked(request, evaluation, tier);
    if (!why.empty()) {
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
std::string Explainer::precisionBlocked(const Request& request, const Evaluation& evaluation,
                                        std::optional<Tier> tier) const {
  std::uint64_t blocked = evaluation.precisionBlocked;
  if (tier) {
    blocked &= engine_.acceleratorsOf(*tier);
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
std::string Explainer::tooSmall(const Request& request, const Evaluation& overall) const {
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
  const std::string onOneNode = "cannot place on one node: needs " +
                                formatGiB(request.need.requiredGiB) +
                                " GiB; the largest eligible node, " + largest.type + ", offers " +
                                formatGiB(overall.largestGiB) + " GiB within the " +
                                fillLimitText() + " fill limit (" + detail + ")";
  if (const auto& unformed = overall.acrossNodesUnformed; unformed.instance >= 0) {
    return onOneNode + "; " + std::to_string(unformed.nodes) + " nodes of " +
           catalog_->instances[unformed.instance].type +
           " joined by EFA would hold one replica, and the target's pods are each a replica "
           "(a Deployment, StatefulSet or Job): run it as a kind whose pods form a group, a "
           "LeaderWorkerSet, JobSet, TrainJob or Ray cluster";
  }
  if (const auto& noEfa = overall.acrossNodesWithoutEfa; noEfa.instance >= 0) {
    const auto& type = catalog_->instances[noEfa.instance].type;
    return onOneNode + "; " + std::to_string(noEfa.nodes) + " nodes of " + type +
           " would hold one replica, and " + type +
           " has no EFA (Elastic Fabric Adapter) to join its nodes";
  }
  if (request.groups > 0 && request.groupNodes > 0) {
    return onOneNode + "; nor does a group of " + std::to_string(request.groupNodes) +
           " nodes, as " + request.intent.groups.sizeField + " gives (" +
           std::to_string(request.groupNodes) + " x " + formatGiB(overall.largestGiB) +
           " GiB): a larger group would";
  }
  const int nodes =
      static_cast<int>(std::ceil(request.need.requiredGiB / std::max(overall.largestGiB, 1e-9)));
  return onOneNode + ": it takes " + std::to_string(nodes) + " nodes of " + largest.type;
}

// Nothing fits under any rule tried: the engine weighed the union of their
// candidates; name the constraint that bound.
void Explainer::explainFailure(const Weighing& weighing, Decision& decision) const {
  const auto& request = weighing.request;
  std::string rulesText;
  for (std::size_t r : weighing.matched) {
    rulesText += (rulesText.empty() ? "" : ", ") + rules_->rules[r].name;
  }
  decision.cannotPlace = bindingConstraint(request, weighing.evaluation, rulesText);
  if (weighing.userTiers) {
    // The workload's own tiers were tried: say which rules offer them and
    // what limits kept them from matching.
    const auto note = userTiersNote(request.intent, request.bucket, request.latency);
    decision.rule = userTiersRule_.name;
    decision.ruleSource = userTiersRule_.source + "; " + note;
    decision.cannotPlace += " (" + note + ")";
  } else if (!weighing.matched.empty()) {
    const auto& rule = rules_->rules[weighing.matched.front()];
    decision.rule = rule.name;
    decision.ruleSource = rule.source;
  }
  decision.reason = "cannot place: " + decision.cannotPlace;
  listRuledOut(request, weighing.evaluation, decision);
}

// "no node or NodePool offers g5.xlarge or g6.xlarge, the best that fit
// (capacity.source is Nodes: ...)". Spot options are named as spot, and a
// type the cluster has at the other capacity type is said to be there:
// "no node or NodePool offers trn1.2xlarge spot ...; trn1.2xlarge is there
// on-demand, which constraints.capacityType Spot rules out".
std::string Explainer::unofferedConstraint(const Request& request,
                                           const Evaluation& overall) const {
  // The three best types nothing offers, and up to two whose nodes are
  // there but full, however they rank: those are what a reader looks for.
  // Each capacity type counts apart, so that a type whose on-demand nodes
  // are full is named as full even where its spot option ranks first.
  const auto absent = bestUnoffered(overall, nullptr, overall.unoffered.size(), true);
  std::vector<std::string> names;
  std::vector<int> mentioned;  // instance types already named, or said to be full
  const auto isMentioned = [&](int instance) {
    return std::find(mentioned.begin(), mentioned.end(), instance) != mentioned.end();
  };
  std::string short_;
  int shortCount = 0;
  std::vector<const Option*> missing;  // no node or NodePool offers them at all
  for (const Unoffered* unoffered : absent) {
    const auto why = shortOfRoom(*unoffered, request);
    if (why.empty()) {
      missing.push_back(&unoffered->option);
    } else if (shortCount++ < 2) {
      short_ += (short_.empty() ? "" : "; ") + why;
      mentioned.push_back(unoffered->option.instance);
    }
  }
  std::string otherCapacity;
  for (const Option* option : missing) {
    const auto& type = catalog_->instances[option->instance].type;
    if (names.size() == 3 || isMentioned(option->instance)) {
      continue;
    }
    mentioned.push_back(option->instance);
    names.push_back(typeLabel(*option));
    const auto other =
        option->capacity == CapacityType::Spot ? CapacityType::OnDemand : CapacityType::Spot;
    const auto asked = request.intent.constraints.capacityType;
    const bool oneCapacityType = asked == CapacityType::OnDemand || asked == CapacityType::Spot;
    if (oneCapacityType && request.capacity->offered(option->instance, other)) {
      otherCapacity += (otherCapacity.empty() ? "" : ", ") + type;
    }
  }
  std::string text;
  if (!names.empty()) {
    text = "no node or NodePool offers ";
    for (std::size_t i = 0; i < names.size(); ++i) {
      text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    text += ", the best that fit";
  }
  if (!short_.empty()) {
    text += (text.empty() ? "" : "; ") + short_;
  }
  text += " (" + request.capacity->why + ")";
  if (!otherCapacity.empty()) {
    const bool spot = request.intent.constraints.capacityType == CapacityType::Spot;
    const bool several = otherCapacity.find(", ") != std::string::npos;
    if (several) {
      const auto last = otherCapacity.rfind(", ");
      otherCapacity.replace(last, 2, " and ");
    }
    text += "; " + otherCapacity + (several ? " are" : " is") +
            (spot ? " there on-demand" : " there as spot") + ", which constraints.capacityType " +
            (spot ? "Spot" : "OnDemand") + " rules out";
  }
  return text;
}

std::string Explainer::bindingConstraint(const Request& request, const Evaluation& overall,
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
           (constraints.capacityType == CapacityType::Spot    ? " spot price"
            : constraints.capacityType == CapacityType::Mixed ? " spot and an on-demand price"
                                                              : "n on-demand price");
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
  if (overall.mixedUnlabeled) {
    return "constraints.capacityType Mixed spreads the replicas over a capacity-type node label, "
           "and none is selected here: the policy's nodeLabels.capacityType.key is empty, or "
           "not every node carries karpenter.sh/capacity-type or eks.amazonaws.com/capacityType";
  }
  // Before the room: the slices such nodes have free are the room the Job
  // cannot ask for.
  if (overall.claimsUnwritable) {
    return "the nodes that could run it offer MIG devices only through Dynamic Resource "
           "Allocation: a Job's pod template cannot gain spec.resourceClaims once created, and "
           "a DeviceClass's extended resource cannot name a profile";
  }
  if (overall.devicesFixedOut && overall.unoffered.empty()) {
    const auto& fixed = request.intent.fixedDevices;
    return "the pod set " + fixed.podSet + " asks for " + fixed.resource + ": " +
           std::to_string(fixed.count) + " in containers[" + fixed.container +
           "].resources, which cannot change once it is created, and no eligible placement is "
           "asked for that way: write the devices a placement needs there (or none, and the "
           "operator says which) and create it again";
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

}  // namespace gpuplacement::core::explaining
