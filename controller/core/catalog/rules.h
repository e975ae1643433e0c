#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/catalog/types.h"

namespace gpuplacement::core {

// How strict a workload's latency target is, from latencyTargetMs and the
// thresholds below: lowLatency (< lowLatencyBelowMs), realtime
// (< realtimeBelowMs), relaxed (anything else, or no target).
enum class LatencyClass : std::uint8_t { LowLatency, Realtime, Relaxed };
}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::LatencyClass> {
  static constexpr std::string_view what = "latency class";
  static constexpr auto names =
      std::to_array<std::string_view>({"lowLatency", "realtime", "relaxed"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

struct SizeBucket {
  std::string name;
  std::uint64_t fromParameters = 0;  // inclusive lower bound
};

// The thresholds rules are written against. The rules file sets defaults;
// a PlacementPolicy may override them.
// The share of peak memory bandwidth a serving stack reaches decoding one
// token (model bandwidth utilization), on a tier, for some frameworks
// (empty: any), with where the figure comes from.
struct ServingBandwidth {
  Tier tier = Tier::NVIDIA;
  std::vector<Framework> frameworks;
  double utilization = 1;
  std::string source;
  // Not measured: the source says so by starting "ASSUMPTION", as the
  // catalog's estimates say "ESTIMATE". Read once, with the rules.
  bool assumed = false;
};

struct RuleKnobs {
  double lowLatencyBelowMs = 10;
  double realtimeBelowMs = 100;
  std::vector<SizeBucket> sizeBuckets;  // ascending fromParameters, first is 0
  std::vector<Framework> neuronFrameworks;
  std::vector<Architecture> neuronArchitectures;
  std::vector<ServingBandwidth> servingBandwidth;  // the first that matches applies

  // The entry for serving on `tier` with `framework`; null: none (peak).
  const ServingBandwidth* servingBandwidthOf(Tier tier, Framework framework) const;
};

struct Rule {
  std::string name;
  std::string source;  // where the rule comes from (seed and line)
  std::string reason;  // why, in one sentence, for status and events
  // Conditions; each empty set matches anything.
  EnumSet<WorkloadKind> kinds;
  std::vector<std::string> sizes;  // size bucket names; empty = any
  EnumSet<LatencyClass> latency;
  EnumSet<Objective> objectives;
  EnumSet<Framework> frameworks;
  EnumSet<Architecture> architectures;
  // What the engine may choose from when the rule matches.
  EnumSet<Tier> tiers;
  std::vector<int> accelerators;  // catalog accelerator indexes; empty = any
};

struct RuleSet {
  RuleKnobs knobs;
  std::vector<Rule> rules;
};

// Reads config/rules.yaml (as JSON) against a catalog, so accelerator names
// are checked. Errors name the rule and the field.
Result<RuleSet> parseRuleSet(const nlohmann::json& document, const Catalog& catalog);

}  // namespace gpuplacement::core
