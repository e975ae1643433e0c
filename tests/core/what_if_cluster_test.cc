// The cluster `recommend --mig` and `--time-sliced` assume: standing shared
// nodes, one share each held by other work, beside a Karpenter that may
// launch any type; and what is refused, naming the flag.
#include "core/cluster/what_if_cluster.h"

#include <doctest/doctest.h>

#include "core/decide/cluster_cost.h"
#include "core/explain/explainer.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::what_if_cluster_test {

using testing::IntentBuilder;
using testing::shippedCatalog;
using testing::shippedEngine;

TEST_CASE("shared nodes as the device plugin advertises them, one share taken") {
  const auto built = WhatIfCluster::build(
      *shippedCatalog(),
      {{"p5.48xlarge", {{"3g.40gb", 1}, {"1g.10gb", 3}}, 0}, {"g6.xlarge", {}, 4}});
  REQUIRE(built);
  const auto& state = (*built)->state();
  CHECK(state.nodesKnown);
  CHECK(state.nodePoolsInstalled);
  REQUIRE(state.nodePools.size() == 1);
  CHECK(state.nodePools[0].second->requirements.empty());  // any type
  REQUIRE(state.nodes.size() == 2);
  const auto& p5 = state.nodes[0];
  CHECK(p5.node->instanceType == "p5.48xlarge");
  CHECK(p5.node->allocatable.gpus == 0);
  CHECK(p5.node->allocatable.migOf("3g.40gb") == 8);
  CHECK(p5.node->allocatable.migOf("1g.10gb") == 24);  // 3 per GPU, 8 GPUs
  CHECK(p5.used.migOf("1g.10gb") == 1);
  CHECK(p5.node->milliCpu > 180000);
  const auto& g6 = state.nodes[1];
  CHECK(g6.node->allocatable.sharedGpus == 4);
  CHECK(g6.node->gpuReplicas == 4);
  CHECK(g6.used.sharedGpus == 1);
  CHECK((*built)->assumed() ==
        "Karpenter may launch any type on demand; standing, kept up by other work: one "
        "p5.48xlarge, 8 H100 each cut into 1 MIG 3g.40gb and 3 MIG 1g.10gb (1 instance taken); "
        "one g6.xlarge, 1 L4 time-sliced 4 ways (1 replica taken)");
}

TEST_CASE("what a what-if cluster refuses, naming the flag") {
  struct Case {
    SharedNodeSpec spec;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {{"p9.xlarge", {{"1g.5gb", 1}}, 0},
       "--mig",
       "\"p9.xlarge\" is not an instance type of the catalog"},
      {{"inf2.xlarge", {{"1g.5gb", 1}}, 0}, "--mig", "inf2.xlarge has no NVIDIA GPU to share"},
      {{"g6e.xlarge", {{"1g.5gb", 1}}, 0}, "--mig", "g6e.xlarge's L40S has no MIG profiles"},
      {{"p4d.24xlarge", {{"1g.18gb", 1}}, 0},
       "--mig",
       "the A100-40GB has no MIG profile \"1g.18gb\"; it has 1g.5gb, 1g.10gb, 2g.10gb, 3g.20gb, "
       "4g.20gb, 7g.40gb"},
      {{"p4d.24xlarge", {{"4g.20gb", 1}, {"3g.20gb", 1}, {"1g.5gb", 1}}, 0},
       "--mig",
       "p4d.24xlarge: more instances than one GPU's 7 compute and 8 memory slices hold"},
      {{"g6.xlarge", {}, 1}, "--time-sliced", "g6.xlarge: a GPU is time-sliced 2 ways or more"},
      {{"g6.12xlarge", {}, 4},
       "--time-sliced",
       "g6.12xlarge has 4 GPUs; time-sliced replicas are placed on single-GPU nodes only"},
      {{"trn1.2xlarge", {}, 4}, "--time-sliced", "trn1.2xlarge has no NVIDIA GPU to share"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.spec.instanceType);
    const auto built = WhatIfCluster::build(*shippedCatalog(), {c.spec});
    REQUIRE_FALSE(built);
    CHECK(built.error().field == c.field);
    CHECK(built.error().message == c.message);
  }
}

TEST_CASE("a what-if decides as the operator would on that cluster") {
  const auto engine = shippedEngine();
  const auto built =
      WhatIfCluster::build(*shippedCatalog(), {{"p4d.24xlarge", {{"1g.5gb", 7}}, 0}});
  REQUIRE(built);
  const auto view = clusterViewOf((*built)->state(), *shippedCatalog(), engine->policy());
  struct Case {
    const char* label;
    WorkloadIntent intent;
    const char* migProfile;  // empty: whole devices
  };
  const Case cases[] = {
      {"seed 001's speech model takes a slice",
       IntentBuilder(WorkloadKind::Inference, "1.55B").architecture(Architecture::Speech).intent,
       "1g.5gb"},
      {"a 7B model does not fit one", IntentBuilder(WorkloadKind::Inference, "7B").intent, ""},
      {"training is never shared unless asked",
       IntentBuilder(WorkloadKind::FineTuning, "350M").intent, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decide(*engine, c.intent, ClusterContext{&view, {}, {}});
    REQUIRE(decision.placement);
    CHECK(decision.placement->migProfile == c.migProfile);
    CHECK(decision.placement->wholeDeviceHourlyCost.has_value() == (*c.migProfile != '\0'));
  }
}

}  // namespace gpuplacement::core::what_if_cluster_test
