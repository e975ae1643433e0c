// MIG slices: which profile holds a replica (memory, then the latency its
// share of SMs and bandwidth reaches), what a share costs, who may share,
// and how a cluster's MIG nodes are read, counted and written to.
#include <doctest/doctest.h>

#include "core/decide/cluster_cost.h"
#include "core/decide/fit.h"
#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "core/plan/status_draft.h"
#include "support/cluster_fixture.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::mig_slices_test {

using testing::Cluster;
using testing::g6Pool;
using testing::IntentBuilder;
using testing::p4dMig;
using testing::shippedCatalog;
using testing::shippedEngine;

constexpr double kP4dHourly = 21.957642;  // config/catalog.yaml, us-east-1 on-demand
constexpr double kG6xlHourly = 0.8048;

// A speech model the size of whisper-large (1.55B at fp16): 3.5 GiB.
IntentBuilder speech() {
  return IntentBuilder(WorkloadKind::Inference, "1.55B")
      .tiers({Tier::NVIDIA})
      .capacity(CapacityType::OnDemand);
}

// A p4d cut into 56 1g.5gb slices with one taken (the node is kept up),
// and a NodePool of g6 for whole L4s.
Cluster slicedP4d(int used = 1) {
  Cluster cluster{{p4dMig("1g.5gb", 56)}, {0}, {g6Pool()}};
  cluster.slicesUsed = {used};
  return cluster;
}

// Two p4d, one cut into 1g.5gb and one into 3g.20gb, each kept up.
Cluster twoLayouts() {
  Cluster cluster{{p4dMig("1g.5gb", 56), p4dMig("3g.20gb", 16)}, {0, 0}, {g6Pool()}};
  cluster.slicesUsed = {1, 1};
  return cluster;
}

// A p4d cut into 1g.5gb slices, one of them this workload's replica and
// another another pod's, as a decision about that workload sees it.
struct SliceInForce {
  Cluster cluster = slicedP4d(2);  // first: the state below reads it
  ClusterState state = cluster.state();
  ClusterView view;
  ClusterContext context;

  explicit SliceInForce(const PlacementEngine& engine)
      : view(clusterViewOf(state, *shippedCatalog(), engine.policy())) {
    context.view = &view;
    context.own = {shippedCatalog()->indexOf("p4d.24xlarge"), CapacityType::OnDemand, 1, 1,
                   "1g.5gb"};
  }
  SliceInForce(const SliceInForce&) = delete;
  SliceInForce& operator=(const SliceInForce&) = delete;
};

Decision decideOn(const Cluster& cluster, const WorkloadIntent& intent, Policy policy = {}) {
  const auto engine = shippedEngine(policy);
  const auto state = cluster.state();
  const auto view = clusterViewOf(state, *shippedCatalog(), policy);
  return decide(*engine, intent, ClusterContext{&view, {}, {}});
}

TEST_CASE("a replica takes the smallest MIG profile that holds it and meets its target") {
  struct Case {
    const char* label;
    Cluster cluster;
    WorkloadIntent intent;
    const char* instanceType;
    const char* profile;  // empty: whole devices
  };
  Policy noSharing;
  noSharing.sharing.inference = DeviceSharing::None;
  const Case cases[] = {
      {"3.5 GiB fits 1g.5gb (4.5 GiB under the 90% fill limit)", slicedP4d(), speech(),
       "p4d.24xlarge", "1g.5gb"},
      {"15.6 GiB (7B at fp16) needs 3g.20gb: 1g.5gb holds 4.5", twoLayouts(),
       IntentBuilder(WorkloadKind::Inference, "7B")
           .tiers({Tier::NVIDIA})
           .capacity(CapacityType::OnDemand),
       "p4d.24xlarge", "3g.20gb"},
      {"a 20 ms target on vLLM (65% of peak bandwidth): 1g.5gb's eighth of the bandwidth "
       "takes 25 ms a token, 3g.20gb 6",
       twoLayouts(), speech().framework(Framework::vLLM).latency(20), "p4d.24xlarge", "3g.20gb"},
      {"a 20 ms target, and only 1g.5gb is cut: a whole L4 meets it (16 ms)", slicedP4d(),
       speech().framework(Framework::vLLM).latency(20), "g6.xlarge", ""},
      {"7B, and only 1g.5gb is cut: no slice holds it", slicedP4d(),
       IntentBuilder(WorkloadKind::Inference, "7B")
           .tiers({Tier::NVIDIA})
           .capacity(CapacityType::OnDemand),
       "g6.xlarge", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decideOn(c.cluster, c.intent);
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == c.instanceType);
    CHECK(decision.placement->migProfile == c.profile);
  }
}

TEST_CASE("who may share: serving by default, training when it asks, nobody when told not to") {
  struct Case {
    const char* label;
    WorkloadIntent intent;
    Policy policy;
    const char* profile;
  };
  Policy noSharing;
  noSharing.sharing.inference = DeviceSharing::None;
  Policy trainingShares;
  trainingShares.sharing.training = DeviceSharing::Isolated;
  auto optOut = speech();
  optOut.intent.constraints.sharing = DeviceSharing::None;
  auto optIn = speech();
  optIn.intent.constraints.sharing = DeviceSharing::Isolated;
  // 120M parameters trained with Adam: 2.2 GiB, within a 1g.5gb.
  const auto training = IntentBuilder(WorkloadKind::FineTuning, "120M")
                            .tiers({Tier::NVIDIA})
                            .capacity(CapacityType::OnDemand);
  auto trainingAsks = training;
  trainingAsks.intent.constraints.sharing = DeviceSharing::Isolated;
  const Case cases[] = {
      {"serving, Auto: the policy's default for serving is Isolated", speech(), {}, "1g.5gb"},
      {"serving, the policy says None", speech(), noSharing, ""},
      {"serving that opts out", optOut, {}, ""},
      {"serving that opts in under a policy of None", optIn, noSharing, "1g.5gb"},
      {"training, Auto: whole devices", training, {}, ""},
      {"training that asks for Isolated", trainingAsks, {}, "1g.5gb"},
      {"training under a policy that lets it share", training, trainingShares, "1g.5gb"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decideOn(slicedP4d(), c.intent, c.policy);
    REQUIRE(decision.placement);
    CHECK(decision.placement->migProfile == c.profile);
    CHECK(decision.placement->instanceType ==
          std::string(*c.profile ? "p4d.24xlarge" : "g6.xlarge"));
  }
}

TEST_CASE("a slice is priced as its share of the node, idle slices of kept nodes first") {
  struct Case {
    const char* label;
    Cluster cluster;
    const char* instanceType;
    double hourly;
    double clusterHourly;
  };
  const Case cases[] = {
      {"an idle slice of a p4d other pods keep up: 1/56 of it, nothing more for the cluster",
       slicedP4d(1), "p4d.24xlarge", kP4dHourly / 56, 0},
      {"a p4d with every slice idle would be kept up by this replica alone: a new L4 is less",
       slicedP4d(0), "g6.xlarge", kG6xlHourly, kG6xlHourly},
      {"every slice taken: no room, a new L4", slicedP4d(56), "g6.xlarge", kG6xlHourly,
       kG6xlHourly},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decideOn(c.cluster, speech());
    REQUIRE(decision.placement);
    const auto& placement = *decision.placement;
    CHECK(placement.instanceType == c.instanceType);
    CHECK(placement.hourlyCost == doctest::Approx(c.hourly));
    CHECK(placement.paidByCluster() == doctest::Approx(c.clusterHourly));
  }
  const auto sliced = decideOn(slicedP4d(1), speech());
  const auto& placement = *sliced.placement;
  // What a whole device would cost instead, said where the slice is.
  REQUIRE(placement.wholeDeviceHourlyCost);
  CHECK(*placement.wholeDeviceHourlyCost == doctest::Approx(kG6xlHourly));
  CHECK(placement.availableMemoryGiB == doctest::Approx(5.0));
  CHECK(placement.replicasPerNode == 56);
  CHECK(placement.costNote.find("1 idle MIG 1g.5gb slice on an existing p4d.24xlarge") !=
        std::string::npos);
  CHECK(sliced.reason.find("1/7 of the A100-40GB's SMs and 1/8 of its memory") !=
        std::string::npos);
  CAPTURE(sliced.reason);
  CHECK(sliced.reason.find("on whole devices the best is g6.xlarge (1x L4) at $0.8048/h") !=
        std::string::npos);
}

TEST_CASE("the share of a node one slice is, by profile and instance type") {
  struct Case {
    const char* instanceType;
    const char* profile;
    int perNode;
  };
  const Case cases[] = {
      {"p4d.24xlarge", "1g.5gb", 56},   {"p4d.24xlarge", "3g.20gb", 16},
      {"p4d.24xlarge", "7g.40gb", 8},   {"p5.48xlarge", "1g.10gb", 56},
      {"p5.4xlarge", "1g.10gb", 7},     {"p5.4xlarge", "2g.20gb", 3},
      {"p5en.48xlarge", "1g.18gb", 56}, {"p6-b200.48xlarge", "1g.23gb", 56},
  };
  const auto& catalog = *shippedCatalog();
  Requirement need;
  need.requiredGiB = 1;
  need.inference = true;
  need.slices = true;
  for (const auto& c : cases) {
    CAPTURE(std::string(c.instanceType) + " " + c.profile);
    const auto& instance = *catalog.find(c.instanceType);
    const auto& profiles = catalog.acceleratorOf(instance)->migProfiles;
    unsigned only = 0;
    for (std::size_t i = 0; i < profiles.size(); ++i) {
      only |= profiles[i].name == c.profile ? 1U << i : 0;
    }
    REQUIRE(only != 0);
    FitChoices fits;
    const int count = fitChoices(catalog, instance, need, fits, only);
    REQUIRE(count >= 2);  // whole devices, and the slice last
    const auto& slice = fits[static_cast<std::size_t>(count - 1)];
    CHECK(slice.migProfile >= 0);
    CHECK(slice.replicasPerNode == c.perNode);
    CHECK(slice.share == doctest::Approx(1.0 / c.perNode));
    const double node = *instance.onDemand;
    const auto quote = AcceleratorShareCost().quote(
        {catalog.indexOf(c.instanceType), &instance, CapacityType::OnDemand, node, 1,
         slice.replicasPerNode, slice.share, 1, c.profile});
    CHECK(quote.perReplicaHourly == doctest::Approx(node / c.perNode));
  }
}

TEST_CASE("MIG nodes and pods are read from their resources; the slice is written as one") {
  const auto node = nodeFromJson(nlohmann::json::parse(R"({
    "metadata": {"labels": {"node.kubernetes.io/instance-type": "p4d.24xlarge"}},
    "status": {"allocatable": {"cpu": "95690m", "memory": "1120000Mi", "pods": "737",
                               "nvidia.com/gpu": "2", "nvidia.com/mig-3g.20gb": "4",
                               "nvidia.com/mig-1g.5gb": "21"},
               "conditions": [{"type": "Ready", "status": "True"}]}})"));
  CHECK(node.allocatable.gpus == 2);
  CHECK(node.allocatable.migOf("1g.5gb") == 21);
  CHECK(node.allocatable.migOf("3g.20gb") == 4);
  CHECK(node.allocatable.migOf("2g.10gb") == 0);
  const auto pod = podFromJson(nlohmann::json::parse(R"({
    "spec": {"nodeName": "n", "containers": [
      {"name": "a", "resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}},
      {"name": "b", "resources": {"requests": {"nvidia.com/mig-1g.5gb": 1},
                                  "limits": {"nvidia.com/mig-1g.5gb": 1}}}]},
    "status": {"phase": "Running"}})"));
  CHECK(pod.devices.migOf("1g.5gb") == 2);
  CHECK(pod.devices.gpus == 0);
  Devices free = node.allocatable;
  free -= pod.devices;
  CHECK(free.migOf("1g.5gb") == 19);
  free -= Devices{0, 0, 0, 0, {{"3g.20gb", 4}}};
  CHECK(free.mig.size() == 1);  // a profile used up leaves the list

  const auto decision = decideOn(slicedP4d(), speech());
  REQUIRE(decision.placement);
  const auto scheduling = renderScheduling(*decision.placement, *shippedCatalog(), Policy{});
  CHECK(scheduling.resources.at("nvidia.com/mig-1g.5gb") == "1");
  CHECK(scheduling.resources.count("nvidia.com/gpu") == 0);
  CHECK(scheduling.nodeSelector.at("node.kubernetes.io/instance-type") == "p4d.24xlarge");
}

TEST_CASE("a slice in force is weighed as the slice it runs on") {
  const auto engine = shippedEngine();
  const SliceInForce inForce(*engine);
  const auto& context = inForce.context;
  const auto kept =
      assess(*engine, speech(), "p4d.24xlarge", 1, {"1g.5gb"}, CapacityType::OnDemand, &context);
  CHECK(kept.feasible);
  REQUIRE(kept.placement);
  CHECK(kept.placement->migProfile == "1g.5gb");
  CHECK(kept.hourlyCost == doctest::Approx(kP4dHourly / 56));
  CHECK(kept.paidByCluster() == doctest::Approx(0));
  // A 7B no longer fits its 1g.5gb.
  const auto grown = assess(*engine,
                            IntentBuilder(WorkloadKind::Inference, "7B")
                                .tiers({Tier::NVIDIA})
                                .capacity(CapacityType::OnDemand),
                            "p4d.24xlarge", 1, {"1g.5gb"}, CapacityType::OnDemand, &context);
  CHECK_FALSE(grown.feasible);
  // A profile the catalog no longer lists.
  const auto unknown =
      assess(*engine, speech(), "p4d.24xlarge", 1, {"9g.99gb"}, CapacityType::OnDemand, &context);
  CHECK_FALSE(unknown.feasible);
  CHECK(unknown.reason == "the catalog lists no MIG profile 9g.99gb for p4d.24xlarge");
}

TEST_CASE("spec.sharing and spec.constraints.sharing are read; bad values are named") {
  const auto& catalog = *shippedCatalog();
  const auto& rules = *testing::shippedRules();
  auto policy = parsePolicySpec(
      nlohmann::json::parse(R"({"sharing": {"inference": "None", "training": "Isolated"}})"),
      catalog, rules);
  REQUIRE(policy.ok());
  CHECK(policy->sharing.inference == DeviceSharing::None);
  CHECK(policy->sharing.training == DeviceSharing::Isolated);
  CHECK(Policy{}.sharing.inference == DeviceSharing::Isolated);
  CHECK(Policy{}.sharing.training == DeviceSharing::None);
  struct Case {
    const char* spec;
    const char* field;
    const char* message;
  };
  const Case cases[] = {
      {R"({"sharing": {"inference": "Auto"}})", "spec.sharing.inference", "Auto is a workload's"},
      {R"({"sharing": {"training": "MIG"}})", "spec.sharing.training", "device sharing"},
      {R"({"sharing": {"batch": "None"}})", "spec.sharing.batch", "unknown field"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.spec));
    auto parsed = parsePolicySpec(nlohmann::json::parse(c.spec), catalog, rules);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().field == c.field);
    CHECK(parsed.error().message.find(c.message) != std::string::npos);
  }
}

}  // namespace gpuplacement::core::mig_slices_test

namespace gpuplacement::core::mig_slices_test {

TEST_CASE("a share held back by the re-placement rules is written as the share it is") {
  const auto engine = shippedEngine();
  AppliedRecord applied;
  applied.instanceType = "p4d.24xlarge";
  applied.accelerator = "A100-40GB";
  applied.tier = Tier::NVIDIA;
  applied.acceleratorCount = 1;
  applied.migProfile = "1g.5gb";
  applied.claim = true;
  const WorkloadIntent intent = speech();
  const auto current =
      assess(*engine, intent, applied.instanceType, 1, applied.share(), CapacityType::OnDemand);
  const auto decision = decide(*engine, intent, costModelFor(CostModel::WholeInstance));
  const auto held = reconcile::placementInForce(applied, current, decision, *engine, intent);
  CHECK(held.migProfile == "1g.5gb");
  CHECK(held.claim);
  CHECK(held.availableMemoryGiB == doctest::Approx(5.0));
  const auto scheduling = renderScheduling(held, *shippedCatalog(), engine->policy());
  REQUIRE(scheduling.claim);
  CHECK(scheduling.claim->deviceClassName == "mig.nvidia.com");
  applied.claim = false;
  const auto plugin = reconcile::placementInForce(applied, current, decision, *engine, intent);
  CHECK(renderScheduling(plugin, *shippedCatalog(), engine->policy())
            .resources.at("nvidia.com/mig-1g.5gb") == "1");
}

}  // namespace gpuplacement::core::mig_slices_test

namespace gpuplacement::core::mig_slices_test {

TEST_CASE("a slice in force lends its room to that slice only, not to whole GPUs of its type") {
  const auto engine = shippedEngine();
  const SliceInForce inForce(*engine);
  const auto& context = inForce.context;
  // The fastest would be a whole A100; the p4d has none, whatever its slice holds.
  for (const auto objective : {Objective::MaxPerformance, Objective::CostOptimized}) {
    CAPTURE(static_cast<int>(objective));
    const auto decision = decide(*engine, speech().objective(objective), context);
    REQUIRE(decision.placement);
    if (decision.placement->instanceType == "p4d.24xlarge") {
      CHECK(decision.placement->migProfile == "1g.5gb");
    }
  }
}

}  // namespace gpuplacement::core::mig_slices_test
