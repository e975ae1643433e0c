// Usable memory and headroom, hardware that can run the workload, latency
// that can be met, and the user's constraints honoured and explained.
#include "core/decide/fit.h"

#include <cmath>
#include <random>

#include <doctest/doctest.h>

#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "support/engine_fixture.h"

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

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Random intents across every kind, size, precision and objective.
std::vector<WorkloadIntent> sweep(int count) {
  std::mt19937 random(11);
  const char* sizes[] = {"125M", "1.3B", "7B", "13B", "34B", "70B", "180B", "405B"};
  std::vector<WorkloadIntent> intents(count);
  for (auto& intent : intents) {
    intent.kind = static_cast<K>(random() % 4);
    intent.parameters = *parseParameterCount(sizes[random() % 8]);
    intent.precision = static_cast<P>(random() % 6);
    intent.framework = static_cast<F>(random() % 5);
    intent.architecture = static_cast<A>(random() % 5);
    intent.objective = static_cast<O>(random() % 3);
    intent.constraints.capacityType = static_cast<C>(random() % 3);
    intent.replicas = 1 + static_cast<int>(random() % 6);
    if (random() % 3 == 0) {
      intent.latencyTargetMs = 2.0 + static_cast<double>(random() % 200);
    }
    if (random() % 5 == 0) {
      intent.constraints.tiers = {static_cast<Tier>(random() % 4)};
    }
  }
  return intents;
}

}  // namespace

TEST_CASE("usable memory and the fill limit: no placement is filled to the brim") {
  struct Row {
    const char* label;
    WorkloadIntent intent;
    const char* instanceType;
    int count;
    double fillPercent;  // required / available
  };
  const Row rows[] = {
      // 15.65 GiB on a T4's 15 usable GiB would be 104% full; an L4 holds it.
      {"7B fp16 inference",
       IntentBuilder(K::Inference, "7B").objective(O::CostOptimized).tiers({Tier::NVIDIA}),
       "g6.xlarge", 1, 70.0},
      // 156.5 GiB: five Inferentia2 would be 97.8% full; six (the whole node).
      {"70B fp16 on Inferentia2",
       IntentBuilder(K::Inference, "70B").objective(O::CostOptimized).tiers({Tier::Inferentia}),
       "inf2.24xlarge", 6, 81.5},
      // 156.5 GiB: two A100-80GBs would be 97.8% full.
      {"140B int8",
       IntentBuilder(K::Inference, "140B")
           .precision(P::INT8)
           .objective(O::CostOptimized)
           .tiers({Tier::NVIDIA}),
       "g6e.12xlarge", 4, 87.5},
      // 559 GiB: seven A100-80GBs would be 99.8% full; eight is the split.
      {"1T int4", IntentBuilder(K::Inference, "1T").precision(P::INT4).objective(O::CostOptimized),
       "p4de.24xlarge", 8, 87.3},
      // 1,174 GiB (16 bytes of Adam state and 2 of activations a
      // parameter): seven B200s would offer 1,128 GiB at 90%; eight.
      {"70B training",
       IntentBuilder(K::Training, "70B")
           .precision(P::BF16)
           .objective(O::CostOptimized)
           .capacity(C::Spot),
       "p6-b200.48xlarge", 8, 81.9},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(*shippedEngine(), row.intent);
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    const auto& placement = *decision.placement;
    CHECK(placement.instanceType == row.instanceType);
    CHECK(placement.acceleratorCount == row.count);
    CHECK(placement.requiredMemoryGiB / placement.availableMemoryGiB * 100 ==
          doctest::Approx(row.fillPercent).epsilon(0.002));
  }
  // Whatever the intent, what is placed fits within the fill limit.
  for (const auto& intent : sweep(400)) {
    const auto decision = decide(*shippedEngine(), intent);
    if (decision.placement) {
      CHECK(decision.memory.requiredGiB <= decision.placement->availableMemoryGiB * 0.9 + 1e-9);
    }
  }
}

TEST_CASE("the fill limit is policy") {
  // 13B int8 inference needs 14.5 GiB: one A10G holds 20.1 GiB at 90%, but
  // only 13.4 at 60%, and then two of a g5.12xlarge's four.
  const WorkloadIntent intent = IntentBuilder(K::Inference, "13B")
                                    .precision(P::INT8)
                                    .objective(O::CostOptimized)
                                    .only({"g5.xlarge", "g5.12xlarge"});
  const auto relaxed = decide(*shippedEngine(), intent);
  REQUIRE(relaxed.placement);
  CHECK(relaxed.placement->instanceType == "g5.xlarge");
  Policy strict;
  strict.memoryFillLimit = 0.6;
  const auto tight = decide(*shippedEngine(strict), intent);
  REQUIRE(tight.placement);
  CHECK(tight.placement->instanceType == "g5.12xlarge");
  // Two hold it; the lone replica is split across all four it pays for.
  CHECK(tight.placement->neededAccelerators == 2);
  CHECK(tight.placement->acceleratorCount == 4);
  CHECK(tight.placement->memoryFillLimit == 0.6);
}

TEST_CASE("training that cannot fit one node says how many nodes it needs") {
  const auto decision =
      decide(*shippedEngine(),
             IntentBuilder(K::Training, "175B").precision(P::BF16).objective(O::CostOptimized));
  REQUIRE_FALSE(decision.placement);
  // 175B x 2 B x 9; eight B200s hold 8 x 179.06 x 90% each node.
  const double needed = 175e9 * 2 * 9 / kGiB;
  const double perNode = 8 * 179.06 * 0.9;
  const int nodes = static_cast<int>(std::ceil(needed / perNode));
  CHECK(nodes == 3);
  CHECK(decision.cannotPlace.find("cannot place on one node: needs 2,934 GiB") == 0);
  // The fewest nodes of any type, the first of the catalog's order: eight
  // H200s hold 8 x 140.4 x 90% = 1,011 GiB a node, three of them as many as
  // three of B200.
  CHECK(decision.cannotPlace.find(std::to_string(nodes) +
                                  " nodes of p5en.48xlarge joined by EFA would hold one "
                                  "replica") != std::string::npos);
}

TEST_CASE("device counts: the fewest that hold the model, split as the hardware allows") {
  const auto& catalog = *testing::shippedCatalog();
  struct Row {
    const char* type;
    double requiredGiB;
    Precision precision;
    Misfit misfit;
    int devices;
    int replicasPerNode;
  };
  const Row rows[] = {
      {"g4dn.xlarge", 15.65, P::FP16, Misfit::Memory, 0, 0},  // 15 GiB x 90% = 13.5
      {"g4dn.12xlarge", 15.65, P::FP16, Misfit::None, 2, 2},
      {"g4dn.12xlarge", 3, P::BF16, Misfit::Precision, 0, 0},   // Turing has no bf16
      {"p4de.24xlarge", 150, P::FP8, Misfit::Precision, 0, 0},  // Ampere has no fp8
      {"p4de.24xlarge", 150, P::INT8, Misfit::None, 4, 2},      // 3 needed -> 4
      {"g5.48xlarge", 130, P::FP16, Misfit::None, 8, 1},        // 7 needed -> 8
      {"trn1.32xlarge", 134, P::BF16, Misfit::None, 8, 2},      // 5 needed -> 8
      {"inf2.24xlarge", 156.5, P::FP16, Misfit::None, 6, 1},    // 5 needed -> 6
      {"inf2.48xlarge", 156.5, P::FP16, Misfit::None, 8, 1},
      {"inf2.48xlarge", 360, P::FP16, Misfit::Memory, 0, 0},  // 12 x 28.8 = 345.6
      {"inf2.xlarge", 10, P::INT4, Misfit::Precision, 0, 0},  // Neuron has no int4
      {"inf1.24xlarge", 6, P::FP16, Misfit::None, 1, 16},     // one model per chip
      {"inf1.24xlarge", 8, P::FP16, Misfit::Memory, 0, 0},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.type));
    CAPTURE(row.requiredGiB);
    Requirement need;
    need.requiredGiB = row.requiredGiB;
    need.weightsGiB = row.requiredGiB / 1.2;
    need.precision = row.precision;
    need.inference = true;
    const auto fit = fitReplica(catalog, *catalog.find(row.type), need);
    CHECK(fit.misfit == row.misfit);
    if (fit.fits()) {
      CHECK(fit.devices == row.devices);
      CHECK(fit.replicasPerNode == row.replicasPerNode);
    }
  }
  // Whatever the intent: a count the instance allows, on hardware that
  // runs the precision.
  for (const auto& intent : sweep(400)) {
    const auto decision = decide(*shippedEngine(), intent);
    if (!decision.placement || decision.placement->tier == Tier::CPU) {
      continue;
    }
    const auto* instance = catalog.find(decision.placement->instanceType);
    const auto& allowed = instance->allowedAcceleratorCounts;
    CHECK(std::find(allowed.begin(), allowed.end(), decision.placement->acceleratorCount) !=
          allowed.end());
    CHECK(catalog.acceleratorOf(*instance)->precisions.has(intent.precision));
  }
}

TEST_CASE("a precision the hardware cannot run is never chosen") {
  const auto engine = shippedEngine();
  const auto& catalog = engine->catalog();
  struct Row {
    const char* label;
    WorkloadIntent intent;
    std::vector<const char*> never;
  };
  const Row rows[] = {
      {"405B fp8",
       IntentBuilder(K::Inference, "405B")
           .precision(P::FP8)
           .objective(O::CostOptimized)
           .tiers({Tier::NVIDIA}),
       {"A100-40GB", "A100-80GB", "V100", "T4", "A10G"}},
      {"bf16 small",
       IntentBuilder(K::Inference, "3B")
           .precision(P::BF16)
           .objective(O::CostOptimized)
           .tiers({Tier::NVIDIA}),
       {"T4", "V100", "V100-32GB"}},
      {"fp8 small",
       IntentBuilder(K::Inference, "3B")
           .precision(P::FP8)
           .objective(O::CostOptimized)
           .tiers({Tier::NVIDIA}),
       {"T4", "V100", "A10G", "A100-40GB", "A100-80GB"}},
      {"bf16 training",
       IntentBuilder(K::Training, "500M").precision(P::BF16).objective(O::CostOptimized),
       {"T4", "V100"}},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(*engine, row.intent);
    REQUIRE(decision.placement);
    for (const char* accelerator : row.never) {
      CHECK(decision.placement->accelerator != accelerator);
    }
    const auto* instance = catalog.find(decision.placement->instanceType);
    CHECK(catalog.acceleratorOf(*instance)->precisions.has(row.intent.precision));
    // The answer says what was ruled out for the precision.
    bool explained = false;
    for (const auto& alternative : decision.alternatives) {
      explained = explained || alternative.rejected.find("natively") != std::string::npos;
    }
    CHECK(explained);
  }
}

TEST_CASE("latency: time per token is weight bytes over the bandwidth a serving stack reaches") {
  struct Row {
    double weightsGiB;
    double bandwidthGBs;
    double ms;
  };
  // 70B fp16: 130.4 GiB of weights; 7B fp16: 13.04 GiB.
  const Row rows[] = {{130.39, 2 * 2039, 34.3},  // two A100-80GBs: the 35 ms
                      {130.39, 8 * 3350, 5.22},  // eight H100s
                      {13.04, 320, 43.8},        // one T4
                      {13.04, 4 * 600, 5.83}};   // four A10Gs
  for (const auto& row : rows) {
    CHECK(tokenLatencyMs(row.weightsGiB, row.bandwidthGBs) ==
          doctest::Approx(row.ms).epsilon(0.01));
  }
  const auto engine = shippedEngine();
  // A 70B model at 8 ms on vLLM (65% of peak bandwidth): eight H200s take
  // 8.7 ms; eight B200s meet it.
  const auto met =
      decide(*engine, IntentBuilder(K::Inference, "70B").latency(8).framework(Framework::vLLM));
  REQUIRE(met.placement);
  CHECK(met.placement->instanceType == "p6-b200.48xlarge");
  CHECK(met.placement->bandwidthUtilization == doctest::Approx(0.65));
  CHECK(std::string(met.placedReason()) == "Placed");
  CHECK(*met.placement->latencyMs <= 8);
  CHECK(met.placement->latencyUnit == LatencyUnit::OutputToken);
  CHECK_FALSE(met.placement->latencyComputeBound);
  const auto* instance = engine->catalog().find(met.placement->instanceType);
  const auto* spec = engine->catalog().acceleratorOf(*instance);
  // Weights over 65% of the devices' bandwidth, plus two all-reduces a layer.
  const double allReduces =
      2.0 * layersOf(70'000'000'000) * allReduceMicroseconds(instance->interconnect) / 1000;
  const int devices = met.placement->acceleratorCount;
  CHECK(*met.placement->latencyMs ==
        doctest::Approx(tokenLatencyMs(met.memory.weightsGiB,
                                       devices * spec->memoryBandwidthGBs * 0.65 *
                                           scalingEfficiency(devices, instance->interconnect)) +
                        allReduces));
  CHECK(met.reason.find("within the 8.0 ms target") != std::string::npos);
  // More devices than memory needs, when that is what meets the target:
  // a 7B model on four A10Gs at 20 ms (15.0 ms, PCIe all-reduces included;
  // one takes 33 ms).
  const auto split = decide(*engine, IntentBuilder(K::Inference, "7B")
                                         .latency(20)
                                         .objective(O::CostOptimized)
                                         .framework(Framework::vLLM)
                                         .tiers({Tier::NVIDIA}));
  REQUIRE(split.placement);
  CHECK(split.placement->instanceType == "g5.12xlarge");
  CHECK(split.placement->acceleratorCount == 4);
  CHECK(split.placement->neededAccelerators == 1);
  // Cheaper options that miss the target lose, and say so.
  bool explained = false;
  for (const auto& alternative : split.alternatives) {
    if (alternative.hourlyCost && *alternative.hourlyCost < split.placement->hourlyCost) {
      CHECK(alternative.rejected.find("above the 20.0 ms target") != std::string::npos);
      explained = true;
    }
  }
  CHECK(explained);
}

TEST_CASE("a latency target no option meets: the fastest, marked LatencyTargetUnreachable") {
  // 405B fp16 at 2 ms: eight B200s (64 TB/s) need 12.7 ms at their peak,
  // 26.7 at the 65% vLLM reaches, all-reduces included.
  const auto decision = decide(
      *shippedEngine(), IntentBuilder(K::Inference, "405B").latency(2).framework(Framework::vLLM));
  REQUIRE(decision.placement);
  CHECK(decision.latencyTargetUnreachable);
  CHECK(std::string(decision.placedReason()) == "LatencyTargetUnreachable");
  CHECK(decision.placement->instanceType == "p6-b200.48xlarge");
  CHECK(decision.placement->acceleratorCount == 8);
  const double estimate =
      tokenLatencyMs(decision.memory.weightsGiB,
                     8 * 8000 * 0.65 * scalingEfficiency(8, Interconnect::NVSwitch)) +
      2.0 * layersOf(405'000'000'000) * allReduceMicroseconds(Interconnect::NVSwitch) / 1000;
  CHECK(*decision.placement->latencyMs == doctest::Approx(estimate));
  CHECK(decision.reason.find("LatencyTargetUnreachable: no option meets 2.0 ms") !=
        std::string::npos);
  CHECK(decision.reason.find("about 26.7 ms per output token (weights read once per output token "
                             "at 65% of peak bandwidth)") != std::string::npos);
}

TEST_CASE("CPU placements: requests sized to the model on a node that matches them") {
  const auto engine = shippedEngine();
  struct Row {
    const char* label;
    WorkloadIntent intent;
    const char* instanceType;
    const char* memory;  // the request written, in canonical form
  };
  const Row rows[] = {
      // 0.25 GiB needed: 0.27 at the fill limit plus PyTorch's 1 GiB of
      // runtime, 1.5 GiB; two vCPUs need a 4-vCPU node.
      {"110M", IntentBuilder(K::Inference, "110M").objective(O::CostOptimized), "c5.xlarge",
       "1536Mi"},
      // 1.56 GiB needed: 1.74 GiB at the 90% fill limit, plus the runtime.
      {"350M fp32",
       IntentBuilder(K::Inference, "350M").precision(P::FP32).objective(O::CostOptimized),
       "c5.xlarge", "2816Mi"},
      // The user's tiers: 15.65 GiB needs 17.4 GiB and the runtime; a 32 GiB node.
      {"7B on CPU",
       IntentBuilder(K::Inference, "7B").objective(O::CostOptimized).tiers({Tier::CPU}),
       "r5.xlarge", "18944Mi"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(*engine, row.intent);
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    const auto& placement = *decision.placement;
    CHECK(placement.instanceType == row.instanceType);
    CHECK(placement.cpuRequest == kCpuRequestVcpus);
    CHECK((placement.memoryRequestGiB - decision.memory.runtimeGiB) * 0.9 >=
          decision.memory.requiredGiB);
    CHECK(decision.memory.runtimeGiB == 1.0);  // PyTorch's
    const auto* instance = engine->catalog().find(placement.instanceType);
    CHECK(placement.memoryRequestGiB <= instance->allocatableMemoryGiB);
    CHECK(placement.cpuRequest <= instance->allocatableCpu);
    const auto scheduling = renderScheduling(placement, engine->catalog(), engine->policy());
    CHECK(scheduling.resources.at("cpu") == "2");
    CHECK(scheduling.resources.at("memory") == row.memory);
    // Alternatives differ by real amounts.
    for (const auto& alternative : decision.alternatives) {
      CHECK(alternative.rejected.find("$0.00/h") == std::string::npos);
      if (alternative.hourlyCost) {
        CHECK(*alternative.hourlyCost > placement.hourlyCost);
      }
    }
  }
  // A 2-vCPU node has 1.93 allocatable: it cannot hold a 2-vCPU request.
  const auto small = decide(
      *engine, IntentBuilder(K::Inference, "110M").objective(O::CostOptimized).only({"m5.large"}));
  REQUIRE_FALSE(small.placement);
  CHECK(small.cannotPlace.find("a CPU replica requests 2 vCPUs; the largest eligible node, "
                               "m5.large, has 1.93 allocatable") != std::string::npos);
}

TEST_CASE("the tiers a workload names are the user's decision, and are explained") {
  const auto decision =
      decide(*shippedEngine(), IntentBuilder(K::Inference, "7B").tiers({Tier::CPU}));
  REQUIRE(decision.placement);
  CHECK(decision.placement->tier == Tier::CPU);
  CHECK(decision.rule == "constraints.tiers");
  CHECK(decision.ruleSource.find("small-model-inference offers CPU for sizes small only (this "
                                 "workload: large)") != std::string::npos);
  // Every decision that names a rule names its source.
  for (const auto& intent : sweep(400)) {
    const auto any = decide(*shippedEngine(), intent);
    if (!any.rule.empty()) {
      CAPTURE(any.rule);
      CHECK_FALSE(any.ruleSource.empty());
    }
  }
}

TEST_CASE("a Deployment scaled to zero is priced per replica, with nothing in total") {
  const auto decision = decide(*shippedEngine(), IntentBuilder(K::Inference, "7B").replicas(0));
  REQUIRE(decision.placement);
  CHECK(decision.placement->hourlyCost > 0);
  CHECK(decision.placement->totalHourlyCost == 0);
  CHECK(decision.placement->replicas == 0);
}

// Found by the end-to-end tests (tests/e2e): the llama-chat sample's vLLM
// container requests 4 CPUs and 32Gi of its own, and was placed on a
// g6e.xlarge (4 vCPUs, 32 GiB: 3.92 CPUs and less than 32 GiB allocatable),
// where the scheduler left both pods Pending with "Insufficient cpu,
// Insufficient memory".
TEST_CASE("a node must hold the pod template's own cpu and memory requests next to the devices") {
  const auto engine = shippedEngine();
  const auto llama = [] {
    return IntentBuilder(K::Inference, "13B")
        .latency(50)
        .objective(O::CostOptimized)
        .tiers({Tier::NVIDIA, Tier::Inferentia})
        .maxHourlyCost(3);
  };
  const auto bare = decide(*engine, llama());
  REQUIRE(bare.placement);
  CHECK(bare.placement->instanceType == "g6e.xlarge");

  const auto sized = decide(*engine, llama().podRequests(4, 32));
  REQUIRE_MESSAGE(sized.placement, sized.cannotPlace);
  const auto* instance = engine->catalog().find(sized.placement->instanceType);
  REQUIRE(instance);
  CHECK(instance->allocatableCpu >= 4);
  CHECK(instance->allocatableMemoryGiB >= 32);
  CHECK(sized.placement->instanceType != "g6e.xlarge");
  CHECK(sized.placement->hourlyCost > bare.placement->hourlyCost);

  // Fewer replicas per node than devices when the requests bind: 8 CPUs a
  // replica on a 4-GPU, 48-vCPU g6.12xlarge holds 4 by devices and 5 by
  // CPU; 16 CPUs, only 2.
  const auto* g6 = engine->catalog().find("g6.12xlarge");
  REQUIRE(g6);
  Requirement need;
  need.requiredGiB = 10;
  need.weightsGiB = 8;
  CHECK(fitReplica(engine->catalog(), *g6, need).replicasPerNode == 4);
  need.podCpu = 16;
  const auto bound = fitReplica(engine->catalog(), *g6, need);
  CHECK(bound.fits());
  CHECK(bound.replicasPerNode == 2);
  CHECK(bound.share == doctest::Approx(0.5));
  need.podCpu = 64;
  CHECK(fitReplica(engine->catalog(), *g6, need).misfit == Misfit::Pod);
  CHECK(fitWithDevices(engine->catalog(), *g6, need, 1).misfit == Misfit::Pod);

  // Nothing holds the pod at all: said in the pod's terms.
  const auto none = decide(*engine, llama().podRequests(4, 4096));
  REQUIRE_FALSE(none.placement);
  CHECK_MESSAGE(none.cannotPlace.find("the pod template requests 4.00 vCPUs and 4,096 GiB per "
                                      "replica") != std::string::npos,
                none.cannotPlace);
}

TEST_CASE("CPU placements: a team's own sizing, when larger, is what a node must hold") {
  const auto engine = shippedEngine();
  // 110M needs 512Mi and 2 vCPUs: a c5.xlarge; with the team's 6 CPUs, an
  // 8-vCPU node.
  const auto decision = decide(
      *engine, IntentBuilder(K::Inference, "110M").objective(O::CostOptimized).podRequests(6, 1));
  REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
  const auto* instance = engine->catalog().find(decision.placement->instanceType);
  REQUIRE(instance);
  CHECK(instance->allocatableCpu >= 6);
}

TEST_CASE("a team's own requests below the sizing stand, and the price says what that means") {
  const auto engine = shippedEngine();
  struct Case {
    const char* label;
    WorkloadIntent intent;
    const char* note;  // empty: the cost note says nothing of the template's requests
  };
  const Case cases[] = {
      {"no requests of its own: the placement's sizing is written",
       IntentBuilder(K::Inference, "350M").precision(Precision::FP32).tiers({Tier::CPU}), ""},
      {"larger than the sizing: nothing to say",
       IntentBuilder(K::Inference, "350M")
           .precision(Precision::FP32)
           .tiers({Tier::CPU})
           .podRequests(3, 6),
       ""},
      {"a bench pod's 100m and 64 MiB on CPU",
       IntentBuilder(K::Inference, "350M")
           .precision(Precision::FP32)
           .tiers({Tier::CPU})
           .podRequests(0.1, 0.0625),
       "the pod template's own requests of 100m CPU and 64 MiB per replica stand, below the 2 "
       "vCPU and 2.8 GiB this model is sized for: nodes may hold more replicas than this price "
       "assumes, and each may run short"},
      {"on a GPU the devices bound the replicas; only the host memory is short",
       IntentBuilder(K::Inference, "7B")
           .latency(100)
           .tiers({Tier::NVIDIA})
           .podRequests(0.1, 0.0625),
       "the pod template's own requests of 64 MiB per replica stand, below the"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decide(*engine, c.intent);
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    const auto& note = decision.placement->costNote;
    if (*c.note == '\0') {
      CHECK_MESSAGE(note.find("own requests") == std::string::npos, note);
    } else {
      CHECK_MESSAGE(note.find(c.note) != std::string::npos, note);
    }
  }
}

}  // namespace gpuplacement::core
