#include "core/intent/workload.h"

#include <functional>

#include <doctest/doctest.h>

#include "base/time_format.h"
#include "support/engine_fixture.h"
#include "support/why_not.h"

namespace gpuplacement::core {

using json = nlohmann::json;

namespace {

json fullSpec() {
  return json::parse(R"({
    "targetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama"},
    "containers": ["server"],
    "workload": {"kind": "Inference", "latencyTargetMs": 50},
    "model": {"parameters": "13B", "precision": "bf16", "framework": "PyTorch",
              "architecture": "Transformer"},
    "objective": "CostOptimized",
    "constraints": {"tiers": ["NVIDIA", "Inferentia"], "instanceTypes": ["g6e.xlarge", "inf2.xlarge"],
                    "excludedInstanceTypes": ["g5.xlarge"], "maxHourlyCost": "2.50",
                    "capacityType": "Any", "deadline": "2026-12-24T18:00:00Z",
                    "sharing": "None"},
    "policyRef": {"name": "team-a"},
    "mode": "Recommend"})");
}

}  // namespace

TEST_CASE("a GpuWorkload spec reads into an intent") {
  auto spec = parseGpuWorkloadSpec(fullSpec(), *testing::shippedCatalog());
  REQUIRE_MESSAGE(spec.ok(), gpuplacement::testing::whyNot(spec));
  CHECK(spec->targetRef.name == "llama");
  CHECK(spec->containers == std::vector<std::string>{"server"});
  CHECK(spec->intent.kind == WorkloadKind::Inference);
  CHECK(*spec->intent.latencyTargetMs == 50);
  CHECK(spec->intent.parameters == 13'000'000'000ULL);
  CHECK(spec->intent.precision == Precision::BF16);
  CHECK(spec->intent.objective == Objective::CostOptimized);
  CHECK(spec->intent.constraints.tiers.size() == 2);
  CHECK(*spec->intent.constraints.maxHourlyCost == doctest::Approx(2.5));
  CHECK(spec->intent.constraints.capacityType == CapacityType::Any);
  REQUIRE(spec->intent.constraints.deadline);
  CHECK(base::formatRfc3339(*spec->intent.constraints.deadline) == "2026-12-24T18:00:00Z");
  CHECK(spec->intent.constraints.sharing == DeviceSharing::None);
  CHECK(spec->policyName == "team-a");
  CHECK(spec->mode == PlacementMode::Recommend);
}

TEST_CASE("the targets: Deployments, StatefulSets and Jobs, the apiVersion following the kind") {
  struct Row {
    json targetRef;
    TargetKind kind;
  };
  const Row rows[] = {
      {{{"name", "d"}}, TargetKind::Deployment},
      {{{"kind", "StatefulSet"}, {"name", "d"}}, TargetKind::StatefulSet},
      {{{"apiVersion", "apps/v1"}, {"kind", "StatefulSet"}, {"name", "d"}},
       TargetKind::StatefulSet},
      {{{"kind", "Job"}, {"name", "d"}}, TargetKind::Job},
      {{{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "d"}}, TargetKind::Job},
  };
  for (const auto& row : rows) {
    CAPTURE(row.targetRef.dump());
    json spec = fullSpec();
    spec["targetRef"] = row.targetRef;
    const auto parsed = parseGpuWorkloadSpec(spec, *testing::shippedCatalog());
    REQUIRE_MESSAGE(parsed.ok(), gpuplacement::testing::whyNot(parsed));
    CHECK(parsed->targetRef.kind == row.kind);
    CHECK(parsed->targetRef.name == "d");
  }
}

TEST_CASE("defaults and the forms parameters take") {
  const json minimal = json::parse(R"({"targetRef": {"name": "d"}, "workload": {"kind": "training"},
                                       "model": {"parameters": 7000000000}})");
  auto spec = parseGpuWorkloadSpec(minimal, *testing::shippedCatalog());
  REQUIRE_MESSAGE(spec.ok(), gpuplacement::testing::whyNot(spec));
  CHECK(spec->intent.kind == WorkloadKind::Training);  // enums are case-insensitive
  CHECK(spec->intent.parameters == 7'000'000'000ULL);
  CHECK(spec->intent.precision == Precision::FP16);
  CHECK(spec->intent.objective == Objective::Balanced);
  CHECK(spec->intent.constraints.capacityType == CapacityType::OnDemand);
  CHECK(spec->policyName == "default");
  CHECK(spec->mode == PlacementMode::Apply);
  CHECK(spec->containers.empty());
  for (const json& parameters : {json("7B"), json("7e9"), json(7e9), json("7000000000")}) {
    json copy = minimal;
    copy["model"]["parameters"] = parameters;
    auto parsed = parseGpuWorkloadSpec(copy, *testing::shippedCatalog());
    REQUIRE(parsed.ok());
    CHECK(parsed->intent.parameters == 7'000'000'000ULL);
  }
}

TEST_CASE("bad specs: every error names its field") {
  struct Case {
    const char* label;
    std::function<void(json&)> breakIt;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"no target", [](json& s) { s.erase("targetRef"); }, "spec.targetRef", "required"},
      {"pod sets not a list", [](json& s) { s["targetRef"]["podSets"] = "workers"; },
       "spec.targetRef.podSets", "must be a list of strings"},
      {"a pod set without a name",
       [](json& s) {
         s["targetRef"]["podSets"] = {"gpu", ""};
       },
       "spec.targetRef.podSets[1]", "must name a pod set"},
      {"a pod set named twice",
       [](json& s) {
         s["targetRef"]["podSets"] = {"gpu", "gpu"};
       },
       "spec.targetRef.podSets[1]", "\"gpu\" is named twice"},
      {"DaemonSet", [](json& s) { s["targetRef"]["kind"] = "DaemonSet"; }, "spec.targetRef.kind",
       "places apps/v1 Deployment, apps/v1 StatefulSet, batch/v1 Job, ray.io/v1 RayCluster"},
      {"a Job under apps/v1",
       [](json& s) {
         s["targetRef"]["kind"] = "Job";
         s["targetRef"]["apiVersion"] = "apps/v1";
       },
       "spec.targetRef.apiVersion", "use batch/v1"},
      {"unknown kind", [](json& s) { s["workload"]["kind"] = "Serving"; }, "spec.workload.kind",
       "Training, FineTuning, Inference or BatchInference"},
      {"no kind", [](json& s) { s["workload"].erase("kind"); }, "spec.workload.kind", "required"},
      {"negative latency", [](json& s) { s["workload"]["latencyTargetMs"] = -5; },
       "spec.workload.latencyTargetMs", "between"},
      {"no parameters", [](json& s) { s["model"].erase("parameters"); }, "spec.model.parameters",
       "required"},
      {"malformed parameters", [](json& s) { s["model"]["parameters"] = "13 billion"; },
       "spec.model.parameters", "not a parameter count"},
      {"negative parameters", [](json& s) { s["model"]["parameters"] = -7; },
       "spec.model.parameters", "positive"},
      {"absurd parameters", [](json& s) { s["model"]["parameters"] = "500T"; },
       "spec.model.parameters", "larger than 100T"},
      {"parameters as a list", [](json& s) { s["model"]["parameters"] = {1}; },
       "spec.model.parameters", "must be a count"},
      {"unknown precision", [](json& s) { s["model"]["precision"] = "fp12"; },
       "spec.model.precision", "fp32, fp16, bf16, fp8, int8 or int4"},
      {"unknown framework", [](json& s) { s["model"]["framework"] = "Caffe"; },
       "spec.model.framework", "is not a valid framework"},
      {"unknown architecture", [](json& s) { s["model"]["architecture"] = "RNN"; },
       "spec.model.architecture", "is not a valid architecture"},
      {"unknown objective", [](json& s) { s["objective"] = "Fast"; }, "spec.objective",
       "CostOptimized, Balanced or MaxPerformance"},
      {"unknown tier", [](json& s) { s["constraints"]["tiers"] = {"TPU"}; },
       "spec.constraints.tiers[0]", "is not a valid tier"},
      {"unknown instance type", [](json& s) { s["constraints"]["instanceTypes"] = {"g9.xlarge"}; },
       "spec.constraints.instanceTypes[0]", "not an instance type of the catalog"},
      {"allowed and excluded",
       [](json& s) { s["constraints"]["excludedInstanceTypes"] = {"g6e.xlarge"}; },
       "spec.constraints.instanceTypes[0]", "both allowed and excluded"},
      {"type outside tiers", [](json& s) { s["constraints"]["tiers"] = {"NVIDIA"}; },
       "spec.constraints.instanceTypes[1]", "outside the allowed tiers"},
      {"zero budget", [](json& s) { s["constraints"]["maxHourlyCost"] = "0"; },
       "spec.constraints.maxHourlyCost", "between"},
      {"a deadline that is not a time",
       [](json& s) { s["constraints"]["deadline"] = "next Friday"; }, "spec.constraints.deadline",
       "must be an RFC 3339 time"},
      {"malformed budget", [](json& s) { s["constraints"]["maxHourlyCost"] = "$2"; },
       "spec.constraints.maxHourlyCost", "not a non-negative decimal"},
      {"unknown sharing", [](json& s) { s["constraints"]["sharing"] = "MIG"; },
       "spec.constraints.sharing", "Auto, None, Isolated or Any"},
      {"unknown capacity", [](json& s) { s["constraints"]["capacityType"] = "Cheap"; },
       "spec.constraints.capacityType", "OnDemand, Spot, Any, Mixed"},
      {"reserved is offered, not asked for",
       [](json& s) { s["constraints"]["capacityType"] = "Reserved"; },
       "spec.constraints.capacityType", "Reserved is not asked for: reserved nodes are offered"},
      {"unknown mode", [](json& s) { s["mode"] = "DryRun"; }, "spec.mode", "Apply or Recommend"},
      {"policyRef as text", [](json& s) { s["policyRef"] = "team-a"; }, "spec.policyRef",
       "must be an object"},
      {"typo", [](json& s) { s["objectve"] = "Balanced"; }, "spec.objectve", "unknown field"},
      {"containers not a list", [](json& s) { s["containers"] = "server"; }, "spec.containers",
       "list of strings"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    json spec = fullSpec();
    c.breakIt(spec);
    auto parsed = parseGpuWorkloadSpec(spec, *testing::shippedCatalog());
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().field == c.field);
    CHECK(parsed.error().message.find(c.message) != std::string::npos);
  }
}

}  // namespace gpuplacement::core
