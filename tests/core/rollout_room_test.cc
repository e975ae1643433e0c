// Whether a Deployment's rollout can finish on the room there is: a new pod
// beside the old ones (maxSurge) needs room of its own unless an old one may
// go first (maxUnavailable, Recreate) or a NodePool can launch a node.
#include "core/plan/rollout_room.h"

#include <doctest/doctest.h>

#include "support/cluster_fixture.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core::rollout_room_test {

using testing::Cluster;
using testing::g6Pool;
using testing::g6x1;
using testing::g6x4;

Placement onG6(const char* type, int devices) {
  Placement placement;
  placement.tier = Tier::NVIDIA;
  placement.instanceType = type;
  placement.acceleratorCount = devices;
  placement.capacityType = CapacityType::OnDemand;
  return placement;
}

TargetState deployment(int replicas, int surge, int unavailable, bool recreate = false) {
  TargetState state;
  state.kind = TargetKind::Deployment;
  state.replicas = replicas;
  state.surge = surge;
  state.unavailable = unavailable;
  state.recreate = recreate;
  return state;
}

TEST_CASE("a rollout that cannot finish on the room there is, and those that can") {
  const auto catalog = testing::shippedCatalog();
  struct Row {
    const char* name;
    Cluster cluster;
    TargetState target;
    Placement wanted;
    bool stalls;
  };
  const Row rows[] = {
      // The issue's case: one g6.xlarge, its L4 held by the one replica,
      // maxSurge 25% of 1 (1), maxUnavailable 25% of 1 (0).
      {"a full one-node pool, the defaults",
       {{g6x1()}, {1}, {}},
       deployment(1, 1, 0),
       onG6("g6.xlarge", 1),
       true},
      {"maxUnavailable 1: the old pod goes first",
       {{g6x1()}, {1}, {}},
       deployment(1, 1, 1),
       onG6("g6.xlarge", 1),
       false},
      {"Recreate", {{g6x1()}, {1}, {}}, deployment(1, 0, 0, true), onG6("g6.xlarge", 1), false},
      {"a second node with a free L4",
       {{g6x1(), g6x1()}, {1, 0}, {}},
       deployment(1, 1, 0),
       onG6("g6.xlarge", 1),
       false},
      {"room beside the old pod on a bigger node",
       {{g6x4(false)}, {3}, {}},
       deployment(1, 1, 0),
       onG6("g6.12xlarge", 1),
       false},
      {"two devices a replica, one free",
       {{g6x4(false)}, {3}, {}},
       deployment(1, 1, 0),
       onG6("g6.12xlarge", 2),
       true},
      // Karpenter launches a node for the surge pod.
      {"a NodePool may launch one",
       {{g6x4(true)}, {4}, {g6Pool()}},
       deployment(1, 1, 0),
       onG6("g6.12xlarge", 1),
       false},
      // Nothing to tell from: no node of the type at all is the decision's.
      {"no node of the type",
       {{g6x1()}, {1}, {}},
       deployment(1, 1, 0),
       onG6("g6.12xlarge", 1),
       false},
      {"a StatefulSet replaces pods one at a time",
       {{g6x1()}, {1}, {}},
       [] {
         auto set = deployment(1, 0, 0);
         set.kind = TargetKind::StatefulSet;
         return set;
       }(),
       onG6("g6.xlarge", 1),
       false},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.name));
    const auto view = clusterViewOf(row.cluster.state(), *catalog, Policy{});
    RolloutRoomInput input;
    input.target = &row.target;
    input.targetName = "chat";
    input.wanted = &row.wanted;
    input.view = &view;
    input.catalog = catalog.get();
    const auto stall = rolloutStall(input);
    CHECK(stall.has_value() == row.stalls);
    if (stall) {
      for (const char* words :
           {"a rollout of Deployment chat would not finish",
            "maxSurge lets 1 pod start beside the 1 pod running", "maxUnavailable 0", "no node of ",
            "a node more of ", "maxUnavailable: 1", "strategy Recreate"}) {
        CHECK_MESSAGE(stall->find(words) != std::string::npos, *stall);
      }
    }
  }
  // Without a cluster view nothing can be told: the write goes.
  const auto target = deployment(1, 1, 0);
  const auto wanted = onG6("g6.xlarge", 1);
  RolloutRoomInput blind;
  blind.target = &target;
  blind.wanted = &wanted;
  blind.catalog = catalog.get();
  CHECK_FALSE(rolloutStall(blind));
}

TEST_CASE("maxSurge and maxUnavailable as the Deployment controller resolves them") {
  struct Row {
    const char* strategy;
    int replicas;
    int surge;
    int unavailable;
    bool recreate;
  };
  const Row rows[] = {
      {R"({})", 1, 1, 0, false},  // 25% each: up for surge, down for unavailable
      {R"({})", 4, 1, 1, false},
      {R"({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}})", 1, 0,
       1, false},
      {R"({"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "10%"}})", 3, 0, 1, false},
      {R"({"rollingUpdate": {"maxSurge": "50%", "maxUnavailable": "50%"}})", 3, 2, 1, false},
      {R"({"type": "Recreate"})", 2, 0, 0, true},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.strategy));
    CAPTURE(row.replicas);
    const nlohmann::json object = {
        {"metadata", {{"name", "chat"}, {"uid", "u"}, {"generation", 1}}},
        {"spec",
         {{"replicas", row.replicas},
          {"strategy", nlohmann::json::parse(row.strategy)},
          {"template", {{"spec", {{"containers", {{{"name", "c"}}}}}}}}}}};
    const auto state = targetFromJson(TargetKind::Deployment, object);
    CHECK(state.surge == row.surge);
    CHECK(state.unavailable == row.unavailable);
    CHECK(state.recreate == row.recreate);
  }
}

}  // namespace gpuplacement::core::rollout_room_test
