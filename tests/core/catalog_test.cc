#include "core/catalog/catalog.h"

#include <doctest/doctest.h>

#include "core/catalog/rules.h"
#include "support/engine_fixture.h"
#include "support/why_not.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

// A minimal valid catalog; each bad case below breaks one thing in it.
json validCatalog() {
  return json::parse(R"({
    "version": 1,
    "accelerators": [
      {"name": "A10G", "vendor": "NVIDIA", "generation": "Ampere", "memoryGiB": 22.35,
       "ec2MemoryMiB": 22888, "fp16Tflops": 125, "memoryBandwidthGBs": 600,
       "precisions": ["fp32", "fp16", "bf16", "int8", "int4"], "karpenterName": "a10g",
       "gpuProduct": "NVIDIA-A10G"},
      {"name": "Trainium", "vendor": "AWS", "memoryGiB": 32, "fp16Tflops": 190,
       "memoryBandwidthGBs": 820, "precisions": ["fp32", "fp16", "bf16", "fp8", "int8"],
       "karpenterName": "trainium"}],
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
  for (const char* family :
       {"g4dn", "g5", "g6", "g6e", "g6f", "p3", "p4d", "p4de", "p5", "p5en", "p6-b200", "trn1",
        "trn1n", "trn2", "inf1", "inf2", "m5", "c5", "r5"}) {
    CAPTURE(std::string(family));
    CHECK(std::any_of(catalog.instances.begin(), catalog.instances.end(),
                      [&](const InstanceType& instance) { return instance.family == family; }));
  }
  // Every accelerator model the issues name is there.
  for (const char* model : {"T4", "A10G", "L4", "L40S", "V100", "A100-40GB", "A100-80GB", "H100",
                            "H200", "B200", "Trainium", "Trainium2", "Inferentia", "Inferentia2"}) {
    CAPTURE(std::string(model));
    CHECK(catalog.acceleratorIndex(model) >= 0);
  }
  // Shapes that are easy to get wrong.
  CHECK(catalog.find("inf2.8xlarge")->acceleratorCount == 1);
  CHECK(catalog.find("p6-b200.48xlarge")->acceleratorCount == 8);
  CHECK(catalog.find("g6e.xlarge")->memoryGiB == 32);
  CHECK(catalog.find("inf1.6xlarge")->acceleratorCount == 4);
  CHECK(catalog.find("g6f.xlarge")->memoryGiB == 16);
  // MIG: the GPUs that have it (NVIDIA's MIG user guide), smallest first.
  for (const auto& [model, smallest, largest] :
       {std::tuple{"A100-40GB", "1g.5gb", "7g.40gb"}, std::tuple{"A100-80GB", "1g.10gb", "7g.80gb"},
        std::tuple{"H100", "1g.10gb", "7g.80gb"}, std::tuple{"H200", "1g.18gb", "7g.141gb"},
        std::tuple{"B200", "1g.23gb", "7g.180gb"}}) {
    CAPTURE(std::string(model));
    const auto& profiles =
        catalog.accelerators[static_cast<std::size_t>(catalog.acceleratorIndex(model))].migProfiles;
    REQUIRE(profiles.size() == 6);
    CHECK(profiles.front().name == smallest);
    CHECK(profiles.front().perGpu == 7);
    CHECK(profiles.back().name == largest);
    CHECK(profiles.back().memoryEighths == 8);
  }
  for (const char* model : {"T4", "A10G", "L4", "L40S", "V100"}) {
    CAPTURE(std::string(model));
    CHECK(catalog.accelerators[static_cast<std::size_t>(catalog.acceleratorIndex(model))]
              .migProfiles.empty());
  }
}

TEST_CASE("prices are the dated AWS list, and the catalog says so") {
  const auto& catalog = *testing::shippedCatalog();
  CHECK(catalog.pricesAsOf == "2026-02-09");
  CHECK(catalog.pricesSource.find("zz_generated.pricing_aws.go") != std::string::npos);
  // [K] us-east-1 on-demand, 2026-02-09; the seeds' differing prices live in
  // config/examples/seed-prices-policy.yaml.
  const std::pair<const char*, double> prices[] = {
      {"g4dn.xlarge", 0.526},    {"p4d.24xlarge", 21.957642}, {"p5.48xlarge", 55.04},
      {"p5.4xlarge", 6.88},      {"trn1.2xlarge", 1.34375},   {"trn1.32xlarge", 21.50},
      {"inf2.xlarge", 0.7582},   {"inf2.8xlarge", 1.96786},   {"inf2.24xlarge", 6.49063},
      {"p3dn.24xlarge", 31.212}, {"inf1.xlarge", 0.228},      {"inf1.24xlarge", 4.721},
      {"g6f.xlarge", 0.2375},    {"g6f.4xlarge", 0.95},       {"g6e.xlarge", 1.861}};
  for (const auto& [type, price] : prices) {
    CAPTURE(std::string(type));
    CHECK(*catalog.find(type)->onDemand == doctest::Approx(price));
  }
  CHECK_FALSE(catalog.find("p5e.48xlarge")->onDemand.has_value());
  // One H100 costs the same per GPU on the big node as on the small one.
  CHECK(*catalog.find("p5.48xlarge")->onDemand / 8 ==
        doctest::Approx(*catalog.find("p5.4xlarge")->onDemand));
}

TEST_CASE("usable memory, native precisions and split counts per accelerator") {
  const auto& catalog = *testing::shippedCatalog();
  const auto spec = [&](const char* name) -> const AcceleratorSpec& {
    return catalog.accelerators[catalog.acceleratorIndex(name)];
  };
  struct Row {
    const char* accelerator;
    double usableGiB;  // nvidia-smi or EC2, whichever is lower
    std::vector<Precision> runs;
    std::vector<Precision> doesNotRun;
  };
  using P = Precision;
  const Row rows[] = {
      {"T4", 15, {P::FP16, P::INT8, P::INT4}, {P::BF16, P::FP8}},
      {"V100", 16, {P::FP16, P::INT8}, {P::BF16, P::FP8}},
      {"A10G", 22.35, {P::BF16, P::INT4}, {P::FP8}},
      {"A100-80GB", 80, {P::BF16, P::INT8}, {P::FP8}},
      {"L4", 22.35, {P::FP8, P::BF16}, {}},
      {"L40S", 44.7, {P::FP8}, {}},
      {"H100", 79.65, {P::FP8, P::INT4}, {}},
      {"H200", 140.4, {P::FP8}, {}},
      {"B200", 179.06, {P::FP8}, {}},
      {"Inferentia2", 32, {P::BF16, P::FP8, P::INT8}, {P::INT4}},
      {"Trainium", 32, {P::BF16, P::FP8}, {P::INT4}},
      {"Inferentia", 8, {P::FP16, P::BF16, P::INT8}, {P::FP8, P::INT4}},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.accelerator));
    CHECK(spec(row.accelerator).memoryGiB == doctest::Approx(row.usableGiB));
    for (Precision precision : row.runs) {
      CHECK(spec(row.accelerator).precisions.has(precision));
    }
    for (Precision precision : row.doesNotRun) {
      CHECK_FALSE(spec(row.accelerator).precisions.has(precision));
    }
  }
  // Karpenter's instance-gpu-memory tells the two A100s apart.
  CHECK(spec("A100-40GB").ec2MemoryMiB == 40960);
  CHECK(spec("A100-80GB").ec2MemoryMiB == 81920);
  CHECK(spec("L4-1/8").fractional);
  // Split counts: powers of two for NVIDIA, the Neuron rules per family.
  const std::pair<const char*, std::vector<int>> splits[] = {
      {"g4dn.12xlarge", {1, 2, 4}},     {"p5.48xlarge", {1, 2, 4, 8}},
      {"trn1.32xlarge", {1, 4, 8, 16}}, {"trn2.48xlarge", {1, 16}},
      {"inf2.24xlarge", {1, 2, 4, 6}},  {"inf2.48xlarge", {1, 2, 4, 8, 12}},
      {"inf1.24xlarge", {1}},           {"g5.xlarge", {1}}};
  for (const auto& [type, counts] : splits) {
    CAPTURE(std::string(type));
    CHECK(catalog.find(type)->allowedAcceleratorCounts == counts);
  }
}

TEST_CASE("every figure in the shipped catalog names its source") {
  const auto document = testing::shippedDocument("catalog.yaml");
  for (const auto& accelerator : document.at("accelerators")) {
    CAPTURE(accelerator.at("name").get<std::string>());
    for (const char* key : {"memory", "performance", "precisions"}) {
      CAPTURE(std::string(key));
      REQUIRE(accelerator.at("sources").contains(key));
      CHECK(accelerator.at("sources").at(key).get<std::string>().size() > 20);
    }
  }
  for (const auto& instance : document.at("instances")) {
    CAPTURE(instance.at("type").get<std::string>());
    for (const char* key : {"specs", "onDemand", "spot"}) {
      CAPTURE(std::string(key));
      REQUIRE(instance.at("sources").contains(key));
    }
    if (!instance.at("onDemand").is_null()) {
      // The dated AWS list, [K], is the source of every on-demand price.
      CHECK(instance.at("sources").at("onDemand").get<std::string>().find("[K]") !=
            std::string::npos);
    }
  }
}

TEST_CASE("allocatable CPU and memory follow EKS's reservations") {
  // Karpenter's instance-types reference: cpu and memory (Mi) by vCPUs and GiB.
  struct Row {
    int vcpus;
    double memoryGiB;
    double cpu;
    double memoryMiB;
  };
  const Row rows[] = {
      {2, 8, 1.93, 6903},        // 29 pods
      {4, 16, 3.92, 14162},      // inf2.xlarge, g6f.xlarge
      {8, 32, 7.91, 29317},      // h1.2xlarge
      {16, 64, 15.89, 57691},    // g6f.4xlarge
      {96, 384, 95.69, 355262},  // inf2.24xlarge
  };
  for (const auto& row : rows) {
    CAPTURE(row.vcpus);
    const auto allocatable = allocatableOf(row.vcpus, row.memoryGiB);
    CHECK(allocatable.cpu == doctest::Approx(row.cpu));
    CHECK(allocatable.memoryGiB * 1024 == doctest::Approx(row.memoryMiB).epsilon(1e-4));
  }
}

TEST_CASE("a valid catalog parses; entries are sorted and counts ordered") {
  auto catalog = parseCatalog(validCatalog());
  REQUIRE_MESSAGE(catalog.ok(), gpuplacement::testing::whyNot(catalog));
  CHECK(catalog->instances.front().type == "g5.xlarge");
  CHECK(catalog->instances.back().type == "trn1.32xlarge");
  CHECK(catalog->find("trn1.32xlarge")->allowedAcceleratorCounts == std::vector<int>{1, 4, 8, 16});
  CHECK_FALSE(catalog->find("g5.xlarge")->spot.has_value());
  CHECK(catalog->find("m5.xlarge")->cpuTflops == doctest::Approx(0.3));
  // Without a list, NVIDIA splits across powers of two.
  CHECK(catalog->find("g5.xlarge")->allowedAcceleratorCounts == std::vector<int>{1});
  CHECK(catalog->accelerators[0].precisions.has(Precision::BF16));
  CHECK_FALSE(catalog->accelerators[0].precisions.has(Precision::FP8));
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
      {"EFA without interfaces",
       [](json& c) {
         c["instances"][1]["efa"] = {{"networkGbps", 800}};
       },
       "instances[trn1.32xlarge].efa.interfaces", "required"},
      {"EFA without bandwidth",
       [](json& c) {
         c["instances"][1]["efa"] = {{"interfaces", 8}};
       },
       "instances[trn1.32xlarge].efa.networkGbps", "required"},
      {"EFA of a misspelt field",
       [](json& c) {
         c["instances"][1]["efa"] = {{"interfaces", 8}, {"gbps", 800}};
       },
       "instances[trn1.32xlarge].efa.gbps", "unknown field"},
      {"EFA not an object", [](json& c) { c["instances"][1]["efa"] = 8; },
       "instances[trn1.32xlarge].efa", "must be an object"},
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
      {"accelerator without precisions",
       [](json& c) { c["accelerators"][0]["precisions"] = json::array(); },
       "accelerators[A10G].precisions", "required"},
      {"unknown precision", [](json& c) { c["accelerators"][0]["precisions"] = {"fp4"}; },
       "accelerators[A10G].precisions[0]", "not a valid precision"},
      {"duplicate accelerator", [](json& c) { c["accelerators"].push_back(c["accelerators"][0]); },
       "accelerators[A10G]", "defined twice"},
      {"wrong version", [](json& c) { c["version"] = 2; }, "version", "between 1 and 1"},
      {"MIG profiles not a list", [](json& c) { c["accelerators"][0]["migProfiles"] = "1g.5gb"; },
       "accelerators[A10G].migProfiles", "must be a list"},
      {"a MIG profile that would hold more than one GPU",
       [](json& c) {
         c["accelerators"][0]["migProfiles"] = json::parse(
             R"([{"name": "2g.10gb", "memoryEighths": 2, "computeSevenths": 2, "perGpu": 4}])");
       },
       "accelerators[A10G].migProfiles[0].perGpu", "7 compute and 8 memory slices"},
      {"MIG profiles not smallest first",
       [](json& c) {
         c["accelerators"][0]["migProfiles"] = json::parse(
             R"([{"name": "2g.10gb", "memoryEighths": 2, "computeSevenths": 2, "perGpu": 3},
                 {"name": "1g.5gb", "memoryEighths": 1, "computeSevenths": 1, "perGpu": 7}])");
       },
       "accelerators[A10G].migProfiles[1].memoryEighths", "smallest first"},
      {"a MIG profile with a ninth of memory",
       [](json& c) {
         c["accelerators"][0]["migProfiles"] = json::parse(
             R"([{"name": "1g.5gb", "memoryEighths": 9, "computeSevenths": 1, "perGpu": 1}])");
       },
       "accelerators[A10G].migProfiles[0].memoryEighths", "between 1 and 8"},
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
  CHECK(rules.rules.size() >= 12);
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
      {"a bandwidth share above 1",
       [](json& r) {
         r["servingBandwidth"] = {{{"tier", "NVIDIA"}, {"utilization", 1.5}, {"source", "s"}}};
       },
       "servingBandwidth[0].utilization"},
      {"a bandwidth share without a source",
       [](json& r) {
         r["servingBandwidth"] = {{{"tier", "NVIDIA"}, {"utilization", 0.5}}};
       },
       "servingBandwidth[0].source"},
      {"a bandwidth share without a tier",
       [](json& r) {
         r["servingBandwidth"] = {{{"utilization", 0.5}, {"source", "s"}}};
       },
       "servingBandwidth[0].tier"},
      {"a bandwidth share for an unknown framework",
       [](json& r) {
         r["servingBandwidth"] = {{{"tier", "NVIDIA"},
                                   {"frameworks", {"Caffe"}},
                                   {"utilization", 0.5},
                                   {"source", "s"}}};
       },
       "servingBandwidth[0].frameworks[0]"},
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

TEST_CASE("the shipped rules' serving bandwidth: the first entry for a tier and framework") {
  const auto& knobs = testing::shippedRules()->knobs;
  struct Row {
    Tier tier;
    Framework framework;
    double utilization;
    bool assumed;
  };
  const Row rows[] = {
      {Tier::NVIDIA, Framework::vLLM, 0.65, false},
      {Tier::NVIDIA, Framework::Triton, 0.65, false},
      {Tier::NVIDIA, Framework::PyTorch, 0.35, false},
      {Tier::NVIDIA, Framework::ONNX, 0.35, false},
      {Tier::Inferentia, Framework::vLLM, 0.55, false},
      {Tier::Trainium, Framework::PyTorch, 0.55, true},
      {Tier::CPU, Framework::PyTorch, 0.5, true},
  };
  for (const auto& row : rows) {
    CAPTURE(static_cast<int>(row.tier));
    CAPTURE(static_cast<int>(row.framework));
    const auto* entry = knobs.servingBandwidthOf(row.tier, row.framework);
    REQUIRE(entry);
    CHECK(entry->utilization == doctest::Approx(row.utilization));
    CHECK(entry->assumed == row.assumed);
    CHECK_FALSE(entry->source.empty());
  }
}

}  // namespace gpuplacement::core
