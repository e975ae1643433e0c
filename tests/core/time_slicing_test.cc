// Time-sliced GPUs: where sharing without isolation is allowed, a replica
// takes the fewest replicas of a time-sliced GPU whose share of its memory
// holds the model, only where they are free, priced as that share and
// slowed by the tenants beside it; whole-device placements never count a
// GPU's replicas as GPUs.
#include <doctest/doctest.h>

#include "core/decide/cluster_cost.h"
#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "support/cluster_fixture.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::time_slicing_test {

using testing::Cluster;
using testing::g6Pool;
using testing::g6TimeSliced;
using testing::IntentBuilder;
using testing::shippedCatalog;
using testing::shippedEngine;

constexpr double kG6xlHourly = 0.8048;  // config/catalog.yaml, us-east-1 on-demand

// Serving that allows sharing without isolation.
IntentBuilder serving(const char* parameters) {
  IntentBuilder builder = IntentBuilder(WorkloadKind::Inference, parameters)
                              .tiers({Tier::NVIDIA})
                              .capacity(CapacityType::OnDemand);
  builder.intent.constraints.sharing = DeviceSharing::Any;
  return builder;
}

// A g6.xlarge sliced 4 ways with `used` replicas taken, and a NodePool of
// g6 for whole L4s.
Cluster sliced(int used) {
  Cluster cluster{{g6TimeSliced(4)}, {0}, {g6Pool()}};
  cluster.sharedUsed = {used};
  return cluster;
}

Decision decideOn(const Cluster& cluster, const WorkloadIntent& intent) {
  const auto engine = shippedEngine();
  const auto state = cluster.state();
  const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
  return decide(*engine, intent, ClusterContext{&view, {}, {}});
}

TEST_CASE("time-sliced replicas: as many as the memory needs, where they are free") {
  struct Case {
    const char* label;
    Cluster cluster;
    WorkloadIntent intent;
    int replicas;  // of the GPU's 4; 0: a whole L4
    double hourly;
  };
  auto isolated = serving("1.55B");
  isolated.intent.constraints.sharing = DeviceSharing::Isolated;
  const Case cases[] = {
      // Priced at a third of the node: its host memory (the runtime and a
      // checkpoint shard, 4 GiB a replica) lets 3 such pods on a g6.xlarge.
      {"3.5 GiB: one replica, a quarter of the L4's 22.5 GiB holds it", sliced(1), serving("1.55B"),
       1, kG6xlHourly / 3},
      {"6.7 GiB (3B at fp16): two replicas' share", sliced(1), serving("3B"), 2, kG6xlHourly / 2},
      {"two replicas needed, one free: the co-tenants would not fit, a whole L4", sliced(3),
       serving("3B"), 0, kG6xlHourly},
      {"one replica needed, one free: it fits beside them", sliced(3), serving("1.55B"), 1,
       kG6xlHourly / 3},
      {"15.6 GiB (7B) would take all four: a whole L4", sliced(1), serving("7B"), 0, kG6xlHourly},
      {"a 20 ms target on vLLM: 16 ms a token alone, 64 with three busy beside it", sliced(1),
       serving("1.55B").framework(Framework::vLLM).latency(20), 0, kG6xlHourly},
      {"isolation asked for: never time-sliced", sliced(1), isolated, 0, kG6xlHourly},
      {"a GPU no pod keeps up costs what a new one does", sliced(0), serving("1.55B"), 0,
       kG6xlHourly},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto decision = decideOn(c.cluster, c.intent);
    REQUIRE(decision.placement);
    const auto& placement = *decision.placement;
    CAPTURE(decision.reason);
    CHECK(placement.instanceType == "g6.xlarge");
    CHECK(placement.timeSlices == (c.replicas > 0 ? 4 : 0));
    CHECK(placement.acceleratorCount == std::max(c.replicas, 1));
    CHECK(placement.hourlyCost == doctest::Approx(c.hourly));
  }
}

TEST_CASE("a time-sliced placement says what it shares and is written as replicas") {
  const auto decision = decideOn(sliced(1), serving("3B"));
  REQUIRE(decision.placement);
  const auto& placement = *decision.placement;
  CHECK(placement.paidByCluster() == doctest::Approx(0));
  REQUIRE(placement.wholeDeviceHourlyCost);
  CHECK(*placement.wholeDeviceHourlyCost == doctest::Approx(kG6xlHourly));
  CHECK(decision.reason.find("g6.xlarge (2 of 4 time-sliced replicas of an L4)") !=
        std::string::npos);
  CHECK(decision.reason.find("time-slicing isolates neither memory nor faults") !=
        std::string::npos);
  CHECK(placement.costNote.find("2 idle time-sliced L4 replicas on an existing g6.xlarge") !=
        std::string::npos);
  const auto scheduling = renderScheduling(placement, *shippedCatalog(), Policy{});
  CHECK(scheduling.resources.at("nvidia.com/gpu.shared") == "2");
  CHECK(scheduling.resources.count("nvidia.com/gpu") == 0);
}

TEST_CASE("a GPU's replicas are not whole GPUs, renamed or not") {
  const auto engine = shippedEngine();
  const auto& catalog = *shippedCatalog();
  const auto index = catalog.indexOf("g6.xlarge");
  for (const bool renamed : {true, false}) {
    CAPTURE(renamed);
    const Cluster cluster{{g6TimeSliced(4, renamed)}, {0}, {}};
    const auto state = cluster.state();
    const auto view = clusterViewOf(state, catalog, engine->policy());
    const Offer* offer = view.capacity.offer(index, CapacityType::OnDemand);
    REQUIRE(offer);
    REQUIRE(offer->room.size() == 1);
    CHECK(offer->room[0].devices == 0);
    // Only the renamed replicas can be asked for apart from whole GPUs.
    CHECK(offer->room[0].timeSlices == (renamed ? 4 : 0));
    CHECK(view.capacity.timeSlicesOf(index, CapacityType::OnDemand) == (renamed ? 4 : 0));
    // No NodePool either: a whole L4 has nowhere to go.
    const auto whole =
        decide(*engine, serving("1.55B").only({"g6.xlarge"}).intent, ClusterContext{&view, {}, {}});
    if (renamed) {
      REQUIRE(whole.placement);
      CHECK(whole.placement->timeSlices == 4);
    } else {
      CHECK_FALSE(whole.placement);
    }
  }
}

TEST_CASE("nodes and pods read time-sliced replicas and the ways a GPU is sliced") {
  const auto node = nodeFromJson(nlohmann::json::parse(R"({
    "metadata": {"labels": {"node.kubernetes.io/instance-type": "g6.xlarge",
                            "nvidia.com/gpu.replicas": "4",
                            "nvidia.com/gpu.sharing-strategy": "time-slicing"}},
    "status": {"allocatable": {"cpu": "3920m", "memory": "14481Mi", "pods": "58",
                               "nvidia.com/gpu.shared": "4"},
               "conditions": [{"type": "Ready", "status": "True"}]}})"));
  CHECK(node.gpuReplicas == 4);
  CHECK(node.allocatable.sharedGpus == 4);
  CHECK(node.allocatable.gpus == 0);
  const auto pod = podFromJson(nlohmann::json::parse(R"({
    "spec": {"nodeName": "n", "containers": [
      {"name": "a", "resources": {"limits": {"nvidia.com/gpu.shared": "2"}}}]},
    "status": {"phase": "Running"}})"));
  CHECK(pod.devices.sharedGpus == 2);
}

}  // namespace gpuplacement::core::time_slicing_test
