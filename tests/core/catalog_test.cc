#include "core/catalog.h"

#include <doctest/doctest.h>

#include "core/rules.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

// A minimal valid catalog; each bad case below breaks one thing in it.
json validCatalog() {
  return json::parse(R"({
    "version": 1,
    "accelerators": [
      {"name": "A10G", "vendor": "NVIDIA", "memoryGiB": 22.35, "fp16Tflops": 125,
       "memoryBandwidthGBs": 600, "karpenterName": "a10g", "gpuProduct": "NVIDIA-A10G"},
      {"name": "Trainium", "vendor": "AWS", "memoryGiB": 32, "fp16Tflops": 190,
       "memoryBandwidthGBs": 820, "karpenterName": "trainium"}],
    "instances": [
      {"type": "g5.xlarge", "tier": "NVIDIA", "accelerator": "A10G", "acceleratorCount": 1,
       "vcpus": 4, "memoryGiB": 16, "onDemand": 1.006, "spot": null},
      {"type": "trn1.32xlarge", "tier": "Trainium", "accelerator": "Trainium",
       "acceleratorCount": 16, "allowedAcceleratorCounts": [16, 1, 8, 4], "vcpus": 128,
       "memoryGiB": 512, "onDemand": 21.5, "spot": 3.9},
      {"type": "m5.xlarge", "tier": "CPU", "vcpus": 4, "memoryGiB": 16, "onDemand": 0.192,
       "spot": 0.0678, "fp16Tflops": 0.3, "memoryBandwidthGBs": 20}]})");
}

}  // namespace

TEST_CASE("the shipped catalog parses and covers what EKS users pick from") {
  const auto& catalog = *testing::shippedCatalog();
  for (const char* family : {"g4dn", "g5", "g6", "g6e", "p3", "p4d", "p4de", "p5", "p5en",
                             "p6-b200", "trn1", "trn1n", "trn2", "inf2", "m5", "c5", "r5"}) {
    CAPTURE(std::string(family));
    CHECK(std::any_of(catalog.instances.begin(), catalog.instances.end(),
                      [&](const InstanceType& instance) { return instance.family == family; }));
  }
  // Every accelerator model the issue names is there.
  for (const char* model : {"T4", "A10G", "L4", "L40S", "V100", "A100-40GB", "A100-80GB", "H100",
                            "H200", "B200", "Trainium", "Trainium2", "Inferentia2"}) {
    CAPTURE(std::string(model));
    CHECK(catalog.acceleratorIndex(model) >= 0);
  }
  // Seed prices where the seeds give them; AWS's list elsewhere.
  CHECK(*catalog.find("g4dn.xlarge")->onDemand == doctest::Approx(0.526));
  CHECK(*catalog.find("p4d.24xlarge")->onDemand == doctest::Approx(32.77));
  CHECK(*catalog.find("p5.48xlarge")->onDemand == doctest::Approx(98.32));
  CHECK(*catalog.find("trn1.32xlarge")->onDemand == doctest::Approx(21.50));
  CHECK(*catalog.find("g6e.xlarge")->onDemand == doctest::Approx(1.861));
  CHECK_FALSE(catalog.find("p5e.48xlarge")->onDemand.has_value());
  // Shapes that are easy to get wrong.
  CHECK(catalog.find("inf2.8xlarge")->acceleratorCount == 1);
  CHECK(catalog.find("p6-b200.48xlarge")->acceleratorCount == 8);
  CHECK(catalog.find("g6e.xlarge")->memoryGiB == 32);
  CHECK(catalog.find("trn1.32xlarge")->allowedAcceleratorCounts == std::vector<int>{1, 4, 8, 16});
  CHECK(catalog.accelerators[catalog.acceleratorIndex("A10G")].memoryGiB == doctest::Approx(22.35));
}

TEST_CASE("a valid catalog parses; entries are sorted and counts ordered") {
  auto catalog = parseCatalog(validCatalog());
  REQUIRE_MESSAGE(catalog.ok(), catalog.error().describe());
  CHECK(catalog->instances.front().type == "g5.xlarge");
  CHECK(catalog->instances.back().type == "trn1.32xlarge");
  CHECK(catalog->find("trn1.32xlarge")->allowedAcceleratorCounts == std::vector<int>{1, 4, 8, 16});
  CHECK_FALSE(catalog->find("g5.xlarge")->spot.has_value());
  CHECK(catalog->find("m5.xlarge")->cpuTflops == doctest::Approx(0.3));
}

TEST_CASE("a malformed catalog is rejected, naming the entry and the field") {
  struct Case {
    const char* label;
    std::function<void(json&)> breakIt;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {"not an object", [](json& c) { c = json::array(); }, "catalog", "must be"},
      {"no instances", [](json& c) { c["instances"] = json::array(); }, "instances", "non-empty"},
      {"unknown top-level key", [](json& c) { c["instance"] = 1; }, "instance", "unknown field"},
      {"missing price key", [](json& c) { c["instances"][0].erase("onDemand"); },
       "instances[g5.xlarge].onDemand", "required"},
      {"negative price", [](json& c) { c["instances"][0]["onDemand"] = -1; },
       "instances[g5.xlarge].onDemand", "between 0"},
      {"price as text", [](json& c) { c["instances"][0]["spot"] = "cheap"; },
       "instances[g5.xlarge].spot", "not a non-negative decimal"},
      {"typo in a key", [](json& c) { c["instances"][0]["onDemmand"] = 1; },
       "instances[g5.xlarge].onDemmand", "unknown field"},
      {"unknown accelerator", [](json& c) { c["instances"][0]["accelerator"] = "A11G"; },
       "instances[g5.xlarge].accelerator", "not in the accelerators list"},
      {"tier mismatch", [](json& c) { c["instances"][0]["tier"] = "Trainium"; },
       "instances[g5.xlarge].tier", "does not match"},
      {"unknown tier", [](json& c) { c["instances"][0]["tier"] = "TPU"; },
       "instances[g5.xlarge].tier", "is not a valid tier"},
      {"zero accelerators", [](json& c) { c["instances"][0]["acceleratorCount"] = 0; },
       "instances[g5.xlarge].acceleratorCount", "between 1 and 64"},
      {"fractional vCPUs", [](json& c) { c["instances"][0]["vcpus"] = 2.5; },
       "instances[g5.xlarge].vcpus", "whole number"},
      {"allowed count too big",
       [](json& c) {
         c["instances"][1]["allowedAcceleratorCounts"] = {1, 32};
       },
       "instances[trn1.32xlarge].allowedAcceleratorCounts", "between 1 and acceleratorCount"},
      {"CPU with an accelerator", [](json& c) { c["instances"][2]["accelerator"] = "A10G"; },
       "instances[m5.xlarge].accelerator", "no accelerator"},
      {"CPU without estimates", [](json& c) { c["instances"][2].erase("fp16Tflops"); },
       "instances[m5.xlarge].fp16Tflops", "required"},
      {"duplicate type", [](json& c) { c["instances"].push_back(c["instances"][0]); },
       "instances[g5.xlarge]", "defined twice"},
      {"bad type name", [](json& c) { c["instances"][0]["type"] = "g5"; }, "instances[g5].type",
       "not an instance type"},
      {"missing type", [](json& c) { c["instances"][0].erase("type"); }, "instances[0].type",
       "required"},
      {"accelerator without memory", [](json& c) { c["accelerators"][0].erase("memoryGiB"); },
       "accelerators[A10G].memoryGiB", "required"},
      {"duplicate accelerator", [](json& c) { c["accelerators"].push_back(c["accelerators"][0]); },
       "accelerators[A10G]", "defined twice"},
      {"wrong version", [](json& c) { c["version"] = 2; }, "version", "between 1 and 1"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    json catalog = validCatalog();
    c.breakIt(catalog);
    auto parsed = parseCatalog(catalog);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().field == c.field);
    CHECK(parsed.error().message.find(c.message) != std::string::npos);
  }
}

TEST_CASE("the rules file: shipped rules parse; bad rules are named") {
  const auto& rules = *testing::shippedRules();
  CHECK(rules.rules.size() >= 14);
  CHECK(rules.rules.back().name == "any-accelerator");
  CHECK(rules.knobs.sizeBuckets.size() == 5);

  auto catalog = parseCatalog(validCatalog());
  REQUIRE(catalog.ok());
  const auto base = json::parse(R"({
    "sizeBuckets": [{"name": "small", "from": "0"}, {"name": "large", "from": "7B"}],
    "neuron": {"frameworks": ["PyTorch"], "architectures": ["Transformer"]},
    "rules": [{"name": "r", "reason": "x", "match": {"kinds": ["Inference"]},
               "candidates": {"tiers": ["NVIDIA"], "accelerators": ["A10G"]}}]})");
  REQUIRE(parseRuleSet(base, *catalog).ok());
  struct Case {
    const char* label;
    std::function<void(json&)> breakIt;
    const char* field;
  };
  const Case cases[] = {
      {"unknown accelerator",
       [](json& r) { r["rules"][0]["candidates"]["accelerators"] = {"TPUv5"}; },
       "rules[r].candidates.accelerators[0]"},
      {"unknown kind", [](json& r) { r["rules"][0]["match"]["kinds"] = {"Serving"}; },
       "rules[r].match.kinds[0]"},
      {"unknown size", [](json& r) { r["rules"][0]["match"]["sizes"] = {"huge"}; },
       "rules[r].match.sizes[0]"},
      {"no tiers", [](json& r) { r["rules"][0]["candidates"].erase("tiers"); },
       "rules[r].candidates.tiers"},
      {"no reason", [](json& r) { r["rules"][0].erase("reason"); }, "rules[r].reason"},
      {"duplicate rule", [](json& r) { r["rules"].push_back(r["rules"][0]); }, "rules[r]"},
      {"buckets descending", [](json& r) { r["sizeBuckets"][1]["from"] = "0"; },
       "sizeBuckets[1].from"},
      {"bad bound", [](json& r) { r["sizeBuckets"][1]["from"] = "lots"; }, "sizeBuckets[1].from"},
      {"unknown group", [](json& r) { r["rules"][0]["candidates"]["acceleratorGroup"] = "nope"; },
       "rules[r].candidates.acceleratorGroup"},
      {"typo in match", [](json& r) { r["rules"][0]["match"]["kind"] = {"Inference"}; },
       "rules[r].match.kind"},
      {"no rules", [](json& r) { r["rules"] = json::array(); }, "rules"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    json rulesJson = base;
    c.breakIt(rulesJson);
    auto parsed = parseRuleSet(rulesJson, *catalog);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().field == c.field);
  }
}

}  // namespace gpuplacement::core
