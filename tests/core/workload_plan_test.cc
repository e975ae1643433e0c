// Every branch of a GpuWorkload reconcile, without an API server: the
// cached world goes in, the writes and the record come out. The "server"
// here only applies our patch the way the API server does.
#include "core/plan/workload_plan.h"

#include <functional>
#include <map>

#include <doctest/doctest.h>

#include "core/plan/reverts.h"
#include "support/template_patch.h"
#include "support/workload_world.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using namespace planning;

struct Row {
  const char* name;
  std::function<void(World&)> arrange;
  std::optional<TargetOutcome::Kind> serverSays;
  // Expected:
  std::vector<std::string> release;
  std::optional<TargetOutcome::Kind> outcome;  // nullopt: no write to the target planned
  RolloutStep rollout;
  std::map<std::string, std::string> conditions;  // type -> "status/reason"
  std::vector<std::string> events;
  std::optional<std::vector<std::string>> finalizers;
  NextReconcile::Kind next;
  std::function<void(const Reconciled&)> more;
};

const Row kRows[] = {
    {"first placement: the Deployment is patched, the finalizer follows",
     [](World& w) { w.finalizers = {}; },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::None,
     {{"Valid", "True/Valid"},
      {"Placed", "True/Placed"},
      {"Applied", "True/Applied"},
      {"Ready", "False/RolloutInProgress"}},
     {"Placed"},
     std::vector<std::string>{kFinalizer},
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       REQUIRE(r.record.placedNow.has_value());
       CHECK((*r.record.status)["applied"]["targetGeneration"] == 5);
       CHECK(r.record.inForce.has_value());
     }},
    {"its pods cannot be scheduled: Ready says why, in the scheduler's words",
     [](World& w) {
       w.pending = {2, "0/11 nodes are available: 11 Insufficient nvidia.com/gpu.",
                    kNow - std::chrono::minutes(1)};
     },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::None,
     {{"Applied", "True/Applied"}, {"Ready", "False/Unschedulable"}},
     {"Placed", "Unschedulable"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       const auto& ready = (*r.record.status)["conditions"][3];
       CHECK(ready["type"] == "Ready");
       CHECK(ready["message"].get<std::string>().find("2 pods of Deployment chat cannot be "
                                                      "scheduled") == 0);
       CHECK(ready["message"].get<std::string>().find("Insufficient nvidia.com/gpu") !=
             std::string::npos);
     }},
    {"settled and rolled out: nothing to write, Ready",
     [](World& w) { w.placedAndRolledOut(); },
     {},
     {},
     TargetOutcome::Kind::Unchanged,
     RolloutStep::None,
     {{"Applied", "True/Applied"}, {"Ready", "True/RolloutComplete"}},
     {},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) { CHECK(r.record.releaseSlot); }},
    {"drift repaired: our fields someone removed are put back",
     [](World& w) {
       w.placedAndRolledOut();
       w.target->nodeSelector.erase("node.kubernetes.io/instance-type");
     },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::None,
     {{"Applied", "True/Applied"}},
     {"Restored"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       CHECK_FALSE(r.record.placedNow.has_value());
       const auto& reverts = (*r.record.status)["reverts"];
       CHECK(reverts["count"] == 1);
       CHECK(reverts["fields"] == json::array({"spec.template.spec.nodeSelector"}));
       CHECK_FALSE(reverts.contains("stoppedAtGeneration"));
     }},
    {"taken back a third time within the hour: the operator stops and says who and how to fix",
     [](World& w) {
       w.placedAndRolledOut();
       w.target->nodeSelector.erase("node.kubernetes.io/instance-type");
       w.status.reverts = RevertRecord{2,  "2026-11-22T11:50:00Z",         "2026-11-22T11:55:00Z",
                                       {}, "kustomize-controller (Apply)", 0,
                                       0};
     },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "True/Placed"},
      {"Applied", "False/ManagerConflict"},
      {"Ready", "False/ManagerConflict"}},
     {"ManagerConflict"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       const auto& reverts = (*r.record.status)["reverts"];
       CHECK(reverts["count"] == kStopAfterReverts);
       CHECK(reverts["stoppedAtGeneration"] == 5);
       CHECK(reverts["stoppedAtTemplate"].get<std::string>().size() == 16);
       const auto& applied = (*r.record.status)["conditions"][2];
       CHECK(applied["message"].get<std::string>().find("kustomize-controller (Apply)") !=
             std::string::npos);
     }},
    {"stopped, and the pod template has not changed since: still nothing written",
     [](World& w) {
       w.placedAndRolledOut();
       w.target->nodeSelector.erase("node.kubernetes.io/instance-type");
       w.status.reverts = RevertRecord{3,
                                       "2026-11-22T11:50:00Z",
                                       "2026-11-22T11:56:00Z",
                                       {},
                                       "kubectl-replace (Update)",
                                       w.target->generation - 1,
                                       w.target->templateDigest};
     },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Applied", "False/ManagerConflict"}},
     {"ManagerConflict"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"stopped, then the pod template changed (a new commit): one more try",
     [](World& w) {
       w.placedAndRolledOut();
       w.target->nodeSelector.erase("node.kubernetes.io/instance-type");
       w.status.reverts = RevertRecord{3,
                                       "2026-11-22T11:50:00Z",
                                       "2026-11-22T11:56:00Z",
                                       {},
                                       "kubectl-replace (Update)",
                                       w.target->generation - 1,
                                       w.target->templateDigest + 1};
     },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::None,
     {{"Applied", "True/Applied"}},
     {"Restored"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       CHECK_FALSE((*r.record.status)["reverts"].contains("stoppedAtGeneration"));
     }},
    {"an apply took the placement's selector back and pods can be patched: placed at the pods",
     [](World& w) {
       w.podsPlaceable = true;
       w.placedAndRolledOut();
       w.target->nodeSelector = {{"team", "ml"}};  // as the team's manifest has it
     },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::None,
     {{"Applied", "True/Applied"}, {"Ready", "False/RolloutInProgress"}},
     {"Restored"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       REQUIRE(r.plan.write);
       CHECK(r.plan.write->patchRequest.where == PlaceAt::Pods);
       CHECK(r.outcome->state.gated);
       CHECK(r.outcome->state.nodeSelector == std::map<std::string, std::string>{{"team", "ml"}});
     }},
    {"placed at the pods, the pods not known yet (a start): nothing moved back, looked at again",
     [](World& w) {
       w.placedAndRolledOut();
       const auto scheduling = renderScheduling(w.best(), w.engine->catalog(), w.policy);
       w.target = testing::applyPatch(
           *w.target,
           *testing::planPatch(*w.target, &scheduling, {}, "w", "41", PlaceAt::Pods).patch);
       w.podsPlaceable = false;
     },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "True/Placed"}},
     {},
     std::nullopt,
     NextReconcile::Kind::After,
     [](const Reconciled& r) {
       CHECK_FALSE(r.plan.write);
       CHECK(r.record.next.after == std::chrono::seconds(10));
     }},
    {"placeAt Pods without pods to patch: nothing written, and said",
     [](World& w) { w.policy.placeAt = PlaceAt::Pods; },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "True/Placed"}, {"Applied", "False/CannotGatePods"}},
     {"CannotGatePods"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"target missing: placed as soon as it appears",
     [](World& w) { w.target.reset(); },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "True/Placed"},
      {"Applied", "False/TargetNotFound"},
      {"Ready", "False/TargetNotFound"}},
     {"TargetNotFound"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"target deleted between the cache and the patch",
     {},
     TargetOutcome::Kind::NotFound,
     {},
     TargetOutcome::Kind::NotFound,
     RolloutStep::None,
     {{"Applied", "False/TargetNotFound"}},
     {"TargetNotFound"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"target without the named container: nothing is half-applied",
     [](World& w) { w.spec["containers"] = {"vllm"}; },
     {},
     {},
     TargetOutcome::Kind::Blocked,
     RolloutStep::None,
     {{"Applied", "False/InvalidTarget"}, {"Ready", "False/InvalidTarget"}},
     {"InvalidTarget"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       CHECK(r.outcome->error == "the Deployment has no container named vllm");
     }},
    {"conflict with the team's own fields: never overwritten",
     [](World& w) { w.target->containers[0].limits["nvidia.com/gpu"] = "3"; },
     {},
     {},
     TargetOutcome::Kind::Blocked,
     RolloutStep::None,
     {{"Applied", "False/Conflict"}},
     {"Conflict"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) { CHECK(r.outcome->conflicts.size() == 1); }},
    {"Recommend mode: report, and take back anything applied",
     [](World& w) {
       w.placedAndRolledOut();
       w.spec["mode"] = "Recommend";
     },
     {},
     {"chat"},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "True/Placed"}, {"Applied", "False/RecommendOnly"}, {"Ready", "True/Recommended"}},
     {},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       CHECK_FALSE(r.record.status->contains("applied"));
       CHECK(r.record.status->contains("placement"));
       CHECK_FALSE(r.record.inForce.has_value());
     }},
    {"invalid spec: says which field, leaves the Deployment alone, waits for a change",
     [](World& w) { w.spec["model"]["parameters"] = "a lot"; },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Valid", "False/InvalidSpec"}, {"Placed", "Unknown/InvalidSpec"}},
     {"InvalidSpec"},
     std::nullopt,
     NextReconcile::Kind::Terminal,
     [](const Reconciled& r) {
       CHECK(r.record.next.message.find("spec.model.parameters") != std::string::npos);
     }},
    {"policy missing: nothing placed, the reason named",
     [](World& w) { w.policyProblem = "PlacementPolicy research does not exist"; },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "False/PolicyNotFound"}, {"Ready", "False/PolicyNotFound"}},
     {"PolicyNotFound"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"cannot place: the binding constraint is the message",
     [](World& w) { w.spec["constraints"]["maxHourlyCost"] = "0.01"; },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {{"Placed", "False/CannotPlace"}, {"Ready", "False/CannotPlace"}},
     {"CannotPlace"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"a cheaper placement: the move takes a rollout slot and says what it saves",
     [](World& w) {
       w.policy.replacement.minSavingsPercent = 5;
       w.placedEarlierOnADearerType(2h);
     },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::Reserve,
     {{"Applied", "True/Applied"}},
     {"Replaced"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       REQUIRE(r.record.monthlySaving.has_value());
       CHECK(*r.record.monthlySaving > 0);
       CHECK(r.record.status->contains("lastReplacement"));
       CHECK((*r.record.status)["applied"]["replacement"] == true);
     }},
    {"held by minSavingsPercent: the better placement is shown, not applied",
     [](World& w) {
       w.policy.replacement.minSavingsPercent = 99.9;
       w.placedEarlierOnADearerType(2h);
     },
     {},
     {},
     TargetOutcome::Kind::Unchanged,  // the placement in force stays
     RolloutStep::None,
     {{"Applied", "True/Applied"}},
     {},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       CHECK(r.plan.gate.verdict == GateVerdict::Hold);
       CHECK(r.record.status->contains("recommendation"));
       // The placement shown is the one the Deployment carries, so `applied`
       // does not repeat it; read back, it is whole.
       CHECK_FALSE((*r.record.status)["applied"].contains("instanceType"));
       CHECK(workloadStatusFromJson(*r.record.status).applied->instanceType ==
             (*r.record.status)["placement"]["instanceType"].get<std::string>());
       CHECK((*r.record.status)["recommendation"]["instanceType"] !=
             (*r.record.status)["placement"]["instanceType"]);
     }},
    {"held by the cooldown: comes back when it ends",
     [](World& w) {
       w.policy.replacement.minSavingsPercent = 5;
       w.policy.replacement.cooldown = 1h;
       w.placedEarlierOnADearerType(10min);
     },
     {},
     {},
     TargetOutcome::Kind::Unchanged,
     RolloutStep::None,
     {{"Applied", "True/Applied"}},
     {},
     std::nullopt,
     NextReconcile::Kind::After,
     [](const Reconciled& r) {
       CHECK(r.plan.gate.verdict == GateVerdict::Cooldown);
       CHECK(r.record.next.after == 50min);
     }},
    {"held by the rollout budget: waits for a slot",
     [](World& w) {
       w.policy.replacement.minSavingsPercent = 5;
       w.policy.replacement.maxConcurrentRollouts = 2;
       w.rollouts.inFlight = 2;
       w.placedEarlierOnADearerType(2h);
     },
     {},
     {},
     TargetOutcome::Kind::Unchanged,
     RolloutStep::Wait,
     {{"Applied", "True/Applied"}},
     {},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) {
       CHECK(r.plan.gate.verdict == GateVerdict::WaitForRollout);
       CHECK(r.record.status->contains("recommendation"));
     }},
    {"the target changed: our fields come off the old Deployment first",
     [](World& w) {
       w.placedAndRolledOut();
       w.status.applied->targetName = "old-chat";
     },
     {},
     {"old-chat"},
     TargetOutcome::Kind::Unchanged,
     RolloutStep::None,
     {{"Applied", "True/Applied"}},
     {"Placed"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"deletion: our fields come off, then only our finalizer goes",
     [](World& w) {
       w.placedAndRolledOut();
       w.deleting = true;
       w.finalizers = {"example.com/other", kFinalizer};
     },
     {},
     {"chat"},
     std::nullopt,
     RolloutStep::None,
     {},
     {},
     std::vector<std::string>{"example.com/other"},
     NextReconcile::Kind::AwaitChange,
     [](const Reconciled& r) { CHECK_FALSE(r.record.status.has_value()); }},
    {"deletion held only by another finalizer: nothing of ours is left",
     [](World& w) {
       w.deleting = true;
       w.finalizers = {"example.com/other"};
     },
     {},
     {},
     std::nullopt,
     RolloutStep::None,
     {},
     {},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"finalizer off: the first placement writes none",
     [](World& w) {
       w.useFinalizer = false;
       w.finalizers = {};
     },
     {},
     {},
     TargetOutcome::Kind::Written,
     RolloutStep::None,
     {{"Applied", "True/Applied"}},
     {"Placed"},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
    {"finalizer off: ours, left by a run with --finalizer, comes off; others stay",
     [](World& w) {
       w.placedAndRolledOut();
       w.useFinalizer = false;
       w.finalizers = {"example.com/other", kFinalizer};
     },
     {},
     {},
     TargetOutcome::Kind::Unchanged,
     RolloutStep::None,
     {{"Applied", "True/Applied"}, {"Ready", "True/RolloutComplete"}},
     {},
     std::vector<std::string>{"example.com/other"},
     NextReconcile::Kind::AwaitChange,
     {}},
    {"gone without its finalizer: the Deployments whose record names it are released",
     [](World& w) {
       w.gone = true;
       w.orphans = {"chat", "chat-canary"};
     },
     {},
     {"chat", "chat-canary"},
     std::nullopt,
     RolloutStep::None,
     {},
     {},
     std::nullopt,
     NextReconcile::Kind::AwaitChange,
     {}},
};

}  // namespace

TEST_CASE("planWorkload and recordWorkload: every branch of a reconcile") {
  for (const auto& row : kRows) {
    CAPTURE(std::string(row.name));
    World world;
    if (row.arrange) {
      row.arrange(world);
    }
    const auto result = reconcile(world, row.serverSays);
    CHECK(releasedNames(result.plan) == row.release);
    CHECK(result.plan.rollout == row.rollout);
    CHECK(result.plan.write.has_value() == row.outcome.has_value());
    if (row.outcome && result.outcome) {
      CHECK(result.outcome->kind == *row.outcome);
    }
    const auto conditions = conditionsOf(result.record);
    for (const auto& [type, expected] : row.conditions) {
      CAPTURE(type);
      CHECK(conditions.count(type) == 1);
      if (conditions.count(type) == 1) {
        CHECK(conditions.at(type) == expected);
      }
    }
    CHECK(eventReasons(result.record) == row.events);
    CHECK(result.record.finalizers == row.finalizers);
    CHECK(result.record.next.kind == row.next);
    if (row.more) {
      row.more(result);
    }
  }
}

// A first placement (finalizer off), and the world as it left it: the
// Deployment written, the status stored. Returns the stored status.
json placeOnce(World& world) {
  world.finalizers = {};
  auto first = reconcile(world);
  REQUIRE(first.record.status.has_value());
  REQUIRE(first.outcome.has_value());
  world.target = first.outcome->state;
  world.finalizers = first.record.finalizers.value_or(world.finalizers);
  world.status = workloadStatusFromJson(*first.record.status);
  return *first.record.status;
}

TEST_CASE("a reconcile of a settled workload writes nothing and reports nothing again") {
  World world;
  const auto stored = placeOnce(world);
  world.statusHash = statusDigest(stored);
  const auto input = world.input();
  auto plan = planWorkload(input);
  REQUIRE(plan.write.has_value());
  const auto outcome = outcomeWithoutWrite(*plan.write, *world.target);
  REQUIRE(outcome.has_value());
  CHECK(outcome->kind == TargetOutcome::Kind::Unchanged);
  const auto second = recordWorkload(input, std::move(plan), &*outcome);
  CHECK_FALSE(second.status.has_value());  // same conditions, same transition times
  CHECK(second.events.empty());            // "Placed" is not repeated
  CHECK_FALSE(second.finalizers.has_value());
}

TEST_CASE("the steps of a rollout write no status until it completes") {
  World world;
  const auto stored = placeOnce(world);
  // kube-controller-manager's steps: observed, 1 updated, 1 available with
  // the old pod still going, then done.
  auto& state = *world.target;
  const int replicas = state.replicas;
  const std::pair<int, int> steps[] = {{0, 0}, {1, 0}, {replicas, replicas - 1}};
  for (const auto& [updated, available] : steps) {
    CAPTURE(updated);
    CAPTURE(available);
    state.observedGeneration = state.generation;
    state.updatedReplicas = updated;
    state.availableReplicas = available;
    state.statusReplicas = replicas + 1;
    world.statusHash = statusDigest(stored);
    const auto input = world.input();
    auto plan = planWorkload(input);
    REQUIRE(plan.write.has_value());
    const auto outcome = outcomeWithoutWrite(*plan.write, *world.target);
    REQUIRE(outcome.has_value());
    const auto step = recordWorkload(input, std::move(plan), &*outcome);
    CHECK_FALSE(step.status.has_value());
  }
  state.updatedReplicas = replicas;
  state.availableReplicas = replicas;
  state.statusReplicas = replicas;
  world.statusHash = statusDigest(stored);
  const auto input = world.input();
  auto plan = planWorkload(input);
  const auto outcome = outcomeWithoutWrite(*plan.write, *world.target);
  REQUIRE(outcome.has_value());
  const auto done = recordWorkload(input, std::move(plan), &*outcome);
  REQUIRE(done.status.has_value());
  CHECK(conditionsOf(done).at("Ready") == "True/RolloutComplete");
}

TEST_CASE("the status says each thing once") {
  World world;
  world.finalizers = {};
  const auto first = reconcile(world);
  REQUIRE(first.record.status.has_value());
  const auto& status = *first.record.status;
  MESSAGE("status after the first placement: " << status.dump().size()
                                               << " bytes: " << status.dump());
  // What the Deployment carries is the placement shown: not repeated.
  const auto& applied = status["applied"];
  for (const char* field :
       {"instanceType", "accelerator", "tier", "acceleratorCount", "capacityType"}) {
    CAPTURE(field);
    CHECK_FALSE(applied.contains(field));
  }
  // The memory the model needs is in `memory`, next to how it was sized.
  CHECK(status["memory"].contains("requiredGiB"));
  CHECK_FALSE(status["placement"].contains("requiredMemoryGiB"));
  // Read back, the record is whole again.
  const auto read = workloadStatusFromJson(status);
  REQUIRE(read.applied.has_value());
  CHECK(read.applied->instanceType == status["placement"]["instanceType"].get<std::string>());
  CHECK(read.applied->accelerator == status["placement"]["accelerator"].get<std::string>());
  CHECK(nameOf(read.applied->tier) == status["placement"]["tier"].get<std::string>());
  CHECK(read.applied->acceleratorCount == status["placement"]["acceleratorCount"]);
  CHECK(nameOf(read.applied->capacityType) ==
        status["placement"]["capacityType"].get<std::string>());
}

TEST_CASE("a throughput target the replicas cannot carry: the status says how many would") {
  World world;
  world.spec["model"] = {{"family", "llama-3-8b"}};
  world.spec["workload"]["serving"] = {
      {"maxContextTokens", 4096}, {"concurrentSequences", 16}, {"tokensPerSecond", 2000}};
  const auto first = reconcile(world);
  REQUIRE(first.record.status.has_value());
  const auto& status = *first.record.status;
  const auto& placement = status["placement"];
  const int needed = placement["replicasForThroughput"];
  REQUIRE(needed > 1);
  const auto& throughput = status["throughput"];
  CHECK(throughput["enough"] == false);
  CHECK(throughput["replicas"] == 1);
  CHECK(throughput["replicasNeeded"] == needed);
  CHECK(throughput["replicasFrom"] == "spec.replicas of Deployment chat");
  const auto message = throughput["message"].get<std::string>();
  CHECK_MESSAGE(message.find("kubectl scale deployment/chat --replicas=" +
                             std::to_string(needed)) != std::string::npos,
                message);
  // Replicas stay the team's: the patch never names them.
  REQUIRE(first.plan.write.has_value());
  REQUIRE(first.plan.write->patch.patch.has_value());
  CHECK(first.plan.write->patch.patch->dump().find("replicas") == std::string::npos);

  // An autoscaler that may reach enough: counted by its maxReplicas.
  world.autoscaler = Autoscaler{"chat", 1, needed + 2};
  const auto scaled = reconcile(world);
  REQUIRE(scaled.record.status.has_value());
  const auto& advice = (*scaled.record.status)["throughput"];
  CHECK(advice["enough"] == true);
  CHECK(advice["replicas"] == needed + 2);
  CHECK(advice["replicasFrom"] == "maxReplicas of HorizontalPodAutoscaler chat");

  // No throughput target: no such status.
  world.spec["workload"]["serving"].erase("tokensPerSecond");
  const auto untargeted = reconcile(world);
  REQUIRE(untargeted.record.status.has_value());
  CHECK_FALSE(untargeted.record.status->contains("throughput"));
}

TEST_CASE("a write whose rollout could not finish is not sent; the status says what would") {
  using testing::Cluster;
  using testing::g6x1;
  World world;
  world.finalizers = {};
  world.placedAndRolledOut();  // on one g6.xlarge
  REQUIRE(world.status.applied->instanceType == "g6.xlarge");
  // The pool's one g6.xlarge, its L4 held by the replica; then the policy
  // moves placements to the pods, which changes the template.
  world.cluster = Cluster{{g6x1()}, {1}, {}};
  world.ownPods = {OwnPod{"node-0", "g6.xlarge", CapacityType::OnDemand, 1, 0, 0}};
  world.podsPlaceable = true;
  world.policy.placeAt = PlaceAt::Pods;
  const auto held = reconcile(world);
  CHECK_FALSE(held.plan.write.has_value());
  CHECK(conditionsOf(held.record).at("Applied") == "False/RolloutWouldStall");
  CHECK(eventReasons(held.record) == std::vector<std::string>{"RolloutWouldStall"});
  CHECK(held.record.next.kind == NextReconcile::Kind::After);
  const auto& conditions = (*held.record.status)["conditions"];
  std::string message;
  for (const auto& condition : conditions) {
    if (condition["type"] == "Applied") {
      message = condition["message"];
    }
  }
  CHECK(message.find("maxUnavailable: 1") != std::string::npos);
  // maxUnavailable 1: the old pod goes first, and the write is sent.
  world.target->unavailable = 1;
  const auto sent = reconcile(world);
  REQUIRE(sent.plan.write.has_value());
  CHECK(sent.plan.write->patch.patch.has_value());
  CHECK(conditionsOf(sent.record).at("Applied") == "True/Applied");
}

TEST_CASE("an Event for a condition is sent once, when its reason first appears") {
  World world;
  world.target.reset();
  const auto first = reconcile(world);
  CHECK(eventReasons(first.record) == std::vector<std::string>{"TargetNotFound"});
  world.status = workloadStatusFromJson(*first.record.status);
  const auto again = reconcile(world);
  CHECK(again.record.events.empty());
  CHECK(conditionsOf(again.record).at("Applied") == "False/TargetNotFound");
}

TEST_CASE("a plan with the cluster view: idle devices, detected labels, no move by itself") {
  using testing::Cluster;
  using testing::g6Pool;
  using testing::g6x4;
  // Karpenter's g6.12xlarge with 2 of 4 L4 in use, and a g6 NodePool.
  World world;
  world.finalizers = {};
  world.cluster = Cluster{{g6x4(true)}, {2}, {g6Pool()}};
  auto first = reconcile(world);
  REQUIRE(first.plan.write.has_value());
  const auto& selector = first.plan.write->scheduling.nodeSelector;
  CHECK(selector.at("karpenter.k8s.aws/instance-gpu-name") == "l4");
  CHECK(selector.at("karpenter.k8s.aws/instance-gpu-count") == "4");
  CHECK(selector.at("karpenter.sh/capacity-type") == "on-demand");
  CHECK(selector.count("node.kubernetes.io/instance-type") == 0);
  CHECK(eventReasons(first.record) == std::vector<std::string>{"Placed"});
  REQUIRE(first.record.placedNow.has_value());
  CHECK(first.record.placedNow->costNote.find("1 idle L4 on an existing g6.12xlarge") !=
        std::string::npos);

  struct Row {
    const char* name;
    Cluster cluster;
    int pending;
    bool bound;  // its pod holds an L4 on node-0 (counted in the node's use)
    std::vector<std::string> events;
    const char* recommended;  // shown, not applied; empty: none
  };
  // The world as the first reconcile left it, then the cluster moves.
  const Row rows[] = {
      // Its own pod now holds one of the two: still its place.
      {"its pod took an idle L4", {{g6x4(true)}, {3}, {g6Pool()}}, 0, true, {}, ""},
      // Others filled the node: a new g6.xlarge would be cheaper than its
      // share, but a cluster change moves it only through the gate.
      {"the node filled up", {{g6x4(true)}, {4}, {g6Pool()}}, 0, true, {}, ""},
      {"a second node with idle L4",
       {{g6x4(true), g6x4(true)}, {4, 0}, {g6Pool()}},
       0,
       true,
       {},
       ""},
      // Its pod waits and the node is full: a new g6.xlarge is better, and
      // waits for the cooldown like any move.
      {"its pod cannot be scheduled",
       {{g6x4(true)}, {4}, {g6Pool()}},
       1,
       false,
       {"Unschedulable"},
       "g6.xlarge"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.name));
    World later = world;
    later.target = first.outcome->state;
    later.status = workloadStatusFromJson(*first.record.status);
    later.statusHash = statusDigest(*first.record.status);
    later.cluster = row.cluster;
    later.pending.count = row.pending;
    if (row.bound) {
      later.ownPods = {{"node-0", "g6.12xlarge", CapacityType::OnDemand, 1, 1000, 1LL << 30}};
    }
    const auto again = reconcile(later);
    REQUIRE(again.outcome.has_value());
    CHECK(again.outcome->kind == TargetOutcome::Kind::Unchanged);
    CHECK(eventReasons(again.record) == row.events);
    CHECK_FALSE(again.record.placedNow.has_value());
    const auto status = again.record.status.value_or(*first.record.status);
    if (*row.recommended != '\0') {
      CHECK(status["recommendation"]["instanceType"] == row.recommended);
    } else {
      CHECK_FALSE(status.contains("recommendation"));
      // Other pods coming and going leave its status as it was: nothing
      // to write.
      CHECK_MESSAGE(!again.record.status.has_value(),
                    nlohmann::json::diff(*first.record.status, status).dump());
    }
  }
}

TEST_CASE("a replica with no pod yet holds no device: patching the target changes no price") {
  using testing::Cluster;
  using testing::g6Pool;
  using testing::g6x1;
  // Two g6.xlarge, each with its one L4 held by another team's pod, and a
  // NodePool that may launch more.
  World world;
  world.finalizers = {};
  world.cluster = Cluster{{g6x1(), g6x1()}, {1, 1}, {g6Pool()}};
  const auto first = reconcile(world);
  REQUIRE(first.record.placedNow.has_value());
  REQUIRE(first.record.status.has_value());
  const std::string note = first.record.placedNow->costNote;
  CAPTURE(note);
  CHECK(first.record.placedNow->instanceType == "g6.xlarge");
  CHECK(note.find("on a new g6.xlarge") != std::string::npos);

  // The reconcile on the patched target's own event, before any pod of it
  // exists: the L4 the other pods hold are not its own, so the price and
  // the note are as they were and there is no status to write.
  World later = world;
  later.target = first.outcome->state;
  later.status = workloadStatusFromJson(*first.record.status);
  later.statusHash = statusDigest(*first.record.status);
  const auto again = reconcile(later);
  CHECK_MESSAGE(!again.record.status.has_value(),
                nlohmann::json::diff(*first.record.status,
                                     again.record.status.value_or(nlohmann::json::object()))
                    .dump());

  // Its pod runs on node-0 (its L4 is the one counted there): that device
  // is its own now, paid for whether it stays or not, and the note says so.
  later.ownPods = {{"node-0", "g6.xlarge", CapacityType::OnDemand, 1, 1000, 1LL << 30}};
  const auto bound = reconcile(later);
  REQUIRE(bound.record.status.has_value());
  const auto boundNote = (*bound.record.status)["placement"]["costNote"].get<std::string>();
  CAPTURE(boundNote);
  CHECK(boundNote.find("1 idle L4 on an existing g6.xlarge") != std::string::npos);
}

}  // namespace gpuplacement::core

namespace gpuplacement::core {

TEST_CASE("fallback in the plan: left after fallbackAfter, the next-best type, NoCapacity") {
  struct Case {
    const char* label;
    std::chrono::minutes pendingFor;
    bool onlyTheBest;  // constraints allow nothing else
    bool fellBack;
    const char* ready;  // the Ready condition's reason
    std::chrono::seconds next;
  };
  const Case cases[] = {
      {"pending 2 min of 5: wait", 2min, false, false, "Unschedulable", 3min},
      {"pending 10 min: the next-best type", 10min, false, true, "Unschedulable", 30min},
      {"nothing else allowed: NoCapacity", 10min, true, true, "NoCapacity", 30min},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    World world;
    world.finalizers = {};
    world.useFinalizer = false;
    const auto best = world.best();
    if (c.onlyTheBest) {
      world.spec["constraints"]["instanceTypes"] = {best.instanceType};
    }
    world.placedAndRolledOut();
    world.target->availableReplicas = 0;  // its pod waits for a node
    world.pending = {1, "0/11 nodes are available: 11 Insufficient nvidia.com/gpu",
                     kNow - c.pendingFor};
    const auto result = reconcile(world);
    const auto reasons = eventReasons(result.record);
    const bool fellBack = std::find(reasons.begin(), reasons.end(), "FellBack") != reasons.end();
    CHECK(fellBack == c.fellBack);
    CHECK(conditionsOf(result.record).at("Ready") == "False/" + std::string(c.ready));
    CHECK(result.record.next.kind == NextReconcile::Kind::After);
    CHECK(result.record.next.after == c.next);
    REQUIRE(result.record.status.has_value());
    const auto& status = *result.record.status;
    if (!c.fellBack) {
      CHECK_FALSE(status.contains("unavailable"));
      continue;
    }
    CHECK(status["unavailable"][0]["instanceType"] == best.instanceType);
    if (c.onlyTheBest) {
      CHECK_FALSE(result.plan.write.has_value());
      continue;
    }
    // Moved at once (a placement without capacity is no longer possible),
    // within the rollout budget.
    REQUIRE(result.record.placedNow.has_value());
    CHECK(result.record.placedNow->instanceType != best.instanceType);
    CHECK(result.plan.rollout == RolloutStep::Reserve);
    CHECK(std::find(reasons.begin(), reasons.end(), "Replaced") != reasons.end());
  }
}

TEST_CASE("targets of a kind the operator may not read: said, nothing written, nothing forgotten") {
  World world;
  world.placedAndRolledOut();  // an earlier placement, recorded
  world.target.reset();        // not in the cache: its informer is refused
  auto input = world.input();
  input.targetUnreadable = "the operator cannot list deployments (HTTP 403)";
  const auto plan = planWorkload(input);
  const auto record = recordWorkload(input, plan, nullptr);
  CHECK_FALSE(plan.write.has_value());
  CHECK(plan.release.empty());
  CHECK(conditionsOf(record).at("Applied") == "False/TargetUnreadable");
  CHECK(conditionMessage(record, "Applied").find("HTTP 403") != std::string::npos);
  CHECK((*record.status).contains("applied"));
}

TEST_CASE("a StatefulSet with updateStrategy OnDelete: its slot is free, Ready says how it moves") {
  World world;
  world.spec["targetRef"] = {{"kind", "StatefulSet"}, {"name", "chat"}};
  world.target->kind = TargetKind::StatefulSet;
  world.target->onDelete = true;
  world.finalizers = {};
  auto first = reconcile(world);
  REQUIRE(first.outcome.has_value());
  auto state = first.outcome->state;
  state.observedGeneration = state.generation;
  state.revisionPending = true;  // its pods still run the old revision
  CHECK(state.rolledOut());      // nothing rolls: the slot is not held
  world.target = state;
  world.status = workloadStatusFromJson(*first.record.status);
  const auto next = reconcile(world);
  CHECK(conditionsOf(next.record).at("Ready") == "False/OnDelete");
  CHECK(conditionMessage(next.record, "Ready").find("kubectl delete pod") != std::string::npos);
  CHECK(next.record.releaseSlot);
}

}  // namespace gpuplacement::core

namespace gpuplacement::core {

// The sample embedder: a 350M model the rules place on CPU. Its CPU type
// left for lack of room, the fallback stays on CPU unless the policy lets
// it cross to a GPU at several times the cost.
TEST_CASE("fallback stays in the tier it left unless capacity.fallbackAcrossTiers") {
  struct Case {
    const char* label;
    bool acrossTiers;
    const char* ready;   // the Ready condition's reason
    const char* placed;  // the type placed now; empty: none
  };
  const Case cases[] = {
      {"off (the default): NoCapacity, naming the setting", false, "NoCapacity", ""},
      {"on: the GPU the constraints allow", true, "Unschedulable", "g4dn.xlarge"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    World world;
    world.finalizers = {};
    world.useFinalizer = false;
    world.policy.capacity.fallbackAcrossTiers = c.acrossTiers;
    world.spec["model"] = {{"parameters", "350M"}, {"precision", "fp32"}};
    world.spec.erase("constraints");
    const auto best = world.best();
    REQUIRE(best.tier == Tier::CPU);
    world.spec["constraints"] = {{"instanceTypes", {best.instanceType, "g4dn.xlarge"}}};
    world.placedAndRolledOut();
    world.target->availableReplicas = 0;
    world.pending = {1, "0/4 nodes are available: 4 Insufficient cpu", kNow - 10min};
    const auto result = reconcile(world);
    CHECK(conditionsOf(result.record).at("Ready") == "False/" + std::string(c.ready));
    REQUIRE(result.record.status.has_value());
    const auto& status = *result.record.status;
    CHECK(status["unavailable"][0]["instanceType"] == best.instanceType);
    if (*c.placed == '\0') {
      CHECK_FALSE(result.plan.write.has_value());
      const std::string message = conditionMessage(result.record, "Ready");
      CHECK_MESSAGE(message.find("the fallback stays on CPU (the policy's "
                                 "capacity.fallbackAcrossTiers is false)") != std::string::npos,
                    message);
      continue;
    }
    REQUIRE(result.record.placedNow.has_value());
    CHECK(result.record.placedNow->instanceType == c.placed);
  }
}

}  // namespace gpuplacement::core

namespace gpuplacement::core::planning {
namespace {

TEST_CASE("a target of several pod sets: the status lists each placed one, priced") {
  World world;
  world.spec["targetRef"] = {{"apiVersion", "ray.io/v1"}, {"kind", "RayCluster"}, {"name", "chat"}};
  const auto podTemplate = json::parse(R"({"spec": {"containers": [{"name": "server"}]}})");
  world.target = targetFromJson(
      TargetKind::RayCluster,
      {{"metadata", {{"uid", "u-chat"}, {"generation", 1}}},
       {"spec",
        {{"headGroupSpec", {{"template", podTemplate}}},
         {"workerGroupSpecs",
          {{{"groupName", "small"}, {"replicas", 1}, {"template", podTemplate}},
           {{"groupName", "large"}, {"replicas", 2}, {"template", podTemplate}}}}}}});
  struct Row {
    std::vector<std::string> names;  // spec.targetRef.podSets
    std::vector<std::pair<std::string, int>> listed;
  };
  const Row rows[] = {
      {{}, {{"small", 1}, {"large", 2}}},  // the worker groups, not the head
      {{"large"}, {{"large", 2}}},         // those named
      {{"head", "small"}, {{"head", 1}, {"small", 1}}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.names.size());
    world.spec["targetRef"]["podSets"] = row.names;
    const auto input = world.input();
    auto plan = planWorkload(input);
    REQUIRE(plan.write.has_value());
    // The server took the write (what it made of the templates is
    // tests/core/pod_sets_test.cc's).
    const TargetOutcome written{TargetOutcome::Kind::Written, *world.target, {}, ""};
    const auto record = recordWorkload(input, std::move(plan), &written);
    REQUIRE(record.status.has_value());
    const auto& status = *record.status;
    REQUIRE(status.contains("placement"));
    const double hourly = std::stod(status["placement"]["hourlyCost"].get<std::string>());
    REQUIRE(status["podSets"].size() == row.listed.size());
    int pods = 0;
    for (std::size_t i = 0; i < row.listed.size(); ++i) {
      const auto& listed = status["podSets"][i];
      CHECK(listed["name"] == row.listed[i].first);
      CHECK(listed["pods"] == row.listed[i].second);
      CHECK(std::stod(listed["hourlyCost"].get<std::string>()) ==
            doctest::Approx(hourly * row.listed[i].second).epsilon(0.001));
      pods += row.listed[i].second;
    }
    // The placement's replicas are the pods of the pod sets it places.
    CHECK(status["placement"]["replicas"] == pods);
  }
  // A kind of one pod set lists none: its placement says it all.
  World deployment;
  const auto placed = reconcile(deployment);
  REQUIRE(placed.record.status.has_value());
  CHECK(placed.record.status->contains("placement"));
  CHECK_FALSE(placed.record.status->contains("podSets"));
}

}  // namespace
}  // namespace gpuplacement::core::planning
