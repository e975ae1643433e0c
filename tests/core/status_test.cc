#include "core/plan/status.h"

#include <doctest/doctest.h>

#include "core/explain/explainer.h"
#include "core/plan/replacement.h"
#include "support/engine_fixture.h"
#include "support/paths.h"

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
  view.applied = AppliedRecord{TargetKind::Deployment,
                               "llama",
                               "5f1c2d9e-8a4b-4e3a-9f0e-1d2c3b4a5f6e",
                               "g6e.xlarge",
                               "L40S",
                               Tier::NVIDIA,
                               1,
                               CapacityType::Spot,
                               9,
                               4,
                               "2026-11-22T10:00:00Z",
                               true};
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

// Every key of `value` (objects, recursively) is a property of `schema`:
// nothing the operator writes is pruned by the API server.
void checkAgainstSchema(const nlohmann::json& value, const nlohmann::json& schema,
                        const std::string& path) {
  if (!value.is_object()) {
    return;
  }
  const auto& properties = schema.at("properties");
  for (const auto& [key, item] : value.items()) {
    CAPTURE(path + "." + key);
    REQUIRE(properties.contains(key));
    checkAgainstSchema(item, properties.at(key), path + "." + key);
  }
}

}  // namespace

TEST_CASE("status shows the node behind the price and the latency estimate, as the CRD allows") {
  const auto engine = testing::shippedEngine();
  const auto decision = decide(*engine, testing::IntentBuilder(WorkloadKind::Inference, "405B")
                                            .latency(2)
                                            .objective(Objective::CostOptimized));
  REQUIRE(decision.placement);
  StatusView view;
  view.observedGeneration = 1;
  view.mode = "Recommend";
  view.placement = decision.placement;
  view.recommendation = decision.placement;
  view.recommendationNote = "held";
  view.decision = &decision;
  view.policyName = "default";
  const auto status = statusToJson(view);
  const auto& placement = status.at("placement");
  CHECK(placement.at("costModel") == "WholeInstance");
  CHECK(placement.at("nodeHourlyCost") == "113.9328");
  CHECK(placement.at("nodes") == 1);
  CHECK(placement.at("acceleratorsPerNode") == 8);
  CHECK(placement.at("idleAccelerators") == 0);
  CHECK(placement.at("costNote").get<std::string>().find("8 of 8 B200") == 0);
  CHECK(placement.at("latencyMs") == "46.14");  // PyTorch decoding eagerly: 35% of peak
  CHECK(placement.at("bandwidthUtilization") == "0.35");
  CHECK(placement.at("latencyPer") == "output token");
  CHECK(placement.at("latencyBound") == "memory");
  CHECK(placement.at("hostMemoryGiB") == "5.75");  // PyTorch's 1 GiB and a 5 GB shard
  CHECK(status.at("memory").at("method") == "online inference");
  CHECK(status.at("memory").at("runtimeGiB") == "1");
  CHECK(status.at("ruleSource").get<std::string>().find("seed 002 I1") == 0);
  CHECK(std::string(decision.placedReason()) == "LatencyTargetUnreachable");

  const std::string path = testing::repoRoot() + "/crds/gpuplacement.io_gpuworkloads.yaml";
  auto text = base::readTextFile(path);
  REQUIRE(text.ok());
  auto crd = base::parseYaml(*text, path);
  REQUIRE(crd.ok());
  const auto& schema = crd->at("spec")
                           .at("versions")
                           .at(0)
                           .at("schema")
                           .at("openAPIV3Schema")
                           .at("properties")
                           .at("status");
  auto withoutLists = status;
  withoutLists.erase("alternatives");
  withoutLists.erase("conditions");
  checkAgainstSchema(withoutLists, schema, "status");
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
  const AppliedRecord applied{TargetKind::Deployment, "d", "", "g5.xlarge", "A10G", Tier::NVIDIA, 1,
                              CapacityType::OnDemand, 5,   2,  "",          false};
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

namespace gpuplacement::core {

TEST_CASE("with a cluster view the gate weighs what the cluster pays more") {
  const AppliedRecord applied{TargetKind::Deployment, "d", "", "g6.xlarge", "L4", Tier::NVIDIA, 1,
                              CapacityType::OnDemand, 5,   2,  "",          false};
  Assessment aloneOnItsNode;  // a g6.xlarge only it uses: leaving lets it go
  aloneOnItsNode.feasible = true;
  aloneOnItsNode.hourlyCost = 0.8048;
  aloneOnItsNode.clusterHourlyCost = 0.8048;
  aloneOnItsNode.performance = 300;
  Assessment sharingANode = aloneOnItsNode;  // the node stays for the others' pods
  sharingANode.hourlyCost = 4.6016 / 4;
  sharingANode.clusterHourlyCost = 0;
  Placement idleL4 = placement("g6.12xlarge", 4.6016 / 4, 300);  // charged its share
  idleL4.clusterHourlyCost = 0;
  Placement newL40S = placement("g6e.xlarge", 1.861, 864);
  newL40S.clusterHourlyCost = 1.861;
  struct Row {
    const char* label;
    const Assessment* current;
    const Placement* wanted;
    Objective objective;
    GateVerdict verdict;
    const char* message;
    double monthlySaving;
  };
  const Row rows[] = {
      {"onto idle devices under Balanced, although its share is dearer", &aloneOnItsNode, &idleL4,
       Objective::Balanced, GateVerdict::Apply, "uses idle devices already paid for", 0.8048 * 730},
      {"onto idle devices under CostOptimized", &aloneOnItsNode, &idleL4, Objective::CostOptimized,
       GateVerdict::Apply, "$0.8048/h per replica less for the cluster", 0.8048 * 730},
      {"off a shared node onto a new one: the cluster pays more", &sharingANode, &newL40S,
       Objective::Balanced, GateVerdict::Hold, "would cost the cluster $1.86/h per replica more",
       -1.861 * 730},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    GateInput input;
    input.wanted = row.wanted;
    input.applied = &applied;
    input.current = row.current;
    input.objective = row.objective;
    input.hoursPerMonth = 730;
    input.replicas = 1;
    input.now = Timestamp(std::chrono::hours(500000));
    input.rolloutSlotFree = true;
    const auto gate = gateReplacement(input);
    CAPTURE(gate.message);
    CHECK(gate.verdict == row.verdict);
    CHECK(gate.message.find(row.message) != std::string::npos);
    CHECK(gate.monthlySaving == doctest::Approx(row.monthlySaving));
  }
}

TEST_CASE("applied repeats the placement fields only when the Deployment carries another") {
  Placement shown;
  shown.tier = Tier::NVIDIA;
  shown.instanceType = "g6.xlarge";
  shown.accelerator = "L4";
  shown.acceleratorCount = 1;
  AppliedRecord applied;
  applied.targetName = "chat";
  applied.instanceType = "g6.xlarge";
  applied.accelerator = "L4";
  applied.tier = Tier::NVIDIA;
  applied.acceleratorCount = 1;
  StatusView view;
  view.placement = shown;
  view.applied = applied;
  CHECK_FALSE(statusToJson(view)["applied"].contains("instanceType"));
  // A wanted placement the Deployment does not carry yet (a conflict, say).
  view.placement->instanceType = "inf2.xlarge";
  view.placement->tier = Tier::Inferentia;
  view.placement->accelerator = "Inferentia2";
  const auto json = statusToJson(view);
  CHECK(json["applied"]["instanceType"] == "g6.xlarge");
  CHECK(json["applied"]["accelerator"] == "L4");
  const auto read = workloadStatusFromJson(json);
  REQUIRE(read.applied.has_value());
  CHECK(read.applied->instanceType == "g6.xlarge");
  CHECK(read.applied->tier == Tier::NVIDIA);
}

TEST_CASE("applied names the target's kind; a status written before Jobs names a Deployment") {
  AppliedRecord applied;
  applied.targetKind = TargetKind::Job;
  applied.targetName = "llama-training";
  applied.targetGeneration = 3;
  applied.instanceType = "trn1.32xlarge";
  StatusView view;
  view.applied = applied;
  const auto written = statusToJson(view);
  CHECK(written["applied"]["targetKind"] == "Job");
  CHECK(written["applied"]["targetName"] == "llama-training");
  CHECK(written["applied"]["targetGeneration"] == 3);
  CHECK_FALSE(written["applied"].contains("deployment"));
  const auto read = workloadStatusFromJson(written);
  REQUIRE(read.applied.has_value());
  CHECK(read.applied->targetKind == TargetKind::Job);
  CHECK(read.applied->targetName == "llama-training");
  CHECK(read.applied->targetGeneration == 3);

  const auto legacy = workloadStatusFromJson(
      nlohmann::json::parse(R"({"applied": {"deployment": "chat", "deploymentGeneration": 7}})"));
  REQUIRE(legacy.applied.has_value());
  CHECK(legacy.applied->targetKind == TargetKind::Deployment);
  CHECK(legacy.applied->targetName == "chat");
  CHECK(legacy.applied->targetGeneration == 7);
}

TEST_CASE("a Job's run reads back as written") {
  StatusView view;
  view.run = JobRunRecord{"llama-training",
                          "2026-11-25T10:00:00Z",
                          "2026-11-25T12:30:00Z",
                          9000,
                          "Complete",
                          "trn1.32xlarge",
                          CapacityType::Spot,
                          2,
                          "16.9000",
                          "42.2500"};
  const auto written = statusToJson(view);
  CHECK(written["run"]["cost"] == "42.2500");
  CHECK(written["run"]["capacityType"] == "Spot");
  CHECK(workloadStatusFromJson(written).run == view.run);
}

}  // namespace gpuplacement::core
