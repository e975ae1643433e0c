#include "core/catalog/rules.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/json_reader.h"
#include "core/catalog/quantity.h"

namespace gpuplacement::core {

using base::ObjectReader;
namespace {

using json = nlohmann::json;

template <typename E>
Result<EnumSet<E>> readEnumSet(const ObjectReader& reader, std::string_view key) {
  auto values = reader.enumList<E>(key);
  if (!values) {
    return values.error();
  }
  EnumSet<E> set;
  for (E value : *values) {
    set.insert(value);
  }
  return set;
}

// A parameter bound: "0", "1B", "7e9", or a number.
Result<std::uint64_t> readBound(const ObjectReader& reader, std::string_view key) {
  if (!reader.has(key)) {
    return Error{reader.fieldPath(key), "required"};
  }
  const auto& value = reader.at(key);
  if (value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0)) {
    return value.get<std::uint64_t>();
  }
  if (value.is_string()) {
    if (value.get<std::string>() == "0") {
      return std::uint64_t{0};
    }
    auto parsed = parseParameterCount(value.get<std::string>());
    if (!parsed) {
      return Error{reader.fieldPath(key), parsed.error().message};
    }
    return *parsed;
  }
  return Error{reader.fieldPath(key), "must be a parameter count such as 7B"};
}

}  // namespace

const ServingBandwidth* RuleKnobs::servingBandwidthOf(Tier tier, Framework framework) const {
  for (const auto& entry : servingBandwidth) {
    if (entry.tier == tier &&
        (entry.frameworks.empty() || std::find(entry.frameworks.begin(), entry.frameworks.end(),
                                               framework) != entry.frameworks.end())) {
      return &entry;
    }
  }
  return nullptr;
}

namespace {

Result<RuleKnobs> parseKnobs(const ObjectReader& root) {
  RuleKnobs knobs;
  const auto latency = root.child("latencyClasses");
  if (auto ok = latency.requireObject(true); !ok) {
    return ok.error();
  }
  auto low = latency.optionalNumber("lowLatencyBelowMs", 0.001, 1e6);
  auto realtime = latency.optionalNumber("realtimeBelowMs", 0.001, 1e6);
  if (!low) {
    return low.error();
  }
  if (!realtime) {
    return realtime.error();
  }
  knobs.lowLatencyBelowMs = low->value_or(knobs.lowLatencyBelowMs);
  knobs.realtimeBelowMs = realtime->value_or(knobs.realtimeBelowMs);
  if (knobs.lowLatencyBelowMs > knobs.realtimeBelowMs) {
    return Error{latency.fieldPath("lowLatencyBelowMs"), "must not exceed realtimeBelowMs"};
  }

  if (!root.has("sizeBuckets") || !root.at("sizeBuckets").is_array() ||
      root.at("sizeBuckets").empty()) {
    return Error{"sizeBuckets", "required: a list of {name, from} in ascending order"};
  }
  const auto& buckets = root.at("sizeBuckets");
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    ObjectReader bucket(buckets[i], "sizeBuckets[" + std::to_string(i) + "]");
    auto name = bucket.string("name");
    if (!name) {
      return name.error();
    }
    auto from = readBound(bucket, "from");
    if (!from) {
      return from.error();
    }
    if (i == 0 ? *from != 0 : *from <= knobs.sizeBuckets.back().fromParameters) {
      return Error{bucket.fieldPath("from"),
                   i == 0 ? "the first bucket must start at 0" : "buckets must ascend"};
    }
    knobs.sizeBuckets.push_back(SizeBucket{*name, *from});
  }

  const auto neuron = root.child("neuron");
  auto frameworks = neuron.enumList<Framework>("frameworks");
  auto architectures = neuron.enumList<Architecture>("architectures");
  if (!frameworks) {
    return frameworks.error();
  }
  if (!architectures) {
    return architectures.error();
  }
  knobs.neuronFrameworks = *frameworks;
  knobs.neuronArchitectures = *architectures;

  if (root.has("servingBandwidth")) {
    const auto& entries = root.at("servingBandwidth");
    if (!entries.is_array()) {
      return Error{"servingBandwidth", "must be a list of {tier, frameworks, utilization, source}"};
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
      ObjectReader entry(entries[i], "servingBandwidth[" + std::to_string(i) + "]");
      if (auto ok = entry.requireObject(); !ok) {
        return ok.error();
      }
      if (auto ok = entry.onlyKeys({"tier", "frameworks", "utilization", "source"}); !ok) {
        return ok.error();
      }
      auto tier = entry.optionalEnum<Tier>("tier");
      auto listed = entry.enumList<Framework>("frameworks");
      auto utilization = entry.number("utilization", 0.01, 1);
      auto source = entry.string("source");
      for (const Error* error :
           {tier ? nullptr : &tier.error(), listed ? nullptr : &listed.error(),
            utilization ? nullptr : &utilization.error(), source ? nullptr : &source.error()}) {
        if (error) {
          return *error;
        }
      }
      if (!*tier) {
        return Error{entry.fieldPath("tier"), "required (use " + allowedValues<Tier>() + ")"};
      }
      const bool assumed = source->starts_with("ASSUMPTION");
      knobs.servingBandwidth.push_back(
          {**tier, std::move(listed).value(), *utilization, std::move(source).value(), assumed});
    }
  }
  return knobs;
}

Result<std::vector<int>> readAccelerators(const ObjectReader& candidates, const Catalog& catalog,
                                          const std::map<std::string, std::vector<int>>& groups) {
  std::vector<int> indexes;
  if (candidates.has("acceleratorGroup")) {
    auto group = candidates.string("acceleratorGroup");
    if (!group) {
      return group.error();
    }
    const auto it = groups.find(*group);
    if (it == groups.end()) {
      return Error{candidates.fieldPath("acceleratorGroup"),
                   "\"" + *group + "\" is not in acceleratorGroups"};
    }
    indexes = it->second;
  }
  auto names = candidates.stringList("accelerators");
  if (!names) {
    return names.error();
  }
  for (std::size_t i = 0; i < names->size(); ++i) {
    const int index = catalog.acceleratorIndex((*names)[i]);
    if (index < 0) {
      return Error{candidates.fieldPath("accelerators") + "[" + std::to_string(i) + "]",
                   "\"" + (*names)[i] + "\" is not an accelerator of the catalog"};
    }
    indexes.push_back(index);
  }
  return indexes;
}

}  // namespace

namespace {

using Groups = std::map<std::string, std::vector<int>>;

Result<Groups> readAcceleratorGroups(const ObjectReader& root, const Catalog& catalog) {
  Groups groups;
  if (!root.has("acceleratorGroups")) {
    return groups;
  }
  const auto& value = root.at("acceleratorGroups");
  if (!value.is_object()) {
    return Error{"acceleratorGroups", "must map group names to lists of accelerators"};
  }
  for (const auto& [name, members] : value.items()) {
    json wrapper = {{"accelerators", members}};
    auto indexes =
        readAccelerators(ObjectReader(wrapper, "acceleratorGroups." + name), catalog, groups);
    if (!indexes) {
      return Error{"acceleratorGroups." + name, indexes.error().message};
    }
    groups[name] = std::move(indexes).value();
  }
  return groups;
}

// What workloads a rule is for.
Status readMatch(const ObjectReader& entry, const std::set<std::string>& bucketNames, Rule& rule) {
  const auto match = entry.child("match");
  if (auto ok = match.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = match.onlyKeys(
          {"kinds", "sizes", "latency", "objectives", "frameworks", "architectures"});
      !ok) {
    return ok.error();
  }
  auto kinds = readEnumSet<WorkloadKind>(match, "kinds");
  auto latency = readEnumSet<LatencyClass>(match, "latency");
  auto objectives = readEnumSet<Objective>(match, "objectives");
  auto frameworks = readEnumSet<Framework>(match, "frameworks");
  auto architectures = readEnumSet<Architecture>(match, "architectures");
  auto sizes = match.stringList("sizes");
  for (const Error* error :
       {kinds ? nullptr : &kinds.error(), latency ? nullptr : &latency.error(),
        objectives ? nullptr : &objectives.error(), frameworks ? nullptr : &frameworks.error(),
        architectures ? nullptr : &architectures.error(), sizes ? nullptr : &sizes.error()}) {
    if (error) {
      return *error;
    }
  }
  for (std::size_t s = 0; s < sizes->size(); ++s) {
    if (!bucketNames.count((*sizes)[s])) {
      return Error{match.fieldPath("sizes") + "[" + std::to_string(s) + "]",
                   "\"" + (*sizes)[s] + "\" is not a size bucket"};
    }
  }
  rule.kinds = *kinds;
  rule.latency = *latency;
  rule.objectives = *objectives;
  rule.frameworks = *frameworks;
  rule.architectures = *architectures;
  rule.sizes = *sizes;
  return Ok{};
}

// What a rule may choose from.
Status readCandidates(const ObjectReader& entry, const Catalog& catalog, const Groups& groups,
                      Rule& rule) {
  const auto candidates = entry.child("candidates");
  if (auto ok = candidates.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = candidates.onlyKeys({"tiers", "accelerators", "acceleratorGroup"}); !ok) {
    return ok.error();
  }
  auto tiers = readEnumSet<Tier>(candidates, "tiers");
  if (!tiers) {
    return tiers.error();
  }
  if (tiers->any()) {
    return Error{candidates.fieldPath("tiers"), "required: the tiers this rule may choose from"};
  }
  rule.tiers = *tiers;
  auto accelerators = readAccelerators(candidates, catalog, groups);
  if (!accelerators) {
    return accelerators.error();
  }
  rule.accelerators = std::move(accelerators).value();
  return Ok{};
}

Result<Rule> readRule(const json& value, std::size_t index, const Catalog& catalog,
                      const Groups& groups, const std::set<std::string>& bucketNames,
                      std::set<std::string>& ruleNames) {
  ObjectReader position(value, "rules[" + std::to_string(index) + "]");
  if (auto ok = position.requireObject(); !ok) {
    return ok.error();
  }
  auto name = position.string("name");
  if (!name) {
    return name.error();
  }
  if (!ruleNames.insert(*name).second) {
    return Error{"rules[" + *name + "]", "defined twice"};
  }
  ObjectReader entry(value, "rules[" + *name + "]");
  if (auto ok = entry.onlyKeys({"name", "source", "reason", "match", "candidates"}); !ok) {
    return ok.error();
  }
  Rule rule;
  rule.name = *name;
  auto source = entry.stringOr("source", "");
  auto reason = entry.string("reason");
  for (const Error* error :
       {source ? nullptr : &source.error(), reason ? nullptr : &reason.error()}) {
    if (error) {
      return *error;
    }
  }
  rule.source = *source;
  rule.reason = *reason;
  if (auto ok = readMatch(entry, bucketNames, rule); !ok) {
    return ok.error();
  }
  if (auto ok = readCandidates(entry, catalog, groups, rule); !ok) {
    return ok.error();
  }
  return rule;
}

}  // namespace

Result<RuleSet> parseRuleSet(const json& document, const Catalog& catalog) {
  if (!document.is_object()) {
    return Error{"rules", "must be a YAML or JSON object"};
  }
  ObjectReader root(document, "");
  if (auto ok = root.onlyKeys({"version", "sizeBuckets", "latencyClasses", "neuron",
                               "servingBandwidth", "acceleratorGroups", "rules"});
      !ok) {
    return ok.error();
  }
  RuleSet ruleSet;
  auto knobs = parseKnobs(root);
  if (!knobs) {
    return knobs.error();
  }
  ruleSet.knobs = std::move(knobs).value();
  auto groups = readAcceleratorGroups(root, catalog);
  if (!groups) {
    return groups.error();
  }
  if (!root.has("rules") || !root.at("rules").is_array() || root.at("rules").empty()) {
    return Error{"rules", "required: a non-empty, ordered list of rules"};
  }
  std::set<std::string> bucketNames;
  for (const auto& bucket : ruleSet.knobs.sizeBuckets) {
    bucketNames.insert(bucket.name);
  }
  std::set<std::string> ruleNames;
  const auto& rules = root.at("rules");
  for (std::size_t i = 0; i < rules.size(); ++i) {
    auto rule = readRule(rules[i], i, catalog, *groups, bucketNames, ruleNames);
    if (!rule) {
      return rule.error();
    }
    ruleSet.rules.push_back(std::move(rule).value());
  }
  return ruleSet;
}

}  // namespace gpuplacement::core
