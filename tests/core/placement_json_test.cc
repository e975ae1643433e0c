#include "core/explain/placement_json.h"

#include <set>
#include <string>

#include <doctest/doctest.h>

namespace gpuplacement::core {

using json = nlohmann::json;

namespace {

Placement servedOnL40S() {
  Placement p;
  p.tier = Tier::NVIDIA;
  p.accelerator = "L40S";
  p.instanceType = "g6e.xlarge";
  p.acceleratorCount = 1;
  p.acceleratorsPerInstance = 1;
  p.capacityType = CapacityType::OnDemand;
  p.hourlyCost = 1.861049;
  p.monthlyCost = 1358.565777;
  p.replicas = 2;
  p.totalHourlyCost = 3.722098;
  p.totalMonthlyCost = 2717.131554;
  p.requiredMemoryGiB = 20.5;
  p.availableMemoryGiB = 44.5;
  p.memoryFillLimit = 0.9;
  p.performance = 41.2345;
  p.performanceUnit = "tokens/s";
  p.nodeHourlyCost = 1.861049;
  p.nodes = 2;
  p.replicasPerNode = 1;
  p.costNote = "1 L40S on one g6e.xlarge";
  p.latencyMs = 24.2551;
  p.bandwidthUtilization = 0.654321;
  p.tokensPerSecondPerReplica = 330.04;
  p.replicasForThroughput = 3;
  p.timeToFirstTokenMs = 88.06;
  p.memoryRequestGiB = 12.346;
  p.neededAccelerators = 1;
  return p;
}

Placement onCpu() {
  Placement p;
  p.tier = Tier::CPU;
  p.instanceType = "m7i.2xlarge";
  p.hourlyCost = 0.4032;
  p.monthlyCost = 294.336;
  p.cpuRequest = 3.5;
  p.memoryRequestGiB = 6;
  return p;
}

std::set<std::string> keysOf(const json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) {
    keys.insert(key);
  }
  return keys;
}

}  // namespace

TEST_CASE(
    "a figure is written at one precision: a decimal string in the status, a number in "
    "the what-if answer") {
  const auto status = placementToJson(servedOnL40S(), PlacementView::Status);
  const auto whatIf = placementToJson(servedOnL40S(), PlacementView::WhatIf);
  struct Row {
    const char* key;
    const char* statusText;
    double number;
  };
  const Row rows[] = {
      {"hourlyCost", "1.861", 1.861},  // 1.861049 to four decimals
      {"monthlyCost", "1358.57", 1358.57},
      {"totalMonthlyCost", "2717.13", 2717.13},
      {"nodeHourlyCost", "1.861", 1.861},
      {"availableMemoryGiB", "44.5", 44.5},
      {"latencyMs", "24.26", 24.26},
      {"bandwidthUtilization", "0.65", 0.65},
      {"tokensPerSecondPerReplica", "330", 330.0},
      {"timeToFirstTokenMs", "88.1", 88.1},
      {"hostMemoryGiB", "12.35", 12.35},
  };
  for (const auto& row : rows) {
    CAPTURE(row.key);
    CHECK(status.at(row.key) == row.statusText);
    CHECK(whatIf.at(row.key).get<double>() == doctest::Approx(row.number).epsilon(1e-12));
  }
  CHECK(status.at("acceleratorsPerNode") == 1);
  CHECK(whatIf.at("acceleratorsPerNode") == 1);
  CHECK(status.at("latencyPer") == whatIf.at("latencyPer"));
}

TEST_CASE("the what-if answer holds every field of the status, and adds how the option compared") {
  for (const auto& placement : {servedOnL40S(), onCpu()}) {
    CAPTURE(nameOf(placement.tier));
    const auto status = keysOf(placementToJson(placement, PlacementView::Status));
    const auto whatIf = keysOf(placementToJson(placement, PlacementView::WhatIf));
    std::set<std::string> added;
    for (const auto& key : whatIf) {
      if (!status.contains(key)) {
        added.insert(key);
      }
    }
    for (const auto& key : status) {
      CAPTURE(key);
      CHECK(whatIf.contains(key));
    }
    std::set<std::string> comparison = {
        "totalHourlyCost",        "replicasPerNode", "requiredMemoryGiB", "memoryFillPercent",
        "memoryFillLimitPercent", "performance",     "performanceUnit"};
    if (placement.tier == Tier::CPU) {
      // No accelerator and no latency: left out of the status, null here.
      comparison.insert({"cpuRequest", "accelerator", "latencyMs"});
    } else {
      comparison.insert({"hourlyCostForThroughput", "neededAccelerators"});
    }
    CHECK(added == comparison);
  }
  const auto whatIf = placementToJson(servedOnL40S(), PlacementView::WhatIf);
  CHECK(whatIf.at("memoryFillPercent").get<double>() == doctest::Approx(46.1));  // 20.5 of 44.5
  CHECK(whatIf.at("memoryFillLimitPercent").get<double>() == 90);
  CHECK(whatIf.at("hourlyCostForThroughput").get<double>() == doctest::Approx(5.5831));
  const auto cpu = placementToJson(onCpu(), PlacementView::WhatIf);
  CHECK(cpu.at("accelerator").is_null());
  CHECK(cpu.at("latencyMs").is_null());
  CHECK(cpu.at("cpuRequest").get<double>() == 3.5);
  CHECK(cpu.at("memoryRequestGiB").get<double>() == 6);
  CHECK_FALSE(cpu.contains("hostMemoryGiB"));
}

TEST_CASE("an alternative: absent figures left out of the status, null in the what-if answer") {
  struct Row {
    const char* name;
    Alternative alternative;
    std::set<std::string> statusKeys;
    std::set<std::string> whatIfKeys;
  };
  const Row rows[] = {
      {"a tier passed over",
       {"", "", Tier::Trainium, 0, CapacityType::OnDemand, std::nullopt, "not allowed", "", 0},
       {"tier", "rejected"},
       {"tier", "rejected", "instanceType", "hourlyCost"}},
      {"an instance type that lost on cost",
       {"p4d.24xlarge", "A100", Tier::NVIDIA, 1, CapacityType::Spot, 4.1, "costs more", "1g.10gb",
        0},
       {"tier", "rejected", "instanceType", "hourlyCost", "acceleratorCount", "migProfile",
        "capacityType"},
       {"tier", "rejected", "instanceType", "hourlyCost", "acceleratorCount", "migProfile",
        "capacityType", "accelerator"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.name);
    const auto status = alternativeToJson(row.alternative, PlacementView::Status);
    const auto whatIf = alternativeToJson(row.alternative, PlacementView::WhatIf);
    CHECK(keysOf(status) == row.statusKeys);
    CHECK(keysOf(whatIf) == row.whatIfKeys);
    if (row.alternative.hourlyCost) {
      CHECK(status.at("hourlyCost") == "4.1");
      CHECK(whatIf.at("hourlyCost").get<double>() == doctest::Approx(4.1));
    } else {
      CHECK(whatIf.at("hourlyCost").is_null());
      CHECK(whatIf.at("instanceType").is_null());
    }
  }
}

}  // namespace gpuplacement::core
