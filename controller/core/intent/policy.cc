#include "core/intent/policy.h"

#include "base/json_reader.h"
#include "base/time_format.h"

namespace gpuplacement::core {

using base::ObjectReader;
using base::parseDuration;
namespace {

using json = nlohmann::json;

Result<std::vector<Toleration>> parseTolerations(const ObjectReader& reader, std::string_view key) {
  std::vector<Toleration> tolerations;
  if (!reader.has(key)) {
    return tolerations;
  }
  const auto& list = reader.at(key);
  if (!list.is_array()) {
    return Error{reader.fieldPath(key), "must be a list of tolerations"};
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    ObjectReader item(list[i], reader.fieldPath(key) + "[" + std::to_string(i) + "]");
    if (auto ok = item.requireObject(); !ok) {
      return ok.error();
    }
    if (auto ok = item.onlyKeys({"key", "operator", "value", "effect"}); !ok) {
      return ok.error();
    }
    Toleration toleration;
    auto tolerationKey = item.optionalString("key");
    auto op = item.optionalString("operator");
    auto value = item.optionalString("value");
    auto effect = item.optionalString("effect");
    for (const Error* error :
         {tolerationKey ? nullptr : &tolerationKey.error(), op ? nullptr : &op.error(),
          value ? nullptr : &value.error(), effect ? nullptr : &effect.error()}) {
      if (error) {
        return *error;
      }
    }
    toleration.key = tolerationKey->value_or("");
    toleration.op = op->value_or("Equal");  // the Kubernetes default
    toleration.value = value->value_or("");
    toleration.effect = effect->value_or("");
    if (toleration.op != "Exists" && toleration.op != "Equal") {
      return Error{item.fieldPath("operator"), "must be Exists or Equal"};
    }
    if (toleration.op == "Exists" && !toleration.value.empty()) {
      return Error{item.fieldPath("value"), "must be empty when operator is Exists"};
    }
    if (!toleration.effect.empty() && toleration.effect != "NoSchedule" &&
        toleration.effect != "PreferNoSchedule" && toleration.effect != "NoExecute") {
      return Error{item.fieldPath("effect"),
                   "must be NoSchedule, PreferNoSchedule or NoExecute (or empty for all)"};
    }
    tolerations.push_back(std::move(toleration));
  }
  return tolerations;
}

Status parsePrices(const ObjectReader& spec, const Catalog& catalog, Policy& policy) {
  if (!spec.has("prices")) {
    return Ok{};
  }
  const auto& list = spec.at("prices");
  if (!list.is_array()) {
    return Error{"spec.prices", "must be a list of {instanceType, onDemand, spot}"};
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    ObjectReader item(list[i], "spec.prices[" + std::to_string(i) + "]");
    if (auto ok = item.requireObject(); !ok) {
      return ok.error();
    }
    if (auto ok = item.onlyKeys({"instanceType", "onDemand", "spot"}); !ok) {
      return ok.error();
    }
    auto type = item.string("instanceType");
    if (!type) {
      return type.error();
    }
    if (!catalog.find(*type)) {
      return Error{item.fieldPath("instanceType"), "\"" + *type + "\" is not in the catalog"};
    }
    auto onDemand = item.optionalNumber("onDemand", 0, 10'000);
    auto spot = item.optionalNumber("spot", 0, 10'000);
    if (!onDemand) {
      return onDemand.error();
    }
    if (!spot) {
      return spot.error();
    }
    if (!*onDemand && !*spot) {
      return Error{item.path(), "sets neither onDemand nor spot"};
    }
    if (policy.prices.count(*type)) {
      return Error{item.fieldPath("instanceType"), "\"" + *type + "\" is priced twice"};
    }
    policy.prices[*type] = PriceOverride{*onDemand, *spot};
  }
  return Ok{};
}

Status parseRuleKnobs(const ObjectReader& spec, const RuleSet& ruleSet, Policy& policy) {
  const auto rules = spec.child("rules");
  if (auto ok = rules.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = rules.onlyKeys({"lowLatencyBelowMs", "realtimeBelowMs", "neuronFrameworks",
                                "neuronArchitectures", "disabled"});
      !ok) {
    return ok.error();
  }
  auto low = rules.optionalNumber("lowLatencyBelowMs", 0.001, 1e6);
  auto realtime = rules.optionalNumber("realtimeBelowMs", 0.001, 1e6);
  if (!low) {
    return low.error();
  }
  if (!realtime) {
    return realtime.error();
  }
  policy.lowLatencyBelowMs = *low;
  policy.realtimeBelowMs = *realtime;
  if (policy.lowLatencyBelowMs.value_or(ruleSet.knobs.lowLatencyBelowMs) >
      policy.realtimeBelowMs.value_or(ruleSet.knobs.realtimeBelowMs)) {
    return Error{"spec.rules.lowLatencyBelowMs", "must not exceed realtimeBelowMs"};
  }
  if (rules.has("neuronFrameworks")) {
    auto frameworks = rules.enumList<Framework>("neuronFrameworks");
    if (!frameworks) {
      return frameworks.error();
    }
    policy.neuronFrameworks = *frameworks;
  }
  if (rules.has("neuronArchitectures")) {
    auto architectures = rules.enumList<Architecture>("neuronArchitectures");
    if (!architectures) {
      return architectures.error();
    }
    policy.neuronArchitectures = *architectures;
  }
  auto disabled = rules.stringList("disabled");
  if (!disabled) {
    return disabled.error();
  }
  for (std::size_t i = 0; i < disabled->size(); ++i) {
    bool known = false;
    for (const auto& rule : ruleSet.rules) {
      known = known || rule.name == (*disabled)[i];
    }
    if (!known) {
      return Error{"spec.rules.disabled[" + std::to_string(i) + "]",
                   "\"" + (*disabled)[i] + "\" is not a rule"};
    }
    policy.disabledRules.insert((*disabled)[i]);
  }
  return Ok{};
}

Status parseNodeLabels(const ObjectReader& spec, Policy& policy) {
  const auto labels = spec.child("nodeLabels");
  if (auto ok = labels.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = labels.onlyKeys({"scheme", "capacityType"}); !ok) {
    return ok.error();
  }
  auto scheme = labels.optionalEnum<LabelScheme>("scheme");
  if (!scheme) {
    return scheme.error();
  }
  policy.labelScheme = scheme->value_or(policy.labelScheme);
  const auto capacity = labels.child("capacityType");
  if (auto ok = capacity.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = capacity.onlyKeys({"key", "onDemand", "spot"}); !ok) {
    return ok.error();
  }
  policy.capacityTypeLabelSet = labels.has("capacityType");
  for (auto [key, target] : {std::pair{"key", &policy.capacityTypeLabel.key},
                             std::pair{"onDemand", &policy.capacityTypeLabel.onDemand},
                             std::pair{"spot", &policy.capacityTypeLabel.spot}}) {
    auto value = capacity.optionalString(key);
    if (!value) {
      return value.error();
    }
    if (*value) {
      *target = **value;
    }
  }
  return Ok{};
}

Status parseTiers(const ObjectReader& spec, Policy& policy) {
  const auto tiers = spec.child("tiers");
  if (auto ok = tiers.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = tiers.onlyKeys({"NVIDIA", "Trainium", "Inferentia", "CPU"}); !ok) {
    return ok.error();
  }
  for (std::size_t i = 0; i < enumCount<Tier>(); ++i) {
    const auto name = nameOf(static_cast<Tier>(i));
    const auto tier = tiers.child(name);
    if (auto ok = tier.requireObject(true); !ok) {
      return ok.error();
    }
    if (auto ok = tier.onlyKeys({"resourceName", "tolerations"}); !ok) {
      return ok.error();
    }
    auto resource = tier.optionalString("resourceName");
    if (!resource) {
      return resource.error();
    }
    if (*resource) {
      if (static_cast<Tier>(i) == Tier::CPU) {
        return Error{tier.fieldPath("resourceName"), "the CPU tier requests no device"};
      }
      if ((*resource)->find('/') == std::string::npos) {
        return Error{tier.fieldPath("resourceName"),
                     "an extended resource name has a domain, like nvidia.com/gpu"};
      }
      policy.tiers[i].resourceName = **resource;
    }
    if (tier.has("tolerations")) {
      auto tolerations = parseTolerations(tier, "tolerations");
      if (!tolerations) {
        return tolerations.error();
      }
      policy.tiers[i].tolerations = std::move(tolerations).value();
    }
  }
  return Ok{};
}

Status parseReplacement(const ObjectReader& spec, Policy& policy) {
  const auto replacement = spec.child("replacement");
  if (auto ok = replacement.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = replacement.onlyKeys({"minSavingsPercent", "cooldown", "maxConcurrentRollouts"});
      !ok) {
    return ok.error();
  }
  auto savings = replacement.optionalNumber("minSavingsPercent", 0, 100);
  if (!savings) {
    return savings.error();
  }
  policy.replacement.minSavingsPercent = savings->value_or(policy.replacement.minSavingsPercent);
  auto cooldown = replacement.optionalString("cooldown");
  if (!cooldown) {
    return cooldown.error();
  }
  if (*cooldown) {
    auto parsed = parseDuration(**cooldown);
    if (!parsed) {
      return Error{replacement.fieldPath("cooldown"), parsed.error().message};
    }
    policy.replacement.cooldown = std::chrono::duration_cast<std::chrono::seconds>(*parsed);
  }
  auto rollouts = replacement.optionalInteger("maxConcurrentRollouts", 1, 1000);
  if (!rollouts) {
    return rollouts.error();
  }
  policy.replacement.maxConcurrentRollouts =
      static_cast<int>(rollouts->value_or(policy.replacement.maxConcurrentRollouts));
  return Ok{};
}

Result<std::optional<std::chrono::seconds>> optionalDuration(const ObjectReader& reader,
                                                             std::string_view key) {
  auto text = reader.optionalString(key);
  if (!text) {
    return text.error();
  }
  if (!*text) {
    return std::optional<std::chrono::seconds>{};
  }
  auto parsed = parseDuration(**text);
  if (!parsed) {
    return Error{reader.fieldPath(key), parsed.error().message};
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*parsed);
  if (seconds.count() <= 0) {
    return Error{reader.fieldPath(key), "must be at least 1s"};
  }
  return std::optional{seconds};
}

// Where candidates come from, and the fallback's timings.
Status parseCapacity(const ObjectReader& spec, Policy& policy) {
  const auto capacity = spec.child("capacity");
  if (auto ok = capacity.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = capacity.onlyKeys(
          {"source", "fallbackAfter", "retryAfter", "spotForServing", "fallbackAcrossTiers"});
      !ok) {
    return ok.error();
  }
  for (auto [key, target] :
       {std::pair{"spotForServing", &policy.capacity.spotForServing},
        std::pair{"fallbackAcrossTiers", &policy.capacity.fallbackAcrossTiers}}) {
    auto value = capacity.optionalBool(key);
    if (!value) {
      return value.error();
    }
    *target = value->value_or(*target);
  }
  auto source = capacity.optionalEnum<CapacitySource>("source");
  if (!source) {
    return source.error();
  }
  policy.capacity.source = source->value_or(policy.capacity.source);
  for (auto [key, target] : {std::pair{"fallbackAfter", &policy.capacity.fallbackAfter},
                             std::pair{"retryAfter", &policy.capacity.retryAfter}}) {
    auto value = optionalDuration(capacity, key);
    if (!value) {
      return value.error();
    }
    *target = value->value_or(*target);
  }
  return Ok{};
}

// How placements are priced: hours a month, the cost model, the fill limit.
Status parseCosting(const ObjectReader& spec, Policy& policy) {
  auto hours = spec.optionalNumber("hoursPerMonth", 1, 744);
  if (!hours) {
    return hours.error();
  }
  policy.hoursPerMonth = hours->value_or(policy.hoursPerMonth);
  auto costModel = spec.optionalEnum<CostModel>("costModel");
  if (!costModel) {
    return costModel.error();
  }
  policy.costModel = costModel->value_or(policy.costModel);
  auto fill = spec.optionalInteger("memoryFillPercent", 50, 100);
  if (!fill) {
    return fill.error();
  }
  policy.memoryFillLimit = static_cast<double>(fill->value_or(90)) / 100;
  return Ok{};
}

Status parseMemoryOverheads(const ObjectReader& spec, Policy& policy) {
  const auto overheads = spec.child("memoryOverheads");
  if (auto ok = overheads.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = overheads.onlyKeys({"training", "fineTuning", "inference", "batchInference",
                                    "runtimeGiB", "servingReserveGiB"});
      !ok) {
    return ok.error();
  }
  // runtimeGiB: {PyTorch: 1.5, vLLM: 3}, by framework name.
  const auto runtime = overheads.child("runtimeGiB");
  if (auto ok = runtime.requireObject(true); !ok) {
    return ok.error();
  }
  if (overheads.has("runtimeGiB")) {
    for (const auto& [name, value] : overheads.at("runtimeGiB").items()) {
      auto framework = parseEnum<Framework>(name);
      if (!framework) {
        return Error{runtime.fieldPath(name), framework.error().message};
      }
      auto gib = runtime.number(name, 0, 64);
      if (!gib) {
        return gib.error();
      }
      policy.memoryOverheads.runtime[static_cast<std::size_t>(*framework)] = *gib;
    }
  }
  for (auto [key, target] : {std::pair{"training", &policy.memoryOverheads.training},
                             std::pair{"fineTuning", &policy.memoryOverheads.fineTuning},
                             std::pair{"inference", &policy.memoryOverheads.inference},
                             std::pair{"batchInference", &policy.memoryOverheads.batchInference}}) {
    auto value = overheads.optionalNumber(key, 1, 64);
    if (!value) {
      return value.error();
    }
    *target = value->value_or(*target);
  }
  auto reserve = overheads.optionalNumber("servingReserveGiB", 0, 64);
  if (!reserve) {
    return reserve.error();
  }
  policy.memoryOverheads.servingReserveGiB =
      reserve->value_or(policy.memoryOverheads.servingReserveGiB);
  return Ok{};
}

}  // namespace

std::array<TierSettings, 4> Policy::defaultTiers() {
  const Toleration gpu{"nvidia.com/gpu", "Exists", "", "NoSchedule"};
  const Toleration neuron{"aws.amazon.com/neuron", "Exists", "", "NoSchedule"};
  std::array<TierSettings, 4> tiers;
  tiers[static_cast<std::size_t>(Tier::NVIDIA)] = {"nvidia.com/gpu", {gpu}};
  tiers[static_cast<std::size_t>(Tier::Trainium)] = {"aws.amazon.com/neuron", {neuron}};
  tiers[static_cast<std::size_t>(Tier::Inferentia)] = {"aws.amazon.com/neuron", {neuron}};
  tiers[static_cast<std::size_t>(Tier::CPU)] = {"", {}};
  return tiers;
}

// spec.sharing: what Auto means for each kind. Auto itself is a workload's
// word for "as the policy says", so the policy must say something else.
Status parseSharing(const ObjectReader& spec, Policy& policy) {
  const auto sharing = spec.child("sharing");
  if (auto ok = sharing.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = sharing.onlyKeys({"inference", "training"}); !ok) {
    return ok.error();
  }
  for (auto [key, into] : {std::pair{"inference", &policy.sharing.inference},
                           std::pair{"training", &policy.sharing.training}}) {
    auto value = sharing.optionalEnum<DeviceSharing>(key);
    if (!value) {
      return value.error();
    }
    if (*value == DeviceSharing::Auto) {
      return Error{sharing.fieldPath(key), "must be None, Isolated or Any: Auto is a workload's"};
    }
    *into = value->value_or(*into);
  }
  return Ok{};
}

Result<Policy> parsePolicySpec(const json& specValue, const Catalog& catalog,
                               const RuleSet& rules) {
  Policy policy;
  ObjectReader spec(specValue, "spec");
  if (auto ok = spec.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok =
          spec.onlyKeys({"prices", "priceSharing", "disabledInstanceTypes", "hoursPerMonth",
                         "costModel", "memoryFillPercent", "memoryOverheads", "rules", "nodeLabels",
                         "tiers", "replacement", "capacity", "placeAt", "sharing"});
      !ok) {
    return ok.error();
  }
  if (auto ok = parsePrices(spec, catalog, policy); !ok) {
    return ok.error();
  }
  auto disabled = spec.stringList("disabledInstanceTypes");
  if (!disabled) {
    return disabled.error();
  }
  for (std::size_t i = 0; i < disabled->size(); ++i) {
    if (!catalog.find((*disabled)[i])) {
      return Error{"spec.disabledInstanceTypes[" + std::to_string(i) + "]",
                   "\"" + (*disabled)[i] + "\" is not in the catalog"};
    }
    policy.disabledInstanceTypes.insert((*disabled)[i]);
  }
  auto sharing = spec.optionalEnum<PriceSharing>("priceSharing");
  if (!sharing) {
    return sharing.error();
  }
  policy.priceSharing = sharing->value_or(policy.priceSharing);
  auto placeAt = spec.optionalEnum<PlaceAt>("placeAt");
  if (!placeAt) {
    return placeAt.error();
  }
  policy.placeAt = placeAt->value_or(policy.placeAt);
  for (auto parse : {parseCosting, parseMemoryOverheads, parseNodeLabels, parseTiers,
                     parseReplacement, parseCapacity, parseSharing}) {
    if (auto ok = parse(spec, policy); !ok) {
      return ok.error();
    }
  }
  if (auto ok = parseRuleKnobs(spec, rules, policy); !ok) {
    return ok.error();
  }
  return policy;
}

}  // namespace gpuplacement::core
