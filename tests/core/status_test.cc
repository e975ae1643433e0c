#include "core/status.h"

#include <doctest/doctest.h>

#include "core/replacement.h"

namespace gpuplacement::core {

TEST_CASE("conditions keep their transition time until their status changes") {
  std::vector<Condition> conditions;
  setCondition(conditions, {"Ready", "False", "RolloutInProgress", "1 of 2", "", 3}, "T1");
  setCondition(conditions, {"Ready", "False", "RolloutInProgress", "2 of 2", "", 3}, "T2");
  REQUIRE(conditions.size() == 1);
  CHECK(conditions[0].lastTransitionTime == "T1");
  CHECK(conditions[0].message == "2 of 2");
  setCondition(conditions, {"Ready", "True", "RolloutComplete", "", "", 3}, "T3");
  CHECK(conditions[0].lastTransitionTime == "T3");
  setCondition(conditions, {"Valid", "True", "Valid", "", "", 3}, "T4");
  CHECK(conditions.size() == 2);
  CHECK(findCondition(conditions, "Valid")->lastTransitionTime == "T4");
  CHECK(findCondition(conditions, "Placed") == nullptr);
}

TEST_CASE("the status the controller writes reads back the same") {
  StatusView view;
  view.observedGeneration = 4;
  view.mode = "Apply";
  view.applied =
      AppliedRecord{"llama", "g6e.xlarge",           "L40S", Tier::NVIDIA, 1, CapacityType::Spot, 9,
                    4,       "2026-11-22T10:00:00Z", true};
  view.lastReplacement = ReplacementRecord{"g5.12xlarge", "g6e.xlarge", "702.4",
                                           "2026-11-22T10:00:00Z", "prices changed"};
  view.conditions = {{"Ready", "True", "RolloutComplete", "done", "2026-11-22T10:05:00Z", 4}};
  view.policyName = "default";
  view.policyGeneration = 2;
  const auto json = statusToJson(view);
  const auto back = workloadStatusFromJson(json);
  CHECK(back.observedGeneration == 4);
  REQUIRE(back.applied.has_value());
  CHECK(*back.applied == *view.applied);
  REQUIRE(back.lastReplacement.has_value());
  CHECK(*back.lastReplacement == *view.lastReplacement);
  CHECK(back.conditions == view.conditions);
  CHECK(json["policy"]["generation"] == 2);
  // Garbage in, defaults out.
  CHECK(workloadStatusFromJson(nlohmann::json::array()).observedGeneration == 0);
}

namespace {

Placement placement(const char* type, double hourly, double performance) {
  Placement p;
  p.instanceType = type;
  p.acceleratorCount = 1;
  p.hourlyCost = hourly;
  p.performance = performance;
  return p;
}

}  // namespace

TEST_CASE("the re-placement gate: hysteresis, cooldown, rollout slots, forced moves") {
  const auto now = Timestamp(std::chrono::hours(500000));
  const AppliedRecord applied{"d", "g5.xlarge", "A10G", Tier::NVIDIA, 1, CapacityType::OnDemand,
                              5,   2,           "",     false};
  Assessment current;
  current.feasible = true;
  current.hourlyCost = 1.0;
  current.performance = 600;
  ReplacementSettings settings;  // 10%, 1 h, 2 rollouts

  struct Row {
    const char* label;
    Placement wanted;
    bool hasApplied;
    bool specChanged;
    bool feasible;
    std::optional<std::chrono::minutes> lastMoveAgo;
    bool slotFree;
    Objective objective;
    GateVerdict verdict;
    bool replacement;
  };
  const Row rows[] = {
      {"first placement",
       placement("g6.xlarge", 0.8, 300),
       false,
       false,
       true,
       {},
       false,
       Objective::CostOptimized,
       GateVerdict::Apply,
       false},
      {"already there",
       placement("g5.xlarge", 1.0, 600),
       true,
       false,
       true,
       {},
       true,
       Objective::CostOptimized,
       GateVerdict::Keep,
       false},
      {"the user changed the spec", placement("g6.xlarge", 0.99, 300), true, true, true,
       std::chrono::minutes(1), false, Objective::CostOptimized, GateVerdict::Apply, false},
      {"5% cheaper: held",
       placement("g6.xlarge", 0.95, 300),
       true,
       false,
       true,
       {},
       true,
       Objective::CostOptimized,
       GateVerdict::Hold,
       true},
      {"20% cheaper", placement("g6.xlarge", 0.8, 300), true, false, true, std::chrono::minutes(90),
       true, Objective::CostOptimized, GateVerdict::Apply, true},
      {"20% cheaper, moved 10 min ago", placement("g6.xlarge", 0.8, 300), true, false, true,
       std::chrono::minutes(10), true, Objective::CostOptimized, GateVerdict::Cooldown, true},
      {"20% cheaper, rollouts busy",
       placement("g6.xlarge", 0.8, 300),
       true,
       false,
       true,
       {},
       false,
       Objective::CostOptimized,
       GateVerdict::WaitForRollout,
       true},
      {"old one impossible: no threshold, no cooldown", placement("g6.xlarge", 0.99, 300), true,
       false, false, std::chrono::minutes(1), true, Objective::CostOptimized, GateVerdict::Apply,
       true},
      {"old one impossible, rollouts busy",
       placement("g6.xlarge", 0.99, 300),
       true,
       false,
       false,
       {},
       false,
       Objective::CostOptimized,
       GateVerdict::WaitForRollout,
       true},
      {"balanced: 50% more per dollar",
       placement("g6e.xlarge", 1.0, 900),
       true,
       false,
       true,
       {},
       true,
       Objective::Balanced,
       GateVerdict::Apply,
       true},
      {"balanced: 5% more per dollar",
       placement("g6e.xlarge", 1.0, 630),
       true,
       false,
       true,
       {},
       true,
       Objective::Balanced,
       GateVerdict::Hold,
       true},
      {"fastest: twice as fast even if dearer",
       placement("p5.4xlarge", 6.88, 1200),
       true,
       false,
       true,
       {},
       true,
       Objective::MaxPerformance,
       GateVerdict::Apply,
       true},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    Assessment assessed = current;
    assessed.feasible = row.feasible;
    assessed.reason = row.feasible ? "" : "g5.xlarge has no on-demand price any more";
    GateInput input;
    input.wanted = &row.wanted;
    input.applied = row.hasApplied ? &applied : nullptr;
    input.current = row.hasApplied ? &assessed : nullptr;
    input.specChanged = row.specChanged;
    input.objective = row.objective;
    input.settings = settings;
    input.now = now;
    if (row.lastMoveAgo) {
      input.lastMove = now - *row.lastMoveAgo;
    }
    input.rolloutSlotFree = row.slotFree;
    const auto gate = gateReplacement(input);
    CHECK(gate.verdict == row.verdict);
    CHECK(gate.replacement == row.replacement);
    if (row.verdict == GateVerdict::Cooldown) {
      CHECK(gate.wait == std::chrono::minutes(50));
    }
    if (!row.feasible) {
      CHECK(gate.forced);
      CHECK(gate.message.find("no on-demand price") != std::string::npos);
    }
  }
}

}  // namespace gpuplacement::core
