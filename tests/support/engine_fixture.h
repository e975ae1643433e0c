#pragma once

#include <memory>
#include <string>

#include <doctest/doctest.h>

#include "app/placement_config.h"
#include "core/engine.h"
#include "core/quantity.h"

namespace gpuplacement::testing {

// The catalog and rules that ship (config/*.yaml, compiled in), parsed once.
inline const std::shared_ptr<const core::Catalog>& shippedCatalog() {
  static const auto catalog = [] {
    auto loaded = app::loadCatalog("");
    REQUIRE_MESSAGE(loaded.ok(), loaded.error().describe());
    return *loaded;
  }();
  return catalog;
}

inline const std::shared_ptr<const core::RuleSet>& shippedRules() {
  static const auto rules = [] {
    auto loaded = app::loadRules("", *shippedCatalog());
    REQUIRE_MESSAGE(loaded.ok(), loaded.error().describe());
    return *loaded;
  }();
  return rules;
}

inline std::shared_ptr<const core::PlacementEngine> shippedEngine(core::Policy policy = {}) {
  auto engine = core::PlacementEngine::create(shippedCatalog(), shippedRules(), std::move(policy));
  REQUIRE_MESSAGE(engine.ok(), engine.error().describe());
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
  IntentBuilder& replicas(int value) {
    intent.replicas = value;
    return *this;
  }
  operator core::WorkloadIntent() const { return intent; }
};

}  // namespace gpuplacement::testing
