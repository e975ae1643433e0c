// Decisions that know the cluster: only types a node carries or a NodePool
// may launch are candidates, idle devices on existing nodes come first, and
// the node labels are the ones the nodes carry.
#include "core/decide/cluster_cost.h"

#include <doctest/doctest.h>

#include "base/time_format.h"
#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "core/plan/status.h"
#include "support/cluster_fixture.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using testing::Cluster;
using testing::g6Pool;
using testing::g6x1;
using testing::g6x4;
using testing::IntentBuilder;
using testing::shippedCatalog;
using testing::shippedEngine;

// 7B at fp16 for inference needs 15.6 GiB: one L4.
WorkloadIntent service() {
  return IntentBuilder(WorkloadKind::Inference, "7B")
      .tiers({Tier::NVIDIA})
      .capacity(CapacityType::OnDemand);
}

bool mentions(const Decision& decision, const std::string& text) {
  for (const auto& alternative : decision.alternatives) {
    if (alternative.rejected.find(text) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

TEST_CASE("candidates are the types the cluster has or can get") {
  struct Case {
    const char* label;
    Cluster cluster;
    CapacitySource source;
    WorkloadIntent intent;
    CapacitySource resolved;
    const char* chosen;     // empty: cannot place
    const char* unoffered;  // an alternative or cannotPlace names it
  };
  const auto onlyG6x4 = [] {
    auto intent = service();
    intent.constraints.instanceTypes = {"g6.12xlarge"};
    return intent;
  };
  // Batch work may run on spot without the policy's consent.
  const WorkloadIntent anyG6x4 = IntentBuilder(WorkloadKind::BatchInference, "7B")
                                     .tiers({Tier::NVIDIA})
                                     .capacity(CapacityType::Any)
                                     .only({"g6.12xlarge"});
  auto onlyG5 = service();
  onlyG5.constraints.instanceTypes = {"g5.xlarge"};
  auto spotG6 = service();
  spotG6.constraints.capacityType = CapacityType::Spot;
  spotG6.constraints.instanceTypes = {"g6.xlarge"};
  auto onDemandG6 = service();
  onDemandG6.constraints.instanceTypes = {"g6.xlarge"};
  auto spotG6Node = g6x1();
  spotG6Node.capacityType = CapacityType::Spot;
  const Case cases[] = {
      {"node groups of g6.12xlarge with one L4 free",
       {{g6x4(false)}, {3}, {}},
       CapacitySource::Auto,
       service(),
       CapacitySource::Nodes,
       "g6.12xlarge",
       ""},
      {"node groups of full g6.12xlarge only: no room, and nothing launches one",
       {{g6x4(false)}, {4}, {}},
       CapacitySource::Auto,
       service(),
       CapacitySource::Nodes,
       "",
       "the 1 node of g6.12xlarge has room for 0 of 1 replica"},
      // Its spot option ranks first and exists nowhere; the full on-demand
      // nodes are what the reader must learn of.
      {"any capacity type: the on-demand g6.12xlarge nodes are full, none is spot",
       {{g6x4(false)}, {4}, {}},
       CapacitySource::Auto,
       anyG6x4,
       CapacitySource::Nodes,
       "",
       "the 1 node of g6.12xlarge has room for 0 of 1 replica"},
      {"full g6.12xlarge, but a NodePool may launch another",
       {{g6x4(true)}, {4}, {g6Pool()}},
       CapacitySource::NodePools,
       onlyG6x4(),
       CapacitySource::NodePools,
       "g6.12xlarge",
       ""},
      {"the one type allowed exists nowhere",
       {{g6x4(false)}, {0}, {}},
       CapacitySource::Nodes,
       onlyG5,
       CapacitySource::Nodes,
       "",
       "no node or NodePool offers g5.xlarge"},
      {"a NodePool may launch a g6.xlarge",
       {{g6x4(true)}, {4}, {g6Pool()}},
       CapacitySource::Auto,
       service(),
       CapacitySource::NodePools,
       "g6.xlarge",
       ""},
      {"Nodes ignores the NodePools",
       {{g6x4(true)}, {3}, {g6Pool()}},
       CapacitySource::Nodes,
       service(),
       CapacitySource::Nodes,
       "g6.12xlarge",
       ""},
      {"source None: the whole catalog",
       {{g6x4(false)}, {0}, {}},
       CapacitySource::None,
       service(),
       CapacitySource::None,
       "g5.xlarge",
       ""},
      {"nodes not readable: as None",
       {{}, {}, {}, false},
       CapacitySource::Auto,
       service(),
       CapacitySource::None,
       "g5.xlarge",
       ""},
      {"spot asked, the type there on-demand only",
       {{g6x1()}, {0}, {}},
       CapacitySource::Nodes,
       spotG6,
       CapacitySource::Nodes,
       "",
       "no node or NodePool offers g6.xlarge spot, the best that fit (capacity.source is Nodes: "
       "the types of the nodes that exist); g6.xlarge is there on-demand, which "
       "constraints.capacityType Spot rules out"},
      {"on-demand asked, the type there as spot only",
       {{spotG6Node}, {0}, {}},
       CapacitySource::Nodes,
       onDemandG6,
       CapacitySource::Nodes,
       "",
       "no node or NodePool offers g6.xlarge, the best that fit (capacity.source is Nodes: the "
       "types of the nodes that exist); g6.xlarge is there as spot, which "
       "constraints.capacityType OnDemand rules out"},
      {"a control plane alone under Auto: as None",
       {},
       CapacitySource::Auto,
       service(),
       CapacitySource::None,
       "g5.xlarge",
       ""},
      {"a control plane alone under Nodes: nothing",
       {},
       CapacitySource::Nodes,
       service(),
       CapacitySource::Nodes,
       "",
       "no node or NodePool offers g5.xlarge"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    Policy policy;
    policy.capacity.source = c.source;
    const auto engine = shippedEngine(policy);
    const auto state = c.cluster.state();
    const auto view = clusterViewOf(state, *shippedCatalog(), policy);
    CHECK(view.capacity.source == c.resolved);
    const auto decision = decide(*engine, c.intent, ClusterContext{&view, {}, {}});
    if (*c.chosen == '\0') {
      CHECK_FALSE(decision.placement);
      CHECK(decision.placedReason() == std::string("CannotPlace"));
      CHECK_MESSAGE(decision.cannotPlace.find(c.unoffered) != std::string::npos,
                    decision.cannotPlace);
      continue;
    }
    REQUIRE(decision.placement);
    CHECK(decision.placement->instanceType == c.chosen);
    if (*c.unoffered != '\0') {
      CHECK(mentions(decision, c.unoffered));
    }
  }
}

TEST_CASE("idle devices on existing nodes first; a new node costs the whole node") {
  struct Case {
    const char* label;
    Cluster cluster;
    OwnDevices own;
    const char* chosen;
    const char* note;
    double hourly;
  };
  const int g6x4Index = shippedCatalog()->indexOf("g6.12xlarge");
  const int g6x1Index = shippedCatalog()->indexOf("g6.xlarge");
  const Case cases[] = {
      {"half-empty g6.12xlarge: the first service",
       {{g6x4(true)}, {2}, {g6Pool()}},
       {},
       "g6.12xlarge",
       "1 idle L4 on an existing g6.12xlarge at $4.60/h: 1 of 4 L4, charged its share (25%)",
       4.6016 / 4},
      {"then the second",
       {{g6x4(true)}, {3}, {g6Pool()}},
       {},
       "g6.12xlarge",
       "1 idle L4 on an existing g6.12xlarge",
       4.6016 / 4},
      {"the node is full: a new node",
       {{g6x4(true)}, {4}, {g6Pool()}},
       {},
       "g6.xlarge",
       "1 of 1 L4 on a new g6.xlarge",
       0.8048},
      {"empty cluster: the cheapest node that fits",
       {{}, {}, {g6Pool()}},
       {},
       "g6.xlarge",
       "on a new g6.xlarge",
       0.8048},
      {"its own device counts as idle to it",
       {{g6x4(true)}, {4}, {g6Pool()}},
       {g6x4Index, CapacityType::OnDemand, 1, 1},
       "g6.12xlarge",
       "1 idle L4 on an existing g6.12xlarge",
       4.6016 / 4},
      {"an empty node costs the whole node: Karpenter would let it go",
       {{g6x4(true)}, {0}, {g6Pool()}},
       {},
       "g6.xlarge",
       "1 of 1 L4 on a new g6.xlarge",
       0.8048},
      {"replicas not bound yet hold nothing to give back",
       {{g6x4(true)}, {0}, {g6Pool()}},
       {g6x4Index, CapacityType::OnDemand, 1, 1},
       "g6.xlarge",
       "1 of 1 L4 on a new g6.xlarge",
       0.8048},
      {"alone on a g6.12xlarge, staying costs the whole node: it moves",
       {{g6x4(true)}, {1}, {g6Pool()}},
       {g6x4Index, CapacityType::OnDemand, 1, 1},
       "g6.xlarge",
       "1 of 1 L4 on a new g6.xlarge",
       0.8048},
      {"alone on a g6.xlarge, it stays on it",
       {{g6x1()}, {1}, {}},
       {g6x1Index, CapacityType::OnDemand, 1, 1},
       "g6.xlarge",
       "1 of 1 L4 on the g6.xlarge it runs on alone at $0.8048/h, the whole node",
       0.8048},
  };
  const auto engine = shippedEngine();
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto state = c.cluster.state();
    const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
    const auto decision = decide(*engine, service(), ClusterContext{&view, c.own, {}});
    REQUIRE(decision.placement);
    CAPTURE(decision.placement->costNote);
    CHECK(decision.placement->instanceType == c.chosen);
    CHECK(decision.placement->costNote.find(c.note) != std::string::npos);
    CHECK(decision.placement->hourlyCost == doctest::Approx(c.hourly));
  }
}

TEST_CASE("the cost note says what the workload takes, not what others leave idle") {
  // Its note is in its status: a count of the type's idle devices would
  // move with every pod on those nodes, go stale at once, and rewrite the
  // status of every workload sharing them. Others come and go around its
  // own bound pod; its note stays as it was.
  const int g6x4Index = shippedCatalog()->indexOf("g6.12xlarge");
  const OwnDevices itsPod{g6x4Index, CapacityType::OnDemand, 1, 1};
  const Cluster worlds[] = {
      {{g6x4(true)}, {2}, {g6Pool()}},                 // it and one other pod
      {{g6x4(true)}, {3}, {g6Pool()}},                 // a second service came
      {{g6x4(true)}, {4}, {g6Pool()}},                 // the node is full
      {{g6x4(true), g6x4(true)}, {4, 1}, {g6Pool()}},  // a second node, 3 idle
  };
  const auto engine = shippedEngine();
  std::string first;
  for (const auto& world : worlds) {
    const auto state = world.state();
    const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
    const auto decision = decide(*engine, service(), ClusterContext{&view, itsPod, {}});
    REQUIRE(decision.placement);
    CAPTURE(decision.placement->costNote);
    CHECK(decision.placement->instanceType == "g6.12xlarge");
    if (first.empty()) {
      first = decision.placement->costNote;
      CHECK(first.find("1 idle L4 on an existing g6.12xlarge") != std::string::npos);
    }
    CHECK(decision.placement->costNote == first);
  }
  // Three replicas on idle devices: what they take, on the type's nodes.
  auto three = service();
  three.replicas = 3;
  const Cluster roomy{{g6x4(true), g6x4(true)}, {1, 1}, {g6Pool()}};
  const auto state = roomy.state();
  const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
  const auto decision = decide(*engine, three, ClusterContext{&view, {}, {}});
  REQUIRE(decision.placement);
  CAPTURE(decision.placement->costNote);
  CHECK(decision.placement->costNote.find("3 idle L4 on existing g6.12xlarge nodes") !=
        std::string::npos);
}

TEST_CASE("replicas beyond the idle devices price new nodes") {
  Cluster cluster{{g6x4(true)}, {3}, {g6Pool()}};
  const auto engine = shippedEngine();
  const auto state = cluster.state();
  const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
  auto intent = service();
  intent.replicas = 3;
  const auto decision = decide(*engine, intent, ClusterContext{&view, {}, {}});
  REQUIRE(decision.placement);
  CAPTURE(decision.placement->costNote);
  // On the g6.12xlarge, one replica takes the idle L4 and the other two a
  // new g6.12xlarge ($4.60/h more for the cluster); three new g6.xlarge
  // cost $2.41/h more, and win.
  CHECK(decision.placement->instanceType == "g6.xlarge");
  CHECK(decision.placement->nodes == 3);
}

TEST_CASE("the node labels are the ones the nodes carry under scheme Auto") {
  struct Case {
    const char* label;
    Cluster cluster;
    LabelScheme scheme;
    bool capacitySet;
    LabelScheme resolved;
    std::map<std::string, std::string> selector;
  };
  const std::map<std::string, std::string> karpenter = {
      {"karpenter.k8s.aws/instance-gpu-name", "l4"},
      {"karpenter.k8s.aws/instance-gpu-count", "4"},
      {"karpenter.k8s.aws/instance-gpu-memory", "22888"},
      {"karpenter.sh/capacity-type", "on-demand"}};
  const std::map<std::string, std::string> nodeGroups = {
      {"node.kubernetes.io/instance-type", "g6.12xlarge"},
      {"eks.amazonaws.com/capacityType", "ON_DEMAND"}};
  const std::map<std::string, std::string> asBefore = {
      {"node.kubernetes.io/instance-type", "g6.12xlarge"},
      {"karpenter.sh/capacity-type", "on-demand"}};
  auto mixed = Cluster{{g6x4(true), g6x4(false)}, {0, 0}, {}};
  const Case cases[] = {
      {"Karpenter's nodes",
       {{g6x4(true)}, {0}, {}},
       LabelScheme::Auto,
       false,
       LabelScheme::Karpenter,
       karpenter},
      {"managed node groups",
       {{g6x4(false)}, {0}, {}},
       LabelScheme::Auto,
       false,
       LabelScheme::InstanceType,
       nodeGroups},
      {"capacity labels disagree: no capacity selector",
       mixed,
       LabelScheme::Auto,
       false,
       LabelScheme::InstanceType,
       {{"node.kubernetes.io/instance-type", "g6.12xlarge"}}},
      {"a scheme set by hand stays",
       {{g6x4(true)}, {0}, {}},
       LabelScheme::InstanceType,
       false,
       LabelScheme::InstanceType,
       asBefore},
      {"a capacity label set by hand stays",
       {{g6x4(false)}, {0}, {}},
       LabelScheme::Auto,
       true,
       LabelScheme::InstanceType,
       asBefore},
      {"no cluster: as before",
       {{}, {}, {}, false},
       LabelScheme::Auto,
       false,
       LabelScheme::InstanceType,
       asBefore},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    Policy policy;
    policy.labelScheme = c.scheme;
    policy.capacityTypeLabelSet = c.capacitySet;
    const auto state = c.cluster.state();
    const auto view = clusterViewOf(state, *shippedCatalog(), policy);
    CHECK(view.labels.scheme == c.resolved);
    const auto engine = shippedEngine(policy);
    auto intent = service();
    intent.constraints.instanceTypes = {"g6.12xlarge"};
    const auto decision = decide(*engine, intent, ClusterContext{&view, {}, {}});
    REQUIRE(decision.placement);
    const auto scheduling =
        renderScheduling(*decision.placement, *shippedCatalog(), policy, view.labels);
    CHECK(scheduling.nodeSelector == c.selector);
  }
}

TEST_CASE("without a cluster view the engine answers as before") {
  const auto engine = shippedEngine();
  for (const auto& intent :
       {service(), WorkloadIntent(IntentBuilder(WorkloadKind::Training, "13B").replicas(9))}) {
    const auto offline = decide(*engine, intent);
    const auto viewless = decide(*engine, intent, ClusterContext{});
    REQUIRE(offline.placement);
    REQUIRE(viewless.placement);
    CHECK(viewless.placement->instanceType == offline.placement->instanceType);
    CHECK(viewless.placement->costNote == offline.placement->costNote);
    CHECK(viewless.alternatives.size() == offline.alternatives.size());
  }
}

}  // namespace gpuplacement::core

namespace gpuplacement::core {

TEST_CASE("the policy's status says what it sees of the cluster") {
  struct Case {
    const char* label;
    Cluster cluster;
    CapacitySource source;
    const char* condition;  // CapacityKnown's status
    const char* reason;
    const char* resolved;
    const char* scheme;
    const char* capacityKey;
  };
  const Case cases[] = {
      {"Karpenter",
       {{g6x4(true)}, {0}, {g6Pool()}},
       CapacitySource::Auto,
       "True",
       "NodePools",
       "NodePools",
       "Karpenter",
       "karpenter.sh/capacity-type"},
      {"managed node groups",
       {{g6x4(false)}, {0}, {}},
       CapacitySource::Auto,
       "True",
       "Nodes",
       "Nodes",
       "InstanceType",
       "eks.amazonaws.com/capacityType"},
      {"RBAC refuses nodes",
       {{}, {}, {}, false},
       CapacitySource::Auto,
       "False",
       "NodesUnreadable",
       "None",
       "InstanceType",
       "karpenter.sh/capacity-type"},
      {"source None asked for",
       {{}, {}, {}, false},
       CapacitySource::None,
       "True",
       "None",
       "None",
       "InstanceType",
       "karpenter.sh/capacity-type"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    Policy policy;
    policy.capacity.source = c.source;
    const auto state = c.cluster.state();
    const auto view = clusterViewOf(state, *testing::shippedCatalog(), policy);
    PolicyStatusInput input;
    input.generation = 2;
    input.cluster = &view;
    const auto status = policyStatus(input);
    CHECK(status["capacity"]["source"] == c.resolved);
    CHECK(status["nodeLabels"]["scheme"] == c.scheme);
    CHECK(status["nodeLabels"]["capacityTypeKey"] == c.capacityKey);
    bool found = false;
    for (const auto& condition : status["conditions"]) {
      if (condition["type"] == "CapacityKnown") {
        found = true;
        CHECK(condition["status"] == c.condition);
        CHECK(condition["reason"] == c.reason);
      }
    }
    CHECK(found);
  }
}

}  // namespace gpuplacement::core

namespace gpuplacement::core {
namespace {

// An m5.xlarge of a managed node group: 4 vCPUs, 3.92 allocatable.
NodeView m5xlarge() {
  NodeView node;
  node.instanceType = "m5.xlarge";
  node.labels = kInstanceTypeLabel | kNodeGroupCapacityLabel;
  node.milliCpu = 3920;
  node.memoryBytes = 14481LL << 20;
  return node;
}

}  // namespace

// The embedder of the samples: 3 replicas of a 350M model, each asking 2
// CPUs. Two m5.xlarge nodes hold one such pod each: placed there, the
// third would wait for fallbackAfter.
TEST_CASE("where nothing can launch a node, the nodes there must hold every replica") {
  struct Case {
    const char* label;
    int nodes;
    std::vector<std::int64_t> usedMilliCpu;  // per node, by other pods
    bool placedThere;                        // the placement in force is m5.xlarge
    const char* chosen;                      // empty: cannot place
    const char* message;                     // cannotPlace names it
    int ownPods = 0;  // of the workload, 2 CPUs each on the first nodes (in usedMilliCpu)
    int surge = 0;
    std::int32_t podLimit = 0;  // allocatable pods per node; 0: not stated
    std::int32_t usedPods = 0;  // on each node (the workload's own among them)
  };
  const Case cases[] = {
      {"three idle nodes hold three replicas", 3, {}, false, "m5.xlarge", ""},
      {"two nodes hold two of three",
       2,
       {},
       false,
       "",
       "the 2 nodes of m5.xlarge have room for 2 of 3 replicas"},
      {"another pod's 2 CPUs leave room for two",
       3,
       {0, 2000, 0},
       false,
       "",
       "the 3 nodes of m5.xlarge have room for 2 of 3 replicas"},
      {"a small pod leaves room for the replica", 3, {0, 1000, 0}, false, "m5.xlarge", ""},
      {"the placement in force stays: its own pods hold the room", 2, {}, true, "m5.xlarge", ""},
      // Before it is placed, its pods run where the scheduler put them: on
      // these nodes their room is its own, and a rollout's surge starts
      // beside them.
      {"its own pods' room is given back: 3 and a surge of 1 on 4 nodes",
       4,
       {2000, 2000, 2000},
       false,
       "m5.xlarge",
       "",
       3,
       1},
      {"3 nodes its pods fill leave no room for the surge",
       3,
       {2000, 2000, 2000},
       false,
       "",
       "the 3 nodes of m5.xlarge have room for 3 of 4 replicas (3 and a rollout's surge of 1 "
       "beside its pods there)",
       3,
       1},
      {"under Recreate there is no surge: its 3 nodes hold it",
       3,
       {2000, 2000, 2000},
       false,
       "m5.xlarge",
       "",
       3,
       0},
      // CPU and memory to spare, but the kubelet admits no more pods.
      {"nodes at their pod limit hold no replica",
       3,
       {},
       false,
       "",
       "the 3 nodes of m5.xlarge have room for 0 of 3 replicas",
       0,
       0,
       58,
       58},
      {"one pod slot left on each: three replicas fit",
       3,
       {},
       false,
       "m5.xlarge",
       "",
       0,
       0,
       58,
       57},
      {"its own pods' slots are given back",
       3,
       {2000, 2000, 2000},
       false,
       "m5.xlarge",
       "",
       3,
       0,
       58,
       58},
  };
  const WorkloadIntent intent = IntentBuilder(WorkloadKind::Inference, "350M")
                                    .precision(Precision::FP32)
                                    .tiers({Tier::CPU})
                                    .only({"m5.xlarge"})
                                    .podRequests(2, 4)
                                    .replicas(3);
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    Policy policy;
    policy.capacity.source = CapacitySource::Nodes;
    const auto engine = shippedEngine(policy);
    auto shape = m5xlarge();
    shape.pods = c.podLimit;
    std::vector<NodeView> nodes(static_cast<std::size_t>(c.nodes), shape);
    ClusterState state;
    state.nodesKnown = true;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      state.nodes.push_back({"m5-" + std::to_string(i),
                             &nodes[i],
                             {},
                             i < c.usedMilliCpu.size() ? c.usedMilliCpu[i] : 0,
                             0,
                             c.usedPods});
    }
    const auto view = clusterViewOf(state, *shippedCatalog(), policy);
    ClusterContext context{&view, {}, {}};
    if (c.placedThere) {
      context.own = {shippedCatalog()->indexOf("m5.xlarge"), CapacityType::OnDemand, 2, 0};
    }
    for (int i = 0; i < c.ownPods; ++i) {
      context.ownPods.push_back(
          {"m5-" + std::to_string(i), "m5.xlarge", CapacityType::OnDemand, 0, 2000, 4LL << 30});
    }
    auto asked = intent;
    asked.surge = c.surge;
    const auto decision = decide(*engine, asked, context);
    if (*c.chosen == '\0') {
      CHECK_FALSE(decision.placement);
      CHECK_MESSAGE(decision.cannotPlace.find(c.message) != std::string::npos,
                    decision.cannotPlace);
      continue;
    }
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    CHECK(decision.placement->instanceType == c.chosen);
  }
}

}  // namespace gpuplacement::core

namespace gpuplacement::core {
namespace {

// A g6.12xlarge Karpenter launched into a capacity reservation.
NodeView reservedG6x4(const char* id) {
  NodeView node = testing::g6x4(true);
  node.capacityType = CapacityType::Reserved;
  node.reservation = std::string(id) + " (Capacity Block)";
  return node;
}

}  // namespace

TEST_CASE("reserved nodes first, at nothing more, while they have room") {
  struct Case {
    const char* label;
    Cluster cluster;
    CapacityType asked;
    int replicas;
    const char* chosen;
    CapacityType capacity;
    double hourly;
    const char* reservation;
  };
  const Case cases[] = {
      {"an empty reserved node: paid for, so it comes first",
       {{reservedG6x4("cr-1")}, {0}, {g6Pool()}},
       CapacityType::OnDemand,
       1,
       "g6.12xlarge",
       CapacityType::Reserved,
       0,
       "cr-1 (Capacity Block)"},
      {"Any may take it too",
       {{reservedG6x4("cr-1")}, {2}, {g6Pool()}},
       CapacityType::Any,
       2,
       "g6.12xlarge",
       CapacityType::Reserved,
       0,
       "cr-1 (Capacity Block)"},
      {"two reservations, both named",
       {{reservedG6x4("cr-2"), reservedG6x4("cr-1")}, {4, 0}, {g6Pool()}},
       CapacityType::OnDemand,
       1,
       "g6.12xlarge",
       CapacityType::Reserved,
       0,
       "cr-1 (Capacity Block), cr-2 (Capacity Block)"},
      {"no room left on the reservation: a new on-demand node",
       {{reservedG6x4("cr-1")}, {4}, {g6Pool()}},
       CapacityType::OnDemand,
       1,
       "g6.xlarge",
       CapacityType::OnDemand,
       0.8048,
       ""},
      {"room for some replicas only: never half on it",
       {{reservedG6x4("cr-1")}, {2}, {g6Pool()}},
       CapacityType::OnDemand,
       3,
       "g6.xlarge",
       CapacityType::OnDemand,
       0.8048,
       ""},
  };
  const auto engine = shippedEngine();
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    const auto state = c.cluster.state();
    const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
    auto intent = service();
    intent.constraints.capacityType = c.asked;
    intent.replicas = c.replicas;
    const auto decision = decide(*engine, intent, ClusterContext{&view, {}, {}});
    REQUIRE(decision.placement);
    CAPTURE(decision.placement->costNote);
    CHECK(decision.placement->instanceType == c.chosen);
    CHECK(decision.placement->capacityType == c.capacity);
    CHECK(decision.placement->hourlyCost == doctest::Approx(c.hourly));
    CHECK(decision.placement->reservation == c.reservation);
    if (c.capacity == CapacityType::Reserved) {
      CHECK(decision.placement->costNote.find("reserved g6.12xlarge") != std::string::npos);
      CHECK(decision.placement->costNote.find("nothing more for the cluster") != std::string::npos);
      // Its pods select the reserved nodes.
      const auto scheduling =
          renderScheduling(*decision.placement, *shippedCatalog(), engine->policy(), view.labels);
      CHECK(scheduling.nodeSelector.at("karpenter.sh/capacity-type") == "reserved");
    }
  }
}

TEST_CASE("reserved nodes are not offered to spot, nor without a capacity-type selector") {
  const auto engine = shippedEngine();
  Cluster cluster{{reservedG6x4("cr-1")}, {0}, {g6Pool()}};
  const auto state = cluster.state();
  const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
  auto spot = service();
  spot.constraints.capacityType = CapacityType::Spot;
  spot.kind = WorkloadKind::BatchInference;
  const auto decision = decide(*engine, spot, ClusterContext{&view, {}, {}});
  CHECK((!decision.placement || decision.placement->capacityType != CapacityType::Reserved));

  // A policy that selects no capacity type: its pods could land on any
  // g6.12xlarge, so the reservation is not claimed.
  Policy unlabeled;
  unlabeled.capacityTypeLabel = {"", "", "", ""};
  unlabeled.capacityTypeLabelSet = true;
  const auto engineUnlabeled =
      *PlacementEngine::create(shippedCatalog(), testing::shippedRules(), unlabeled);
  const auto viewUnlabeled = clusterViewOf(state, *shippedCatalog(), unlabeled);
  const auto unlabeledDecision =
      decide(*engineUnlabeled, service(), ClusterContext{&viewUnlabeled, {}, {}});
  REQUIRE(unlabeledDecision.placement);
  CHECK(unlabeledDecision.placement->capacityType != CapacityType::Reserved);
}

TEST_CASE("a reserved node, as its labels say") {
  struct Case {
    const char* labels;
    CapacityType capacity;
    const char* reservation;
  };
  const Case cases[] = {
      {R"({"karpenter.sh/capacity-type": "reserved",
           "karpenter.k8s.aws/capacity-reservation-id": "cr-0abc",
           "karpenter.k8s.aws/capacity-reservation-type": "capacity-block"})",
       CapacityType::Reserved, "cr-0abc (Capacity Block)"},
      {R"({"karpenter.sh/capacity-type": "reserved",
           "karpenter.k8s.aws/capacity-reservation-id": "cr-0def",
           "karpenter.k8s.aws/capacity-reservation-type": "default"})",
       CapacityType::Reserved, "cr-0def (On-Demand Capacity Reservation)"},
      {R"({"eks.amazonaws.com/capacityType": "CAPACITY_BLOCK"})", CapacityType::Reserved,
       "a Capacity Block"},
      // EKS Auto Mode: the same names and values under eks.amazonaws.com/.
      {R"({"karpenter.sh/capacity-type": "reserved",
           "eks.amazonaws.com/capacity-reservation-id": "cr-0aaa",
           "eks.amazonaws.com/capacity-reservation-type": "capacity-block",
           "eks.amazonaws.com/capacity-reservation-interruptible": "false"})",
       CapacityType::Reserved, "cr-0aaa (Capacity Block)"},
      {R"({"karpenter.sh/capacity-type": "reserved",
           "karpenter.k8s.aws/capacity-reservation-id": "cr-0bbb",
           "karpenter.k8s.aws/capacity-reservation-type": "default",
           "karpenter.k8s.aws/capacity-reservation-interruptible": "true"})",
       CapacityType::Reserved, "cr-0bbb (On-Demand Capacity Reservation, interruptible)"},
      {R"({"karpenter.sh/capacity-type": "reserved",
           "eks.amazonaws.com/capacity-reservation-id": "cr-0ccc",
           "eks.amazonaws.com/capacity-reservation-type": "default",
           "eks.amazonaws.com/capacity-reservation-interruptible": "true"})",
       CapacityType::Reserved, "cr-0ccc (On-Demand Capacity Reservation, interruptible)"},
      // Labels left behind once the node left its reservation (Karpenter
      // keeps -interruptible): not reserved, so no reservation.
      {R"({"karpenter.sh/capacity-type": "on-demand",
           "karpenter.k8s.aws/capacity-reservation-interruptible": "false"})",
       CapacityType::OnDemand, ""},
      {R"({"karpenter.sh/capacity-type": "on-demand"})", CapacityType::OnDemand, ""},
      {R"({"eks.amazonaws.com/capacityType": "SPOT"})", CapacityType::Spot, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.labels));
    nlohmann::json node = {{"metadata", {{"labels", nlohmann::json::parse(c.labels)}}}};
    const auto view = nodeFromJson(node);
    CHECK(view.capacityType == c.capacity);
    CHECK(view.reservation == c.reservation);
    CHECK(view.interruptible ==
          (std::string(c.reservation).find("interruptible") != std::string::npos));
  }
}

TEST_CASE("a reservation its owner may take back: only work that consents to that takes it") {
  struct Case {
    const char* label;
    WorkloadKind kind;
    CapacityType asked;
    bool spotForServing;
    CapacityType placed;
    const char* reason;  // in the decision's reason; empty: none
  };
  const Case cases[] = {
      {"online serving, no consent: passed over", WorkloadKind::Inference, CapacityType::Any, false,
       CapacityType::OnDemand,
       "reserved g6.12xlarge not considered: cr-1 (On-Demand Capacity Reservation, "
       "interruptible) may be taken back by its owner, and online serving runs on capacity "
       "that may be taken back only with the policy's consent (PlacementPolicy "
       "spec.capacity.spotForServing)"},
      {"online serving with the policy's consent: taken", WorkloadKind::Inference,
       CapacityType::Any, true, CapacityType::Reserved, ""},
      {"batch work that takes any capacity: taken", WorkloadKind::BatchInference, CapacityType::Any,
       false, CapacityType::Reserved, ""},
      {"batch work that asked for on-demand: passed over", WorkloadKind::BatchInference,
       CapacityType::OnDemand, false, CapacityType::OnDemand,
       "reserved g6.12xlarge not considered: cr-1 (On-Demand Capacity Reservation, "
       "interruptible) may be taken back by its owner, and spec.constraints.capacityType is "
       "OnDemand"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    Policy policy;
    policy.capacity.spotForServing = c.spotForServing;
    const auto engine = shippedEngine(policy);
    NodeView node = testing::g6x4(true);
    node.capacityType = CapacityType::Reserved;
    node.interruptible = true;
    node.reservationId = "cr-1";
    node.reservation = "cr-1 (On-Demand Capacity Reservation, interruptible)";
    const auto pool = testing::g6Pool();
    ClusterState state;
    state.nodesKnown = true;
    state.nodePoolsInstalled = true;
    state.nodes.push_back({"reserved-0", &node, {}});
    state.nodePools.emplace_back("gpu", &pool);
    const auto view = clusterViewOf(state, *shippedCatalog(), engine->policy());
    WorkloadIntent intent = IntentBuilder(c.kind, "7B").tiers({Tier::NVIDIA}).capacity(c.asked);
    const auto decision = decide(*engine, intent, ClusterContext{&view, {}, {}});
    REQUIRE(decision.placement);
    CAPTURE(decision.reason);
    CHECK(decision.placement->capacityType != CapacityType::Spot);
    CHECK((decision.placement->capacityType == CapacityType::Reserved) ==
          (c.placed == CapacityType::Reserved));
    CHECK((std::string(c.reason).empty() ? decision.reason.find("taken back") == std::string::npos
                                         : decision.reason.find(c.reason) != std::string::npos));
  }
}

}  // namespace gpuplacement::core

namespace gpuplacement::core {

TEST_CASE("a deadline passes over reservations that end before it, or may") {
  const auto end = base::parseRfc3339("2026-12-05T11:30:00Z").value();
  const auto before = base::parseRfc3339("2026-12-04T00:00:00Z").value();
  const auto after = base::parseRfc3339("2026-12-06T00:00:00Z").value();
  struct Case {
    const char* label;
    bool capacityBlock;
    std::optional<Timestamp> ends;
    std::optional<Timestamp> deadline;
    CapacityType placed;
    const char* reason;  // in the decision's reason; empty: none
  };
  const Case cases[] = {
      {"no deadline: the block is taken", true, end, std::nullopt, CapacityType::Reserved, ""},
      {"it ends after the deadline: taken", true, end, before, CapacityType::Reserved, ""},
      {"it ends before the deadline: passed over", true, end, after, CapacityType::OnDemand,
       "reserved g6.12xlarge not considered: cr-1 (Capacity Block) ends 2026-12-05T11:30:00Z, "
       "and spec.constraints.deadline is 2026-12-06T00:00:00Z"},
      {"a block whose end is not known: passed over", true, std::nullopt, before,
       CapacityType::OnDemand,
       "reserved g6.12xlarge not considered: cr-1 (Capacity Block) has no end the cluster "
       "states"},
      {"an open-ended reservation: taken", false, std::nullopt, after, CapacityType::Reserved, ""},
  };
  const auto engine = testing::shippedEngine();
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    NodeView node = testing::g6x4(true);
    node.capacityType = CapacityType::Reserved;
    node.capacityBlock = c.capacityBlock;
    node.reservationId = "cr-1";
    node.reservation =
        c.capacityBlock ? "cr-1 (Capacity Block)" : "cr-1 (On-Demand Capacity Reservation)";
    const auto pool = testing::g6Pool();
    ClusterState state;
    state.nodesKnown = true;
    state.nodePoolsInstalled = true;
    ClusterState::Node entry{"reserved-0", &node, {}};
    entry.reservationEnds = c.ends;
    state.nodes.push_back(entry);
    state.nodePools.emplace_back("gpu", &pool);
    const auto view = clusterViewOf(state, *testing::shippedCatalog(), engine->policy());
    auto intent = IntentBuilder(WorkloadKind::Inference, "7B")
                      .tiers({Tier::NVIDIA})
                      .capacity(CapacityType::OnDemand);
    WorkloadIntent built = intent;
    built.constraints.deadline = c.deadline;
    const auto decision = decide(*engine, built, ClusterContext{&view, {}, {}});
    REQUIRE(decision.placement);
    CHECK(decision.placement->capacityType == c.placed);
    if (c.placed == CapacityType::Reserved && c.ends) {
      CHECK(decision.placement->reservation.find("ends 2026-12-05T11:30:00Z") != std::string::npos);
    }
    CAPTURE(decision.reason);
    CHECK((std::string(c.reason).empty() || decision.reason.find(c.reason) != std::string::npos));
  }
}

TEST_CASE("when reservations end, as an EC2NodeClass's status lists them") {
  const auto nodeClass = nlohmann::json::parse(R"({"status": {"capacityReservations": [
      {"id": "cr-0abc", "endTime": "2026-12-05T11:30:00Z", "reservationType": "capacity-block"},
      {"id": "cr-0def", "reservationType": "default"},
      {"id": "cr-0bad", "endTime": "soon"}]}})");
  const auto read = reservationEndsFromJson(nodeClass);
  REQUIRE(read.ends.size() == 1);
  CHECK(read.ends[0].first == "cr-0abc");
  CHECK(base::formatRfc3339(read.ends[0].second) == "2026-12-05T11:30:00Z");
  CHECK(reservationEndsFromJson(nlohmann::json::object()).ends.empty());
}

}  // namespace gpuplacement::core
