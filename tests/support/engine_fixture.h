#pragma once

#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "core/catalog/quantity.h"
#include "core/decide/engine.h"
#include "support/paths.h"
#include "support/why_not.h"

namespace gpuplacement::testing {

// The catalog and rules that ship (config/*.yaml, the files the binary
// compiles in), read as the command line reads them, parsed once.
inline nlohmann::json shippedDocument(const char* file) {
  const std::string path = repoRoot() + "/config/" + file;
  auto text = base::readTextFile(path);
  REQUIRE_MESSAGE(text.ok(), gpuplacement::testing::whyNot(text));
  auto document = base::parseYaml(*text, path);
  REQUIRE_MESSAGE(document.ok(), gpuplacement::testing::whyNot(document));
  return *document;
}

inline const std::shared_ptr<const core::Catalog>& shippedCatalog() {
  static const auto catalog = [] {
    auto parsed = core::parseCatalog(shippedDocument("catalog.yaml"));
    REQUIRE_MESSAGE(parsed.ok(), gpuplacement::testing::whyNot(parsed));
    return std::make_shared<const core::Catalog>(std::move(parsed).value());
  }();
  return catalog;
}

inline const std::shared_ptr<const core::RuleSet>& shippedRules() {
  static const auto rules = [] {
    auto parsed = core::parseRuleSet(shippedDocument("rules.yaml"), *shippedCatalog());
    REQUIRE_MESSAGE(parsed.ok(), gpuplacement::testing::whyNot(parsed));
    return std::make_shared<const core::RuleSet>(std::move(parsed).value());
  }();
  return rules;
}

inline std::shared_ptr<const core::PlacementEngine> shippedEngine(core::Policy policy = {}) {
  auto engine = core::PlacementEngine::create(shippedCatalog(), shippedRules(), std::move(policy));
  REQUIRE_MESSAGE(engine.ok(), gpuplacement::testing::whyNot(engine));
  return *engine;
}

// A readable way to write an intent in a table row.
struct IntentBuilder {
  core::WorkloadIntent intent;

  IntentBuilder(core::WorkloadKind kind, const char* parameters) {
    intent.kind = kind;
    auto count = core::parseParameterCount(parameters);
    REQUIRE(count.ok());
    intent.parameters = *count;
  }
  IntentBuilder& precision(core::Precision value) {
    intent.precision = value;
    return *this;
  }
  IntentBuilder& framework(core::Framework value) {
    intent.framework = value;
    return *this;
  }
  IntentBuilder& architecture(core::Architecture value) {
    intent.architecture = value;
    return *this;
  }
  IntentBuilder& objective(core::Objective value) {
    intent.objective = value;
    return *this;
  }
  IntentBuilder& latency(double ms) {
    intent.latencyTargetMs = ms;
    return *this;
  }
  IntentBuilder& capacity(core::CapacityType value) {
    intent.constraints.capacityType = value;
    return *this;
  }
  IntentBuilder& maxHourlyCost(double dollars) {
    intent.constraints.maxHourlyCost = dollars;
    return *this;
  }
  IntentBuilder& tiers(std::vector<core::Tier> value) {
    intent.constraints.tiers = std::move(value);
    return *this;
  }
  IntentBuilder& only(std::vector<std::string> types) {
    intent.constraints.instanceTypes = std::move(types);
    return *this;
  }
  IntentBuilder& exclude(std::vector<std::string> types) {
    intent.constraints.excludedInstanceTypes = std::move(types);
    return *this;
  }
  IntentBuilder& podRequests(double cpu, double memoryGiB) {
    intent.podCpu = cpu;
    intent.podMemoryGiB = memoryGiB;
    return *this;
  }
  IntentBuilder& replicas(int value) {
    intent.replicas = value;
    return *this;
  }
  // The target's pods form `groups` groups of `size` (0: the placement says).
  IntentBuilder& groups(int groups, int size,
                        std::string field = "spec.leaderWorkerTemplate.size") {
    intent.groups = {groups, size, std::move(field)};
    intent.replicas = groups * std::max(size, 1);
    return *this;
  }
  operator core::WorkloadIntent() const { return intent; }
};

}  // namespace gpuplacement::testing
