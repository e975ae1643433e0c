#include "core/intent/policy.h"

#include <functional>

#include <doctest/doctest.h>

#include "core/explain/explainer.h"
#include "support/engine_fixture.h"
#include "support/why_not.h"

namespace gpuplacement::core {

using json = nlohmann::json;

namespace {

json fullPolicy() {
  return json::parse(R"({
    "prices": [{"instanceType": "p4d.24xlarge", "onDemand": "21.957642", "spot": "12.4991"},
               {"instanceType": "trn2.48xlarge", "onDemand": 40}],
    "disabledInstanceTypes": ["p3.2xlarge"],
    "hoursPerMonth": 720,
    "costModel": "AcceleratorShare",
    "memoryFillPercent": 85,
    "memoryOverheads": {"training": "4", "fineTuning": 1.6, "inference": "1.25",
                        "servingReserveGiB": "2.5"},
    "rules": {"lowLatencyBelowMs": 5, "realtimeBelowMs": 200,
              "neuronFrameworks": ["PyTorch", "JAX"], "disabled": ["small-model-inference"]},
    "nodeLabels": {"scheme": "Karpenter",
                   "capacityType": {"key": "eks.amazonaws.com/capacityType",
                                    "onDemand": "ON_DEMAND", "spot": "SPOT"}},
    "tiers": {"NVIDIA": {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "true",
                                          "effect": "NoSchedule"}]},
              "Inferentia": {"resourceName": "aws.amazon.com/neuroncore"}},
    "replacement": {"minSavingsPercent": 15, "cooldown": "30m", "maxConcurrentRollouts": 3},
    "capacity": {"source": "NodePools", "fallbackAfter": "2m", "retryAfter": "1h",
                 "fallbackAcrossTiers": true}})");
}

}  // namespace

TEST_CASE("a PlacementPolicy spec sets every knob") {
  auto policy = parsePolicySpec(fullPolicy(), *testing::shippedCatalog(), *testing::shippedRules());
  REQUIRE_MESSAGE(policy.ok(), gpuplacement::testing::whyNot(policy));
  CHECK(*policy->prices.at("p4d.24xlarge").onDemand == doctest::Approx(21.957642));
  CHECK(*policy->prices.at("p4d.24xlarge").spot == doctest::Approx(12.4991));
  CHECK(*policy->prices.at("trn2.48xlarge").onDemand == doctest::Approx(40));
  CHECK(policy->disabledInstanceTypes.count("p3.2xlarge"));
  CHECK(policy->hoursPerMonth == 720);
  CHECK(policy->costModel == CostModel::AcceleratorShare);
  CHECK(policy->memoryFillLimit == doctest::Approx(0.85));
  CHECK(policy->memoryOverheads.training == 4);
  CHECK(policy->memoryOverheads.fineTuning == doctest::Approx(1.6));
  CHECK(policy->memoryOverheads.inference == doctest::Approx(1.25));
  CHECK(policy->memoryOverheads.batchInference == doctest::Approx(1.2));  // default kept
  CHECK(policy->memoryOverheads.servingReserveGiB == doctest::Approx(2.5));
  CHECK(*policy->lowLatencyBelowMs == 5);
  CHECK(policy->neuronFrameworks->size() == 2);
  CHECK(policy->disabledRules.count("small-model-inference"));
  CHECK(policy->labelScheme == LabelScheme::Karpenter);
  CHECK(policy->capacityTypeLabel.spot == "SPOT");
  CHECK(policy->tier(Tier::NVIDIA).tolerations.at(0).value == "true");
  CHECK(policy->tier(Tier::NVIDIA).resourceName == "nvidia.com/gpu");  // default kept
  CHECK(policy->tier(Tier::Inferentia).resourceName == "aws.amazon.com/neuroncore");
  CHECK(policy->tier(Tier::Inferentia).tolerations.at(0).key == "aws.amazon.com/neuron");
  CHECK(policy->replacement.minSavingsPercent == 15);
  CHECK(policy->replacement.cooldown == std::chrono::minutes(30));
  CHECK(policy->replacement.maxConcurrentRollouts == 3);
  CHECK(policy->capacityTypeLabelSet);
  CHECK(policy->capacity.source == CapacitySource::NodePools);
  CHECK(policy->capacity.fallbackAfter == std::chrono::minutes(2));
  CHECK(policy->capacity.retryAfter == std::chrono::hours(1));
  CHECK(policy->capacity.fallbackAcrossTiers);

  // The knobs reach the engine: JAX may now use Neuron, 150 ms is real-time.
  auto engine = testing::shippedEngine(*policy);
  CHECK(engine->knobs().realtimeBelowMs == 200);
  const auto decision = decide(*engine, testing::IntentBuilder(WorkloadKind::Inference, "7B")
                                            .framework(Framework::JAX)
                                            .tiers({Tier::Inferentia}));
  CHECK(decision.placement.has_value());
}

TEST_CASE("an empty spec is the default policy") {
  auto policy =
      parsePolicySpec(json::object(), *testing::shippedCatalog(), *testing::shippedRules());
  REQUIRE(policy.ok());
  CHECK(policy->hoursPerMonth == 730);
  CHECK(policy->memoryOverheads.training == 9);
  CHECK(policy->replacement.minSavingsPercent == 10);
  // Detected from the cluster's nodes; InstanceType without a cluster.
  CHECK(policy->labelScheme == LabelScheme::Auto);
  CHECK_FALSE(policy->capacityTypeLabelSet);
  CHECK(policy->capacity.source == CapacitySource::Auto);
  CHECK(policy->capacity.fallbackAfter == std::chrono::minutes(5));
  CHECK(policy->capacity.retryAfter == std::chrono::minutes(30));
  CHECK_FALSE(policy->capacity.fallbackAcrossTiers);
  // What the cluster pays, with headroom, unless a policy says otherwise.
  CHECK(policy->costModel == CostModel::WholeInstance);
  CHECK(policy->memoryFillLimit == doctest::Approx(0.9));
  auto null = parsePolicySpec(json(), *testing::shippedCatalog(), *testing::shippedRules());
  CHECK(null.ok());
}

TEST_CASE("an invalid policy names the field") {
  struct Case {
    const char* label;
    std::function<void(json&)> breakIt;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"unknown instance type", [](json& p) { p["prices"][0]["instanceType"] = "p9.xlarge"; },
       "spec.prices[0].instanceType", "not in the catalog"},
      {"negative price", [](json& p) { p["prices"][0]["onDemand"] = "-1"; },
       "spec.prices[0].onDemand", "not a non-negative decimal"},
      {"price nobody can pay", [](json& p) { p["prices"][0]["spot"] = 1e9; }, "spec.prices[0].spot",
       "between 0 and 10000"},
      {"price with neither", [](json& p) { p["prices"][1].erase("onDemand"); }, "spec.prices[1]",
       "neither"},
      {"priced twice", [](json& p) { p["prices"][1]["instanceType"] = "p4d.24xlarge"; },
       "spec.prices[1].instanceType", "priced twice"},
      {"disabled unknown", [](json& p) { p["disabledInstanceTypes"] = {"g9.xlarge"}; },
       "spec.disabledInstanceTypes[0]", "not in the catalog"},
      {"hours", [](json& p) { p["hoursPerMonth"] = 800; }, "spec.hoursPerMonth", "between 1"},
      {"cost model", [](json& p) { p["costModel"] = "PerGPU"; }, "spec.costModel",
       "AcceleratorShare or WholeInstance"},
      {"fill limit", [](json& p) { p["memoryFillPercent"] = 120; }, "spec.memoryFillPercent",
       "between 50 and 100"},
      {"overhead below 1", [](json& p) { p["memoryOverheads"]["inference"] = "0.5"; },
       "spec.memoryOverheads.inference", "between 1"},
      {"malformed duration", [](json& p) { p["replacement"]["cooldown"] = "soon"; },
       "spec.replacement.cooldown", "not a duration"},
      {"rollouts", [](json& p) { p["replacement"]["maxConcurrentRollouts"] = 0; },
       "spec.replacement.maxConcurrentRollouts", "between 1"},
      {"savings", [](json& p) { p["replacement"]["minSavingsPercent"] = 120; },
       "spec.replacement.minSavingsPercent", "between 0 and 100"},
      {"unknown rule", [](json& p) { p["rules"]["disabled"] = {"no-such-rule"}; },
       "spec.rules.disabled[0]", "not a rule"},
      {"latency order", [](json& p) { p["rules"]["lowLatencyBelowMs"] = 500; },
       "spec.rules.lowLatencyBelowMs", "must not exceed"},
      {"label scheme", [](json& p) { p["nodeLabels"]["scheme"] = "Magic"; },
       "spec.nodeLabels.scheme", "InstanceType, Karpenter, GPUFeatureDiscovery or Auto"},
      {"capacity source", [](json& p) { p["capacity"]["source"] = "Cloud"; },
       "spec.capacity.source", "Auto, Nodes, NodePools or None"},
      {"fallback duration", [](json& p) { p["capacity"]["fallbackAfter"] = "later"; },
       "spec.capacity.fallbackAfter", "not a duration"},
      {"zero retry", [](json& p) { p["capacity"]["retryAfter"] = "0s"; },
       "spec.capacity.retryAfter", "at least 1s"},
      {"crossing tiers not a boolean",
       [](json& p) { p["capacity"]["fallbackAcrossTiers"] = "yes"; },
       "spec.capacity.fallbackAcrossTiers", "must be true or false"},
      {"unknown capacity field", [](json& p) { p["capacity"]["zones"] = {"a"}; },
       "spec.capacity.zones", "unknown field"},
      {"toleration operator",
       [](json& p) { p["tiers"]["NVIDIA"]["tolerations"][0]["operator"] = "In"; },
       "spec.tiers.NVIDIA.tolerations[0].operator", "Exists or Equal"},
      {"toleration effect",
       [](json& p) { p["tiers"]["NVIDIA"]["tolerations"][0]["effect"] = "Never"; },
       "spec.tiers.NVIDIA.tolerations[0].effect", "NoSchedule"},
      {"resource without domain", [](json& p) { p["tiers"]["NVIDIA"]["resourceName"] = "gpu"; },
       "spec.tiers.NVIDIA.resourceName", "domain"},
      {"CPU resource",
       [](json& p) {
         p["tiers"]["CPU"] = {{"resourceName", "x.io/cpu"}};
       },
       "spec.tiers.CPU.resourceName", "no device"},
      {"unknown tier", [](json& p) { p["tiers"]["TPU"] = json::object(); }, "spec.tiers.TPU",
       "unknown field"},
      {"unknown field", [](json& p) { p["pricing"] = 1; }, "spec.pricing", "unknown field"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    json spec = fullPolicy();
    c.breakIt(spec);
    auto policy = parsePolicySpec(spec, *testing::shippedCatalog(), *testing::shippedRules());
    REQUIRE_FALSE(policy.ok());
    CHECK(policy.error().field == c.field);
    CHECK(policy.error().message.find(c.message) != std::string::npos);
  }
}

}  // namespace gpuplacement::core
