// The decision framework against the catalog and rules that ship. Each row
// names the seed rule it checks; where the seed's own answer differs from
// ours, the comment says why ours is the one the catalog supports.
#include "core/decide/engine.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "core/decide/render.h"
#include "core/explain/decision_json.h"
#include "core/explain/explainer.h"
#include "support/engine_fixture.h"
#include "support/why_not.h"

namespace gpuplacement::core {
namespace {

using testing::IntentBuilder;
using testing::shippedEngine;
using A = Architecture;
using C = CapacityType;
using F = Framework;
using K = WorkloadKind;
using O = Objective;
using P = Precision;

struct Expected {
  const char* label;
  WorkloadIntent intent;
  const char* rule;
  const char* instanceType;
  int count;
  CapacityType capacity = C::OnDemand;
};

void checkRows(const std::vector<Expected>& rows, const PlacementEngine& engine) {
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(engine, row.intent);
    CHECK(decision.rule == row.rule);
    REQUIRE_MESSAGE(decision.placement.has_value(), decision.cannotPlace);
    CHECK(decision.placement->instanceType == row.instanceType);
    CHECK(decision.placement->acceleratorCount == row.count);
    CHECK(decision.placement->capacityType == row.capacity);
    CHECK(decision.memory.requiredGiB <=
          decision.placement->availableMemoryGiB * decision.placement->memoryFillLimit + 1e-9);
  }
}

}  // namespace

TEST_CASE("the engine weighs without words; the explainer reads what it weighed") {
  const auto engine = shippedEngine();
  const auto& costs = costModelFor(engine->policy().costModel);
  struct Row {
    const char* label;
    WorkloadIntent intent;
    bool placed;
  };
  const Row rows[] = {
      {"7B serving", IntentBuilder(K::Inference, "7B"), true},
      {"13B training", IntentBuilder(K::Training, "13B").precision(P::BF16), true},
      {"a latency target no option meets", IntentBuilder(K::Inference, "70B").latency(1), true},
      {"too large for any node", IntentBuilder(K::Training, "2T"), false},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const Weighing weighing = engine->weigh(row.intent, costs, nullptr);
    REQUIRE(weighing.placed() == row.placed);
    const Decision decision = explain(*engine, weighing);
    CHECK(decision.reason == decide(*engine, row.intent).reason);
    if (!row.placed) {
      CHECK(weighing.evaluation.feasible.empty());
      CHECK_FALSE(decision.cannotPlace.empty());
      continue;
    }
    CHECK(decision.rule == weighing.rule->name);
    const Option& best = weighing.best();
    CHECK(decision.placement->instanceType == engine->catalog().instances[best.instance].type);
    CHECK(decision.placement->acceleratorCount == best.fit.devices);
    // Ranked best first: no option after the best beats it.
    for (const Option& other : weighing.evaluation.feasible) {
      CHECK_FALSE(better(other, best));
    }
    // The ranking against a brute force: each instance type's best option
    // once, and the first kRunnersUp + 1 of those in order.
    const auto& feasible = weighing.evaluation.feasible;
    std::map<int, const Option*> bestOfType;
    for (const Option& option : feasible) {
      auto& kept = bestOfType[option.instance];
      if (!kept || better(option, *kept)) {
        kept = &option;
      }
    }
    std::vector<const Option*> expected;
    for (const auto& [instance, option] : bestOfType) {
      expected.push_back(option);
    }
    std::sort(expected.begin(), expected.end(),
              [](const Option* a, const Option* b) { return better(*a, *b); });
    const auto& ranked = weighing.evaluation.ranked;
    REQUIRE(ranked.size() == expected.size());
    CHECK(expected.size() > kRunnersUp);  // enough types to order a head and leave a tail
    for (std::size_t i = 0; i < ranked.size(); ++i) {
      CAPTURE(i);
      if (i <= kRunnersUp) {
        CHECK(&feasible[ranked[i]] == expected[i]);
      } else {
        CHECK(bestOfType.at(feasible[ranked[i]].instance) == &feasible[ranked[i]]);
      }
    }
  }
}

TEST_CASE("seed 002 decision trees, rule by rule") {
  const auto engine = shippedEngine();
  const std::vector<Expected> rows = {
      // T1 / H1: large training, budget conscious, PyTorch -> Trainium is a
      // candidate and wins on price: 218 GiB needs 8 chips within the 90%
      // fill limit; a whole trn1.32xlarge costs $21.50/h against $21.96/h
      // for p4d's eight A100-40GBs, and the replica trains data-parallel on
      // all 16 chips it pays for.
      {"T1 large cost PyTorch",
       IntentBuilder(K::Training, "13B").precision(P::BF16).objective(O::CostOptimized),
       "large-model-training-cost", "trn1.32xlarge", 16},
      // ...and at 117 GiB (five chips, split as eight) the same node, all 16.
      {"T1 7B", IntentBuilder(K::Training, "7B").precision(P::BF16).objective(O::CostOptimized),
       "large-model-training-cost", "trn1.32xlarge", 16},
      // T2: maximum performance -> the fastest training accelerator (the seed
      // predates B200 and names H100), every device of the node.
      {"T2 max performance",
       IntentBuilder(K::Training, "13B").precision(P::BF16).objective(O::MaxPerformance),
       "large-model-training", "p6-b200.48xlarge", 8},
      // T3: balanced -> most sustained TFLOPS per dollar of the whole node.
      // The seed (which predates B200) names p4d; by the datasheets eight
      // B200s give 54 sustained TFLOPS a dollar-hour, eight A100s 39.
      {"T3 balanced", IntentBuilder(K::Training, "13B").precision(P::BF16).objective(O::Balanced),
       "large-model-training", "p6-b200.48xlarge", 8},
      // T5: medium, cost optimization; 45 GiB needs three L4s, split as four.
      // T4s are cheaper but do not run bf16.
      {"T5 medium cost",
       IntentBuilder(K::Training, "3B").precision(P::BF16).objective(O::CostOptimized),
       "medium-model-training", "g6.12xlarge", 4},
      // T6: framework flexibility (JAX: no Neuron) -> one H100 holds 45 GiB.
      {"T6 medium JAX balanced",
       IntentBuilder(K::Training, "3B").precision(P::BF16).framework(F::JAX),
       "medium-model-training", "p5.4xlarge", 1},
      // T8: a small non-neural model trains on CPU, on the smallest node that
      // holds two vCPUs (a 2-vCPU node has 1.93 allocatable).
      {"T8 CPU-only model",
       IntentBuilder(K::Training, "50M")
           .precision(P::FP32)
           .architecture(A::Other)
           .objective(O::CostOptimized),
       "cpu-only-training", "c5.xlarge", 0},
      // Y1: small training -> the seed's T4 cannot run bf16; an L4 can.
      {"Y1 small training",
       IntentBuilder(K::Training, "500M").precision(P::BF16).objective(O::CostOptimized),
       "small-model-training", "g6.xlarge", 1},
      // I1: transformer + cost focus -> Inferentia2 competes and wins: a T4's
      // 15 GiB holds 13.5 within the fill limit, not the 15.6 GiB needed.
      {"I1 transformer cost", IntentBuilder(K::Inference, "7B").objective(O::CostOptimized),
       "transformer-inference-cost", "inf2.xlarge", 1},
      {"I1 transformer cost spot",
       IntentBuilder(K::Inference, "7B").objective(O::CostOptimized).capacity(C::Spot),
       "transformer-inference-cost", "inf2.xlarge", 1, C::Spot},
      // I2: mixed model types -> NVIDIA.
      {"I2 diffusion",
       IntentBuilder(K::Inference, "3B").architecture(A::Diffusion).objective(O::CostOptimized),
       "mixed-model-inference", "g4dn.xlarge", 1},
      // I3: real-time -> NVIDIA. Whisper's encoder is compute-bound: 2.25
      // TFLOPs a 30-second window take 87 ms on a T4 and 186 on a quarter
      // L4 at 40% of peak; a whole L4 does it in 46 ms.
      {"I3 real-time speech",
       IntentBuilder(K::Inference, "1.5B")
           .architecture(A::Speech)
           .latency(80)
           .objective(O::CostOptimized),
       "mixed-model-inference", "g6.xlarge", 1},
      // I4: simple models -> CPU.
      {"I4 simple model", IntentBuilder(K::Inference, "110M").objective(O::CostOptimized),
       "small-model-inference", "c5.xlarge", 0},
      // L1: sub-10 ms, at what serving stacks reach of peak bandwidth
      // (rules servingBandwidth). A PyTorch server decoding eagerly gets 35%
      // of an H100's: 11 ms, too slow; the six Inferentia2 of an
      // inf2.24xlarge over NeuronLink, at the 55% AWS's published figures
      // give, about 7.5 ms for $6.49/h. On NVIDIA alone, vLLM's CUDA graphs
      // reach 65%: one H100, 6.4 ms, $6.88/h.
      {"L1 sub-10ms", IntentBuilder(K::Inference, "7B").latency(8).objective(O::CostOptimized),
       "transformer-inference-cost", "inf2.24xlarge", 6},
      {"L1 sub-10ms on vLLM, NVIDIA only",
       IntentBuilder(K::Inference, "7B")
           .latency(8)
           .objective(O::CostOptimized)
           .framework(F::vLLM)
           .tiers({Tier::NVIDIA}),
       "transformer-inference-cost", "p5.4xlarge", 1},
      // L2: cost-optimized low latency -> Inferentia2 meets 50 ms (34 ms at
      // half its peak bandwidth).
      {"L2 cost-optimized low latency",
       IntentBuilder(K::Inference, "7B").latency(50).objective(O::CostOptimized),
       "transformer-inference-cost", "inf2.xlarge", 1},
      // L4: batch -> any accelerator; batches are compute-bound, so the most
      // sustained TFLOPS per dollar at spot: one L40S holds 29 GiB.
      {"L4 batch", IntentBuilder(K::BatchInference, "13B").capacity(C::Spot), "batch-inference",
       "g6e.2xlarge", 1, C::Spot},
      // Y3 / H2: 10B+ training -> training-class cards, never G-series:
      // 298 GiB needs 11 Trainium chips, split as 16.
      {"Y3 20B cost",
       IntentBuilder(K::Training, "20B").precision(P::BF16).objective(O::CostOptimized),
       "large-model-training-cost", "trn1.32xlarge", 16},
      // Y4: 70B+ -> only eight B200s hold 1,044 GiB within the fill limit
      // (eight H200s offer 1,011).
      {"Y4 70B", IntentBuilder(K::Training, "70B").precision(P::BF16).objective(O::CostOptimized),
       "large-model-training-cost", "p6-b200.48xlarge", 8},
      // H3: <= 10B -> small GPUs.
      {"H3 small balanced", IntentBuilder(K::Training, "700M").precision(P::BF16),
       "small-model-training", "g6e.xlarge", 1},
  };
  checkRows(rows, *engine);
}

TEST_CASE("G-series never trains large models (seed 004)") {
  const auto engine = shippedEngine();
  for (auto objective : {O::CostOptimized, O::Balanced, O::MaxPerformance}) {
    for (const char* size : {"7B", "13B", "34B"}) {
      CAPTURE(std::string(size));
      const auto decision =
          decide(*engine, IntentBuilder(K::Training, size).precision(P::BF16).objective(objective));
      REQUIRE(decision.placement);
      CHECK(decision.placement->instanceType[0] != 'g');
    }
  }
}

TEST_CASE("seed 001 right-sizing: Whisper and Llama") {
  // Seed 001 lists a minimum VRAM per model (the reference implementations'
  // figures) and the GPU it calls optimal. Our memory model (parameters x
  // bytes x 1.2) needs less than those figures; a team that runs the
  // reference code sets the inference overhead to match, and then every
  // answer offers at least the seed's VRAM within the fill limit.
  struct Row {
    const char* model;
    const char* parameters;
    double seedMinVramGB;
    const char* seedOptimal;
    const char* ours;        // with the default overhead
    const char* oursAtSeed;  // with the overhead that reaches the seed's VRAM
  };
  const Row rows[] = {
      {"Whisper Tiny", "39M", 1, "T4", "L4-1/8", "L4-1/8"},
      {"Whisper Base", "74M", 1, "T4", "L4-1/8", "L4-1/8"},
      {"Whisper Small", "244M", 2, "T4", "L4-1/8", "L4-1/8"},
      // From Medium up the encoder's arithmetic binds: 1.15 TFLOPs a window
      // take 191 ms on an eighth of an L4 and 44 on a T4 (at 40% of peak),
      // so the seed's T4 is what meets 90 ms, whatever the memory.
      {"Whisper Medium", "769M", 5, "T4", "T4", "T4"},
      {"Whisper Large-v2", "1.55B", 10, "T4", "T4", "T4"},
      // The seed says A10G; a T4 meets 90 ms (87 ms) for half the price.
      {"Whisper Large-v3", "1.55B", 10, "A10G", "T4", "T4"},
      // "T4 / A10G": 15.6 GiB does not fit a T4's 15 GiB within the fill
      // limit; half an L4 is too small; one L4 holds it but, decoding
      // eagerly at 35% of its 300 GB/s, takes 133 ms a token: the A10G
      // (67 ms) meets 90 ms, as the seed's second answer says.
      {"Llama 7B FP16", "7B", 14, "T4", "A10G", "A10G"},
      // "A10G (need 2x)": one L40S (44.7 GiB) is cheaper than two A10Gs.
      {"Llama 13B FP16", "13B", 26, "A10G", "L40S", "L40S"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.model));
    // Real-time speech and chat on GPUs, as in the seed's use cases.
    const auto architecture =
        std::string(row.model).rfind("Whisper", 0) == 0 ? A::Speech : A::Transformer;
    const WorkloadIntent intent = IntentBuilder(K::Inference, row.parameters)
                                      .architecture(architecture)
                                      .latency(90)
                                      .objective(O::CostOptimized)
                                      .tiers({Tier::NVIDIA});
    const auto ours = decide(*shippedEngine(), intent);
    REQUIRE(ours.placement);
    CHECK(ours.placement->accelerator == row.ours);

    Policy seedVram;
    const double seedGiB = row.seedMinVramGB / 1.073741824;
    seedVram.memoryOverheads.inference = std::max(1.2, seedGiB / ours.memory.weightsGiB);
    const auto atSeed = decide(*shippedEngine(seedVram), intent);
    REQUIRE(atSeed.placement);
    CHECK(atSeed.placement->accelerator == row.oursAtSeed);
    CHECK(atSeed.placement->availableMemoryGiB * atSeed.placement->memoryFillLimit >=
          seedGiB - 1e-9);
  }
}

TEST_CASE("seed 003 size categories and their memory") {
  // Seed 003's examples, put in our buckets. It files GPT-2 Large and
  // BERT-Large under 1-7B and GPT-3 under 20-70B; their parameter counts
  // (774M, 340M, 175B) say otherwise.
  struct Row {
    const char* model;
    const char* parameters;
    const char* bucket;
  };
  const Row rows[] = {
      {"DistilBERT", "66M", "small"},  {"GPT-2 Small", "124M", "small"},
      {"BERT-Large", "340M", "small"}, {"GPT-2 Large", "774M", "small"},
      {"GPT-J", "6B", "medium"},       {"Llama-7B", "7B", "large"},
      {"Llama-13B", "13B", "large"},   {"Llama-65B", "65B", "xlarge"},
      {"Llama-70B", "70B", "ultra"},   {"GPT-3", "175B", "ultra"},
  };
  const auto engine = shippedEngine();
  for (const auto& row : rows) {
    CAPTURE(std::string(row.model));
    const auto decision = decide(*engine, IntentBuilder(K::Inference, row.parameters));
    CHECK(decision.sizeBucket == row.bucket);
  }
  // The table's memory columns at the category bounds: FP16 is 2 bytes and
  // FP32 4 bytes per parameter (1B: 2/4 GB, 7B: 14/28 GB, 20B: 40/80 GB,
  // 70B: 140/280 GB).
  const std::pair<const char*, double> bounds[] = {
      {"1B", 2}, {"7B", 14}, {"20B", 40}, {"70B", 140}};
  for (const auto& [parameters, fp16GB] : bounds) {
    CAPTURE(std::string(parameters));
    const auto fp16 = estimateMemory(IntentBuilder(K::Inference, parameters), {});
    const auto fp32 =
        estimateMemory(IntentBuilder(K::Inference, parameters).precision(P::FP32), {});
    CHECK(fp16.weightsGiB * 1.073741824 == doctest::Approx(fp16GB));
    CHECK(fp32.weightsGiB * 1.073741824 == doctest::Approx(2 * fp16GB));
  }
}

TEST_CASE("seed 004 precision example: 35B is 140/70/70/35/35 GB") {
  const std::pair<Precision, double> rows[] = {{P::FP32, 140}, {P::FP16, 70}, {P::BF16, 70},
                                               {P::FP8, 35},   {P::INT8, 35}, {P::INT4, 17.5}};
  for (const auto& [precision, gigabytes] : rows) {
    CAPTURE(std::string(nameOf(precision)));
    const auto memory = estimateMemory(IntentBuilder(K::Inference, "35B").precision(precision), {});
    CHECK(memory.weightsGiB * 1.073741824 == doctest::Approx(gigabytes));
    CHECK(memory.requiredGiB == doctest::Approx(memory.weightsGiB * 1.2));
  }
  // Overheads per kind come from the policy. Training's applies to 2 bytes
  // a parameter whatever the precision: Adam's state is the same 16 bytes
  // for an fp32 model as for a bf16 one.
  Policy policy;
  policy.memoryOverheads.training = 4;
  for (const auto precision : {P::FP32, P::BF16, P::FP8}) {
    CAPTURE(std::string(nameOf(precision)));
    const auto training = estimateMemory(IntentBuilder(K::Training, "35B").precision(precision),
                                         policy.memoryOverheads);
    CHECK(training.overhead == 4);
    CHECK(training.requiredGiB * 1.073741824 == doctest::Approx(280));
    CHECK(std::string(training.method) == "full training with Adam");
  }
  // The default: 16 bytes of state and 2 of activations a parameter.
  const auto standard = estimateMemory(IntentBuilder(K::Training, "7B").precision(P::FP32), {});
  CHECK(standard.requiredGiB * 1.073741824 == doctest::Approx(7 * 18));
  // Fine-tuning over a quantized base is QLoRA, sized on the base's bytes.
  const auto qlora = estimateMemory(IntentBuilder(K::FineTuning, "70B").precision(P::INT4), {});
  CHECK(std::string(qlora.method).rfind("QLoRA", 0) == 0);
  CHECK(qlora.requiredGiB * 1.073741824 == doctest::Approx(35 * 1.5));
}

TEST_CASE("cannot place names the binding constraint") {
  const auto engine = shippedEngine();
  Policy karpenterPolicy;
  karpenterPolicy.labelScheme = LabelScheme::Karpenter;
  const auto karpenter = shippedEngine(karpenterPolicy);
  struct Row {
    const char* label;
    WorkloadIntent intent;
    const char* message;
    const PlacementEngine* engine = nullptr;
  };
  const Row rows[] = {
      // 350B x 2 B x 9 = 5,868 GiB; eight B200s hold 8 x 179.06 x 90% = 1,290.
      {"too big for any node", IntentBuilder(K::Training, "350B").precision(P::BF16),
       "cannot place on one node: needs 5,868 GiB; the largest eligible node, "
       "p6-b200.48xlarge, offers 1,290 GiB within the 90% fill limit (8x B200 of 179.06 GiB); "
       "5 nodes of p6-b200.48xlarge joined by EFA would hold one replica, and the target's pods "
       "are each a replica (a Deployment, StatefulSet or Job): run it as a kind whose pods form "
       "a group"},
      {"budget", IntentBuilder(K::Inference, "7B").maxHourlyCost(0.3),
       "the cheapest placement that fits, inf2.xlarge (1x Inferentia2) on-demand, costs "
       "$0.7582/h per replica, above maxHourlyCost $0.30/h"},
      {"no spot price", IntentBuilder(K::Inference, "7B").only({"p5.4xlarge"}).capacity(C::Spot),
       "no eligible instance type has a spot price"},
      {"no on-demand price",
       IntentBuilder(K::Training, "70B").precision(P::BF16).only({"trn2.48xlarge"}),
       "no eligible instance type has an on-demand price"},
      {"tier outside the rules", IntentBuilder(K::Inference, "7B").tiers({Tier::Trainium}),
       "Trainium is for training, and serves only a model no Inferentia2 node holds"},
      {"Neuron framework",
       IntentBuilder(K::Inference, "7B").framework(F::JAX).tiers({Tier::Inferentia}),
       "Inferentia: the Neuron SDK does not support framework JAX"},
      // 671 GiB; sixteen Trainium chips hold 16 x 32 x 90% = 461.
      {"Trainium topology",
       IntentBuilder(K::Training, "40B").precision(P::BF16).only({"trn1.32xlarge"}),
       "needs 671 GiB; the largest eligible node, trn1.32xlarge, offers 461 GiB within the 90% "
       "fill limit (16x Trainium of 32 GiB); 2 nodes of trn1.32xlarge joined by EFA would hold "
       "one replica"},
      {"precision", IntentBuilder(K::Inference, "3B").precision(P::FP8).only({"p4de.24xlarge"}),
       "no eligible accelerator runs the precision: A100-80GB (Ampere) does not run fp8 natively"},
      {"int4 on Neuron",
       IntentBuilder(K::Inference, "7B").precision(P::INT4).tiers({Tier::Inferentia}),
       "Inferentia2 (NeuronCore-v2), Inferentia (NeuronCore-v1) do not run int4 natively"},
      {"fractional GPUs under Karpenter",
       IntentBuilder(K::Inference, "1B").architecture(A::Speech).only({"g6f.xlarge"}),
       "fractional GPUs, which Karpenter never launches", karpenter.get()},
      // The user's tiers are tried, and the message names the rule and its limit.
      {"CPU too small", IntentBuilder(K::Inference, "405B").tiers({Tier::CPU}),
       "cannot place on one node: needs 906 GiB; the largest eligible node, r5.8xlarge"},
      {"CPU rule limit", IntentBuilder(K::Inference, "405B").tiers({Tier::CPU}),
       "small-model-inference offers CPU for sizes small only (this workload: ultra)"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(row.engine ? *row.engine : *engine, row.intent);
    CAPTURE(decision.cannotPlace);
    CHECK_FALSE(decision.placement.has_value());
    CHECK(decision.cannotPlace.find(row.message) != std::string::npos);
    CHECK_FALSE(decision.ruleSource.empty());
    CHECK(std::string(decision.placedReason()) == "CannotPlace");
    CHECK(decision.reason.rfind("cannot place: ", 0) == 0);
    const auto json = toJson(decision, nullptr);
    CHECK(json.at("placement").is_null());
  }
}

TEST_CASE("each constraint narrows the choice") {
  const auto engine = shippedEngine();
  const WorkloadIntent base = IntentBuilder(K::Inference, "7B").objective(O::CostOptimized);

  SUBCASE("tiers") {
    auto intent = base;
    intent.constraints.tiers = {Tier::NVIDIA};
    const auto decision = decide(*engine, intent);
    REQUIRE(decision.placement);
    CHECK(decision.placement->tier == Tier::NVIDIA);
    CHECK(decision.placement->instanceType == "g6.xlarge");
  }
  SUBCASE("allowed instance types") {
    auto intent = base;
    intent.constraints.instanceTypes = {"g5.xlarge", "g6e.xlarge"};
    const auto decision = decide(*engine, intent);
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == "g5.xlarge");
  }
  SUBCASE("excluded instance types") {
    auto intent = base;
    intent.constraints.excludedInstanceTypes = {"inf2.xlarge"};
    const auto decision = decide(*engine, intent);
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == "g6.xlarge");
  }
  SUBCASE("maximum hourly cost") {
    auto intent = IntentBuilder(K::Inference, "13B").objective(O::MaxPerformance).maxHourlyCost(3);
    const auto decision = decide(*engine, intent);
    REQUIRE(decision.placement);
    CHECK(decision.placement->hourlyCost <= 3);
    const auto unconstrained =
        decide(*engine, IntentBuilder(K::Inference, "13B").objective(O::MaxPerformance));
    CHECK(unconstrained.placement->hourlyCost > 3);
  }
  SUBCASE("capacity: spot, on-demand, any") {
    auto spot = base;
    spot.constraints.capacityType = C::Spot;
    auto any = base;
    any.constraints.capacityType = C::Any;
    const auto onDemand = decide(*engine, base);
    const auto spotDecision = decide(*engine, spot);
    const auto anyDecision = decide(*engine, any);
    REQUIRE(onDemand.placement);
    REQUIRE(spotDecision.placement);
    REQUIRE(anyDecision.placement);
    CHECK(onDemand.placement->capacityType == C::OnDemand);
    CHECK(spotDecision.placement->capacityType == C::Spot);
    // Online serving on Any stays on demand unless the policy allows spot,
    // and says so; batch work, and serving so allowed, takes the cheaper.
    CHECK(anyDecision.placement->capacityType == C::OnDemand);
    CHECK(anyDecision.reason.find("spot not considered: online serving") != std::string::npos);
    Policy spotServing;
    spotServing.capacity.spotForServing = true;
    const auto allowed = decide(*shippedEngine(spotServing), any);
    REQUIRE(allowed.placement);
    CHECK(allowed.placement->hourlyCost ==
          std::min(onDemand.placement->hourlyCost, spotDecision.placement->hourlyCost));
    CHECK(allowed.reason.find("interrupted with two minutes' notice: the policy allows spot") !=
          std::string::npos);
    auto batch = any;
    batch.kind = K::BatchInference;
    const auto batchDecision = decide(*engine, batch);
    REQUIRE(batchDecision.placement);
    CHECK(batchDecision.placement->capacityType == C::Spot);
  }
  SUBCASE("replicas multiply the total, not the per-replica cost") {
    auto intent = base;
    intent.replicas = 3;
    const auto one = decide(*engine, base);
    const auto three = decide(*engine, intent);
    REQUIRE(three.placement);
    CHECK(three.placement->hourlyCost == one.placement->hourlyCost);
    CHECK(three.placement->totalHourlyCost == doctest::Approx(3 * one.placement->hourlyCost));
    CHECK(three.placement->totalMonthlyCost ==
          doctest::Approx(3 * 730 * one.placement->hourlyCost));
  }
}

TEST_CASE("Neuron device counts follow the topology rules") {
  // Shares of a node, so more devices than the model needs cost more and
  // the fewest allowed split is what each row shows.
  Policy shared;
  shared.costModel = CostModel::AcceleratorShare;
  const auto engine = shippedEngine(shared);
  struct Row {
    const char* parameters;
    const char* type;
    int count;
  };
  // Training bf16 x 8: 1B -> 14.9 GiB, 2B -> 29.8, 3B -> 44.7, 9B -> 134.1.
  const Row rows[] = {
      {"1B", "trn1.32xlarge", 1},   // 1 chip
      {"3B", "trn1.32xlarge", 4},   // 2 chips needed; trn1 allows 1, 4, 8, 16
      {"9B", "trn1.32xlarge", 8},   // 5 needed -> 8
      {"3B", "inf2.48xlarge", 2},   // Inferentia2: powers of two and the whole node
      {"70B", "inf2.24xlarge", 6},  // 157 GiB needs 5 devices: not a split; the whole node
      {"70B", "inf2.48xlarge", 8},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.parameters));
    CAPTURE(std::string(row.type));
    const bool inference = std::string(row.type).rfind("inf2", 0) == 0;
    auto intent = IntentBuilder(inference ? K::Inference : K::Training, row.parameters)
                      .precision(inference ? P::FP16 : P::BF16)
                      .only({row.type});
    if (inference && std::string(row.parameters) == "3B") {
      intent.intent.parameters = 9'000'000'000ULL;  // 9B fp32 x 1.2 = 40.2 GiB -> 2 devices
      intent.intent.precision = P::FP32;
    }
    const auto decision = decide(*engine, intent);
    REQUIRE_MESSAGE(decision.placement.has_value(), decision.cannotPlace);
    CHECK(decision.placement->acceleratorCount == row.count);
  }
  // Whole nodes: a lone training replica trains data-parallel on all the
  // chips it pays for (1B needs one).
  const auto whole =
      decide(*shippedEngine(),
             IntentBuilder(K::Training, "1B").precision(P::BF16).only({"trn1.32xlarge"}));
  REQUIRE(whole.placement);
  CHECK(whole.placement->acceleratorCount == 16);
  CHECK(whole.placement->neededAccelerators == 1);
  CHECK(whole.placement->idleAccelerators == 0);
  CHECK(whole.reason.find("data-parallel across all 16 Trainium (the model needs 1)") !=
        std::string::npos);
  // trn2: one device or all sixteen (given a price, since none is published).
  Policy priced;
  priced.prices["trn2.48xlarge"] = PriceOverride{40.0, std::nullopt};
  const auto trn2 =
      decide(*shippedEngine(priced),
             IntentBuilder(K::Training, "9B").precision(P::BF16).only({"trn2.48xlarge"}));
  REQUIRE(trn2.placement);
  CHECK(trn2.placement->acceleratorCount == 16);
  CHECK(trn2.placement->hourlyCost == doctest::Approx(40.0));
}

TEST_CASE("policy prices and disabled types change the answer; Neuron is never assumed cheaper") {
  const WorkloadIntent intent = IntentBuilder(K::Inference, "7B").objective(O::CostOptimized);
  REQUIRE(decide(*shippedEngine(), intent).placement->instanceType == "inf2.xlarge");
  Policy cheaperL4;
  cheaperL4.prices["g6.xlarge"] = PriceOverride{0.40, std::nullopt};
  const auto moved = decide(*shippedEngine(cheaperL4), intent);
  REQUIRE(moved.placement);
  CHECK(moved.placement->instanceType == "g6.xlarge");
  CHECK(moved.placement->nodeHourlyCost == doctest::Approx(0.40));

  Policy disabled;
  disabled.disabledInstanceTypes = {"inf2.xlarge", "inf2.8xlarge"};
  const auto without = decide(*shippedEngine(disabled), intent);
  REQUIRE(without.placement);
  CHECK(without.placement->instanceType == "g6.xlarge");

  Policy noCpuRule;
  noCpuRule.disabledRules = {"small-model-inference"};
  const auto gpu = decide(*shippedEngine(noCpuRule),
                          IntentBuilder(K::Inference, "110M").objective(O::CostOptimized));
  REQUIRE(gpu.placement);
  CHECK(gpu.placement->tier != Tier::CPU);
}

namespace {

// The documented rules, written out independently of the engine: the
// fewest devices of an allowed split that hold the model within the fill
// limit on hardware that runs its precision, and whole nodes for the
// replicas (nodes = ceil(replicas / floor(devices per node / devices per
// replica))). More devices never cost less, so this is the cheapest.
std::optional<double> cheapestPerReplica(const Catalog& catalog, const InstanceType& instance,
                                         const MemoryEstimate& memory, int replicas) {
  const auto* accelerator = catalog.acceleratorOf(instance);
  if (!instance.onDemand || !accelerator || !accelerator->precisions.has(memory.precision)) {
    return std::nullopt;
  }
  for (int devices : instance.allowedAcceleratorCounts) {
    if (devices * accelerator->memoryGiB * 0.9 + 1e-9 >= memory.requiredGiB) {
      const int perNode = instance.acceleratorCount / devices;
      const int nodes = (replicas + perNode - 1) / perNode;
      return *instance.onDemand * nodes / replicas;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("CostOptimized is the cheapest feasible option, by a brute-force reference") {
  // Over the whole catalog for NVIDIA inference (mixed-model-inference
  // allows every NVIDIA card). MaxPerformance and Balanced are checked as
  // properties over a grid (objectives_test.cc).
  const auto engine = shippedEngine();
  const auto& catalog = engine->catalog();
  for (const char* parameters : {"1B", "7B", "13B", "34B", "70B", "180B"}) {
    for (auto precision : {P::FP16, P::BF16, P::FP8, P::INT4}) {
      for (int replicas : {1, 3, 8}) {
        CAPTURE(std::string(parameters));
        CAPTURE(std::string(nameOf(precision)));
        CAPTURE(replicas);
        const WorkloadIntent intent = IntentBuilder(K::Inference, parameters)
                                          .architecture(A::Diffusion)
                                          .precision(precision)
                                          .objective(O::CostOptimized)
                                          .replicas(replicas);
        const auto decision = decide(*engine, intent);
        REQUIRE(decision.rule == "mixed-model-inference");
        double bestCost = 1e18;
        for (const auto& instance : catalog.instances) {
          if (instance.tier != Tier::NVIDIA) {
            continue;
          }
          if (const auto cost = cheapestPerReplica(catalog, instance, decision.memory, replicas)) {
            bestCost = std::min(bestCost, *cost);
          }
        }
        REQUIRE(decision.placement);
        CHECK(decision.placement->hourlyCost == doctest::Approx(bestCost));
      }
    }
  }
}

TEST_CASE("alternatives say why they lost") {
  const auto engine = shippedEngine();
  const auto decision = decide(*engine, IntentBuilder(K::Inference, "7B")
                                            .objective(O::CostOptimized)
                                            .framework(F::JAX)
                                            .maxHourlyCost(1.25));
  REQUIRE(decision.placement);
  REQUIRE(decision.alternatives.size() >= 3);
  // Runners-up first, each dearer than the winner, each a different type.
  CHECK(decision.alternatives[0].hourlyCost > decision.placement->hourlyCost);
  CHECK(decision.alternatives[0].rejected.find("/h more per replica") != std::string::npos);
  CHECK(decision.alternatives[0].instanceType != decision.alternatives[1].instanceType);
  bool overBudget = false;
  bool neuron = false;
  for (const auto& alternative : decision.alternatives) {
    overBudget = overBudget || alternative.rejected.find("over maxHourlyCost $1.25/h") == 0;
    neuron =
        neuron || alternative.rejected.find("does not support framework JAX") != std::string::npos;
  }
  CHECK(overBudget);
  CHECK(neuron);
}

TEST_CASE("deterministic: same input, same answer, whatever the catalog order") {
  const auto engine = shippedEngine();
  std::mt19937 random(42);
  // The same catalog with its entries in reverse order.
  auto document = testing::shippedDocument("catalog.yaml");
  auto& instances = document["instances"];
  std::reverse(instances.begin(), instances.end());
  auto reversedCatalog = parseCatalog(document);
  REQUIRE(reversedCatalog.ok());
  auto reversedEngine = PlacementEngine::create(
      std::make_shared<Catalog>(std::move(reversedCatalog).value()), testing::shippedRules(), {});
  REQUIRE(reversedEngine.ok());
  const std::vector<const char*> sizes = {"125M", "1.3B", "7B", "13B", "34B", "70B", "180B"};
  for (int i = 0; i < 300; ++i) {
    WorkloadIntent intent;
    intent.kind = static_cast<K>(random() % 4);
    intent.parameters = *parseParameterCount(sizes[random() % sizes.size()]);
    intent.precision = static_cast<P>(random() % 6);
    intent.framework = static_cast<F>(random() % 5);
    intent.architecture = static_cast<A>(random() % 5);
    intent.objective = static_cast<O>(random() % 3);
    intent.constraints.capacityType = static_cast<C>(random() % 3);
    if (random() % 2) {
      intent.latencyTargetMs = static_cast<double>(random() % 200 + 1);
    }
    const auto first = toJson(decide(*engine, intent), nullptr);
    const auto second = toJson(decide(*engine, intent), nullptr);
    const auto third = toJson(decide(*(*reversedEngine), intent), nullptr);
    REQUIRE(first == second);
    REQUIRE(first == third);
  }
}

namespace {

// Two instance types that differ only where a tie-break must decide.
std::shared_ptr<const PlacementEngine> tieEngine(const char* catalogJson) {
  auto catalog = parseCatalog(nlohmann::json::parse(catalogJson));
  REQUIRE_MESSAGE(catalog.ok(), gpuplacement::testing::whyNot(catalog));
  auto rules = parseRuleSet(nlohmann::json::parse(R"({
      "sizeBuckets": [{"name": "any", "from": "0"}],
      "neuron": {"frameworks": ["PyTorch"], "architectures": ["Transformer"]},
      "rules": [{"name": "all", "reason": "everything", "candidates": {"tiers": ["NVIDIA"]}}]})"),
                            *catalog);
  REQUIRE_MESSAGE(rules.ok(), gpuplacement::testing::whyNot(rules));
  auto engine =
      PlacementEngine::create(std::make_shared<Catalog>(std::move(catalog).value()),
                              std::make_shared<RuleSet>(std::move(rules).value()), Policy{});
  REQUIRE(engine.ok());
  return *engine;
}

std::string tieCatalog(const char* a, const char* b) {
  return std::string(R"({"accelerators": [
      {"name": "X", "vendor": "NVIDIA", "memoryGiB": 24, "fp16Tflops": 100, "memoryBandwidthGBs": 600,
       "precisions": ["fp16"]},
      {"name": "Y", "vendor": "NVIDIA", "memoryGiB": 24, "fp16Tflops": 100, "memoryBandwidthGBs": 900,
       "precisions": ["fp16"]}],
    "instances": [)") +
         a + "," + b + "]}";
}

}  // namespace

TEST_CASE("documented tie-breaks") {
  const WorkloadIntent cheap = IntentBuilder(K::Inference, "1B").objective(O::CostOptimized);
  SUBCASE("equal cost and performance: fewer accelerators, then on-demand, then name") {
    const auto engine = tieEngine(
        tieCatalog(
            R"({"type": "b.xlarge", "tier": "NVIDIA", "accelerator": "X", "acceleratorCount": 1, "vcpus": 4, "memoryGiB": 16, "onDemand": 1.0, "spot": 1.0})",
            R"({"type": "a.xlarge", "tier": "NVIDIA", "accelerator": "X", "acceleratorCount": 1, "vcpus": 4, "memoryGiB": 16, "onDemand": 1.0, "spot": null})")
            .c_str());
    auto any = cheap;
    any.constraints.capacityType = C::Any;
    const auto decision = decide(*engine, any);
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == "a.xlarge");
    CHECK(decision.placement->capacityType == C::OnDemand);
  }
  SUBCASE("equal cost: higher performance wins for CostOptimized") {
    const auto engine = tieEngine(
        tieCatalog(
            R"({"type": "a.xlarge", "tier": "NVIDIA", "accelerator": "X", "acceleratorCount": 1, "vcpus": 4, "memoryGiB": 16, "onDemand": 1.0, "spot": null})",
            R"({"type": "b.xlarge", "tier": "NVIDIA", "accelerator": "Y", "acceleratorCount": 1, "vcpus": 4, "memoryGiB": 16, "onDemand": 1.0, "spot": null})")
            .c_str());
    const auto decision = decide(*engine, cheap);
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == "b.xlarge");
  }
  SUBCASE("equal performance: lower cost wins for MaxPerformance") {
    const auto engine = tieEngine(
        tieCatalog(
            R"({"type": "a.xlarge", "tier": "NVIDIA", "accelerator": "Y", "acceleratorCount": 1, "vcpus": 4, "memoryGiB": 16, "onDemand": 2.0, "spot": null})",
            R"({"type": "b.xlarge", "tier": "NVIDIA", "accelerator": "Y", "acceleratorCount": 1, "vcpus": 4, "memoryGiB": 16, "onDemand": 1.5, "spot": null})")
            .c_str());
    auto fastest = cheap;
    fastest.objective = O::MaxPerformance;
    const auto decision = decide(*engine, fastest);
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == "b.xlarge");
  }
}

TEST_CASE("an empty catalog or rule set is refused") {
  auto empty = PlacementEngine::create(std::make_shared<Catalog>(), testing::shippedRules(), {});
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().field == "catalog");
  auto noRules =
      PlacementEngine::create(testing::shippedCatalog(), std::make_shared<RuleSet>(), {});
  REQUIRE_FALSE(noRules.ok());
  CHECK(noRules.error().field == "rules");
}

TEST_CASE("devices a kind keeps as created: the placement is of that shape, or none") {
  const auto engine = shippedEngine();
  const auto render = [&engine](const Placement& placement) {
    auto resources = renderScheduling(placement, engine->catalog(), engine->policy()).resources;
    resources.erase("cpu");
    resources.erase("memory");
    return resources;
  };
  struct Row {
    const char* label;
    std::vector<Tier> tiers;
    FixedDevices fixed;
    std::map<std::string, std::string> written;  // empty: cannot place
  };
  const Row rows[] = {
      {"a worker of four GPUs: four on one node, though one would hold it",
       {Tier::NVIDIA},
       {"nvidia.com/gpu", 4, "workers", "trainer"},
       {{"nvidia.com/gpu", "4"}}},
      {"one Trainium chip",
       {Tier::Trainium},
       {"aws.amazon.com/neuron", 1, "workers", "trainer"},
       {{"aws.amazon.com/neuron", "1"}}},
      {"three GPUs: no type has a placement of three",
       {Tier::NVIDIA},
       {"nvidia.com/gpu", 3, "workers", "trainer"},
       {}},
      {"GPUs, where only Neuron devices are allowed",
       {Tier::Trainium},
       {"nvidia.com/gpu", 1, "workers", "trainer"},
       {}},
  };
  const auto free = decide(*engine, IntentBuilder(K::FineTuning, "7B").precision(P::BF16));
  REQUIRE(free.placement);
  CHECK(free.placement->acceleratorCount == 1);
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    auto intent = IntentBuilder(K::FineTuning, "7B").precision(P::BF16).tiers(row.tiers).intent;
    intent.fixedDevices = row.fixed;
    const auto decision = decide(*engine, intent);
    if (row.written.empty()) {
      CHECK_FALSE(decision.placement);
      CHECK_MESSAGE(
          decision.cannotPlace.find("the pod set workers asks for " + row.fixed.resource + ": " +
                                    std::to_string(row.fixed.count) +
                                    " in containers[trainer].resources") != std::string::npos,
          decision.cannotPlace);
      continue;
    }
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    CHECK(render(*decision.placement) == row.written);
    CHECK(decision.reason.find("only placements asked for with " + row.fixed.resource) !=
          std::string::npos);
  }
}

}  // namespace gpuplacement::core
