// A replica no node holds, across a group of nodes joined by EFA
// (core/decide/fit.h's fitAcrossNodes, the engine and the explainer).

#include <cmath>

#include <doctest/doctest.h>

#include "core/decide/fit.h"
#include "core/decide/performance_model.h"
#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using testing::IntentBuilder;
using testing::shippedEngine;
using F = Framework;
using K = WorkloadKind;
using P = Precision;

const InstanceType& groupType(const PlacementEngine& engine, const std::string& name) {
  const auto* type = engine.catalog().find(name);
  REQUIRE(type != nullptr);
  return *type;
}

TEST_CASE("the catalog: EFA where the type has it, none where it has not") {
  const auto engine = shippedEngine();
  struct Row {
    const char* type;
    int interfaces;
    double gbps;
  };
  // Karpenter's instance-type reference (vpc.amazonaws.com/efa and the
  // network bandwidth label), as config/catalog.yaml cites it.
  const Row rows[] = {
      {"p5.48xlarge", 32, 3200}, {"p5en.48xlarge", 16, 3200},  {"p4d.24xlarge", 4, 400},
      {"trn1.32xlarge", 8, 800}, {"trn1n.32xlarge", 16, 1600}, {"g6e.48xlarge", 4, 400},
      {"inf2.48xlarge", 0, 0},   {"trn1.2xlarge", 0, 0},       {"g6.xlarge", 0, 0}};
  for (const auto& row : rows) {
    CAPTURE(std::string(row.type));
    const auto& type = groupType(*engine, row.type);
    CHECK(type.efaInterfaces == row.interfaces);
    CHECK(type.networkGbps == doctest::Approx(row.gbps));
  }
}

TEST_CASE("fitAcrossNodes: the fewest nodes that hold the model, or the team's group") {
  const auto engine = shippedEngine();
  const auto& catalog = engine->catalog();
  Requirement need;
  need.requiredGiB = 906;
  need.reserveGiB = 0;
  need.fillLimit = 0.9;
  need.inference = true;
  need.weightsGiB = 755;
  need.work = workOf(Architecture::Transformer, 405'000'000'000ULL, 755 * kBytesPerGiB);
  struct Row {
    const char* type;
    int nodes;  // asked: 0, the fewest
    Misfit misfit;
    int wantNodes;
    int wantDevices;  // per node
  };
  const Row rows[] = {
      // 8 x 79.65 x 0.9 = 573 GiB a node: two hold 906.
      {"p5.48xlarge", 0, Misfit::None, 2, 8},
      // A team's group of four: four H100s a node hold it (4 x 4 x 71.7 = 1,147).
      {"p5.48xlarge", 4, Misfit::None, 4, 4},
      // 8 x 40 GB A100s (37.5 GiB usable): 270 GiB a node, four nodes.
      {"p4d.24xlarge", 0, Misfit::None, 4, 8},
      // A group of two A100-40GB nodes holds 540 GiB: too small.
      {"p4d.24xlarge", 2, Misfit::Memory, 0, 0},
      // 16 x 32 x 0.9 = 461 GiB a trn1.32xlarge: two.
      {"trn1.32xlarge", 0, Misfit::None, 2, 16},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.type));
    CAPTURE(row.nodes);
    const auto& type = groupType(*engine, row.type);
    const Fit fit = fitAcrossNodes(catalog, type, need, row.nodes);
    CHECK(fit.misfit == row.misfit);
    if (!fit.fits()) {
      continue;
    }
    CHECK(fit.nodes == row.wantNodes);
    CHECK(fit.devices == row.wantDevices);
    CHECK(fit.replicasPerNode == 1);
    CHECK(fit.neededDevices == row.wantNodes * row.wantDevices);
    const auto* spec = catalog.acceleratorOf(type);
    CHECK(fit.availableGiB == doctest::Approx(spec->memoryGiB * row.wantDevices * row.wantNodes));
    // One node's roofline over the whole model, and a hop between nodes.
    const auto oneNode = rooflineOf(need.work, denseTflops(*spec, need.precision),
                                    spec->memoryBandwidthGBs, row.wantDevices, type.interconnect);
    CHECK(fit.latencyMs ==
          doctest::Approx(oneNode.ms() + (row.wantNodes - 1) * kCrossNodeHopMicroseconds / 1000));
  }
}

TEST_CASE("training across nodes scales by nodes, less what EFA costs a doubling") {
  const double one = trainingTflops(989, 8, Interconnect::NVSwitch);
  CHECK(trainingTflopsAcrossNodes(989, 8, Interconnect::NVSwitch, 1) == doctest::Approx(one));
  CHECK(trainingTflopsAcrossNodes(989, 8, Interconnect::NVSwitch, 2) ==
        doctest::Approx(2 * one * kCrossNodeScalingPerDoubling));
  CHECK(trainingTflopsAcrossNodes(989, 8, Interconnect::NVSwitch, 4) ==
        doctest::Approx(4 * one * kCrossNodeScalingPerDoubling * kCrossNodeScalingPerDoubling));
}

TEST_CASE("a replica no node holds is placed across nodes where the target's pods form groups") {
  const auto engine = shippedEngine();
  struct Row {
    const char* label;
    WorkloadIntent intent;
    const char* type;
    int nodes;
    int devices;
    int efa;
    int groups;
    const char* reason;
  };
  const Row rows[] = {
      {"405B fp16 on H100: two nodes",
       IntentBuilder(K::Inference, "405B").only({"p5.48xlarge"}).groups(1, 0), "p5.48xlarge", 2, 8,
       32, 1,
       "no single node holds it: 2 p5.48xlarge nodes, 8 H100 each, 16 in all, joined by EFA (32 "
       "interfaces, 3,200 Gbps a node); tensor parallel within a node over NVSwitch and pipeline "
       "parallel across nodes"},
      {"the team's group of four",
       IntentBuilder(K::Inference, "405B").only({"p5.48xlarge"}).groups(1, 4), "p5.48xlarge", 4, 4,
       32, 1, "2 p5.48xlarge nodes" /* never said: see below */},
      {"two groups", IntentBuilder(K::Inference, "405B").only({"p5.48xlarge"}).groups(2, 2),
       "p5.48xlarge", 2, 8, 32, 2, "16 in all"},
      {"405B on Trainium, served through vLLM's Neuron backend",
       IntentBuilder(K::Inference, "405B").framework(F::vLLM).tiers({Tier::Trainium}).groups(1, 0),
       "trn1.32xlarge", 2, 16, 8, 1,
       "2 trn1.32xlarge nodes, 16 Trainium each, 32 in all, joined by EFA (8 interfaces, 800 Gbps "
       "a "
       "node); tensor parallel within a node over NeuronLink"},
      // 70B x 2 B x 9 = 1,174 GiB (weights, gradients, fp32 master weights
      // and Adam's moments, activations): two p5.48xlarge hold 1,147 GiB,
      // three 1,720; split so that each device holds its part
      // (training_layout_test has the degrees' arithmetic).
      {"70B trained in full",
       IntentBuilder(K::Training, "70B").precision(P::BF16).only({"p5.48xlarge"}).groups(1, 0),
       "p5.48xlarge", 3, 8, 32, 1,
       "tensor parallel 4 within a node over NVSwitch, pipeline parallel 3 across nodes, data "
       "parallel 2 with the optimizer's states sharded over it: a device holds 65.2 GiB (weights "
       "and gradients 21.7, optimizer states 32.6, activations 10.9)"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(*engine, row.intent);
    CAPTURE(decision.reason);
    CAPTURE(decision.cannotPlace);
    REQUIRE(decision.placement);
    const auto& placement = *decision.placement;
    CHECK(placement.instanceType == row.type);
    CHECK(placement.nodesPerReplica == row.nodes);
    CHECK(placement.acceleratorCount == row.devices);
    CHECK(placement.efaInterfaces == row.efa);
    CHECK(placement.replicas == row.groups);
    // Every node of every group paid whole.
    const double node = *groupType(*engine, row.type).onDemand;
    CHECK(placement.hourlyCost == doctest::Approx(node * row.nodes));
    CHECK(placement.totalHourlyCost == doctest::Approx(node * row.nodes * row.groups));
    CHECK(placement.nodes == row.nodes * row.groups);
    if (std::string(row.label) != "the team's group of four") {
      CHECK(decision.reason.find(row.reason) != std::string::npos);
    } else {
      CHECK(decision.reason.find("4 p5.48xlarge nodes, 4 H100 each, 16 in all") !=
            std::string::npos);
      CHECK(decision.reason.find("set it to") == std::string::npos);
    }
    // Each pod asks for its node's devices and every EFA interface.
    const auto scheduling = renderScheduling(placement, engine->catalog(), engine->policy());
    CHECK(scheduling.resources.at(std::string(kEfaResource)) == std::to_string(row.efa));
  }
}

TEST_CASE("a group size the team wrote that differs is named, with the size it needs") {
  const auto engine = shippedEngine();
  // A LeaderWorkerSet of size 1: the placement needs groups of two.
  const auto decision =
      decide(*engine, IntentBuilder(K::Inference, "405B").only({"p5.48xlarge"}).groups(1, 1));
  REQUIRE(decision.placement);
  CHECK(decision.placement->nodesPerReplica == 2);
  CHECK(decision.reason.find("a group needs 2 pods, one a node, and "
                             "spec.leaderWorkerTemplate.size gives 1: set it to 2") !=
        std::string::npos);
}

TEST_CASE("no group: where the pods form none, the type has no EFA, or the team's is too small") {
  const auto engine = shippedEngine();
  struct Row {
    const char* label;
    WorkloadIntent intent;
    const char* message;
  };
  const Row rows[] = {
      {"a Deployment", IntentBuilder(K::Inference, "405B").only({"p5.48xlarge"}),
       "2 nodes of p5.48xlarge joined by EFA would hold one replica, and the target's pods are "
       "each a replica (a Deployment, StatefulSet or Job): run it as a kind whose pods form a "
       "group, a LeaderWorkerSet, JobSet, TrainJob or Ray cluster"},
      // 12 x 32 x 0.9 = 346 GiB an inf2.48xlarge: three would, without EFA.
      {"no EFA",
       IntentBuilder(K::Inference, "405B").framework(F::vLLM).only({"inf2.48xlarge"}).groups(1, 0),
       "3 nodes of inf2.48xlarge would hold one replica, and inf2.48xlarge has no EFA (Elastic "
       "Fabric Adapter) to join its nodes"},
      {"the team's group too small",
       IntentBuilder(K::Inference, "405B").only({"p4d.24xlarge"}).groups(1, 2),
       "nor does a group of 2 nodes, as spec.leaderWorkerTemplate.size gives"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(*engine, row.intent);
    CAPTURE(decision.cannotPlace);
    CHECK_FALSE(decision.placement);
    CHECK(decision.cannotPlace.find(row.message) != std::string::npos);
  }
}

TEST_CASE("a model one node holds stays on one node, groups or not") {
  const auto engine = shippedEngine();
  const auto decision =
      decide(*engine, IntentBuilder(K::Inference, "70B").only({"p5.48xlarge"}).groups(1, 2));
  REQUIRE(decision.placement);
  CHECK(decision.placement->nodesPerReplica == 1);
  CHECK(decision.placement->efaInterfaces == 0);
  const auto scheduling =
      renderScheduling(*decision.placement, engine->catalog(), engine->policy());
  CHECK(scheduling.resources.count(std::string(kEfaResource)) == 0);
}

}  // namespace
}  // namespace gpuplacement::core
