// A placement whose replica spans nodes, written only into groups of the
// size it needs (core/plan/workload_plan.cc's planWrite).
#include <doctest/doctest.h>

#include "core/plan/group_size_patch.h"
#include "core/plan/job_plan.h"
#include "core/plan/pod_sets_patch.h"
#include "support/workload_world.h"

namespace gpuplacement::core {
namespace {

using namespace planning;
using json = nlohmann::json;

// A LeaderWorkerSet of one group of `size` pods, one template, serving
// Llama-3.1-405B at fp16 on p5.48xlarge: no node holds it, two do.
World servingGroupWorld(int size, json affinity = nullptr) {
  World world;
  world.spec["targetRef"] = {{"kind", "LeaderWorkerSet"}, {"name", "chat"}};
  world.spec["model"] = {{"parameters", "405B"}, {"precision", "fp16"}};
  world.spec["constraints"] = {{"instanceTypes", {"p5.48xlarge"}}};
  json pod = {{"metadata", {{"labels", {{"app", "chat"}}}}},
              {"spec", {{"containers", {{{"name", "vllm"}}}}}}};
  if (!affinity.is_null()) {
    pod["spec"]["affinity"] = std::move(affinity);
  }
  world.target = targetFromJson(
      TargetKind::LeaderWorkerSet,
      {{"metadata", {{"name", "chat"}, {"uid", "u-lws"}, {"generation", 1}}},
       {"spec",
        {{"replicas", 1}, {"leaderWorkerTemplate", {{"size", size}, {"workerTemplate", pod}}}}}});
  return world;
}

// Llama-3-70B trained in full on three trn1.32xlarge, as
// config/samples/jobset-trainium-70b.yaml: a suspended JobSet whose
// workers ask for 16 Trainium each, and a node's 8 EFA interfaces with
// `efa`, `workers` of them.
World trainingJobSetWorld(bool efa, int workers = 3) {
  json resources = {{"aws.amazon.com/neuron", 16}};
  if (efa) {
    resources["vpc.amazonaws.com/efa"] = 8;
  }
  const json worker = {{"spec",
                        {{"containers",
                          {{{"name", "trainer"},
                            {"resources", {{"requests", resources}, {"limits", resources}}}}}}}}};
  World world;
  world.spec["targetRef"] = {{"kind", "JobSet"}, {"name", "chat"}};
  world.spec["workload"] = {{"kind", "Training"}};
  world.spec["model"] = {{"parameters", "70.6B"}, {"precision", "bf16"}};
  world.spec["constraints"] = {{"tiers", {"Trainium"}}};
  world.target = suspendedJobSet(worker, workers);
  return world;
}

TEST_CASE("a group of the size the placement needs is written; another size is named, untouched") {
  SUBCASE("size 2: each pod gets its node's eight H100s and every EFA interface") {
    World world = servingGroupWorld(2);
    const auto result = reconcile(world);
    CHECK(result.plan.wanted.nodesPerReplica == 2);
    REQUIRE(result.plan.write.has_value());
    const auto& scheduling = result.plan.write->scheduling;
    CHECK(scheduling.resources.at("nvidia.com/gpu") == "8");
    CHECK(scheduling.resources.at("vpc.amazonaws.com/efa") == "32");
    CHECK(conditionsOf(result.record).at("Applied") == "True/Applied");
    const auto& placement = result.record.status->at("placement");
    CHECK(placement.at("acrossNodes").at("nodes") == 2);
    CHECK(placement.at("acrossNodes").at("efaInterfaces") == 32);
    CHECK(placement.at("nodes") == 2);
  }
  SUBCASE("size 1, as a LeaderWorkerSet defaults: nothing written, the field and the size said") {
    World world = servingGroupWorld(1);
    const auto result = reconcile(world);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Placed") == "True/Placed");
    CHECK(conditionsOf(result.record).at("Applied") == "False/GroupSizeNeeded");
    const auto message = conditionMessage(result.record, "Applied");
    for (const char* part :
         {"groups of 2 pods", "2 p5.48xlarge nodes",
          "spec.leaderWorkerTemplate.size is 1: set it to 2", "nothing is written"}) {
      CAPTURE(part);
      CHECK(message.find(part) != std::string::npos);
    }
    CHECK_FALSE(result.record.status->contains("applied"));
  }
}

TEST_CASE("a group in force stays: the next reconcile keeps it and writes nothing") {
  World world = servingGroupWorld(2);
  const auto first = reconcile(world);
  REQUIRE(first.outcome.has_value());
  REQUIRE(first.outcome->kind == TargetOutcome::Kind::Written);
  world.target = first.outcome->state;
  world.status = workloadStatusFromJson(*first.record.status);
  const auto second = reconcile(world);
  CAPTURE(second.record.status->dump());
  CHECK(second.plan.wanted.nodesPerReplica == 2);
  CHECK(conditionsOf(second.record).at("Applied") == "True/Applied");
  CHECK(conditionsOf(second.record).at("Placed") == "True/Placed");
  const bool writes = second.plan.write && second.plan.write->patch.patch.has_value();
  CHECK_FALSE(writes);
  CHECK(second.record.status->at("placement").at("acrossNodes").at("nodes") == 2);
  // Weighed in force as the group it is, not as one node that cannot hold
  // it: it may stay, at its group's price.
  std::optional<ClusterCost> costs;
  const auto intent =
      intentOf(*parseGpuWorkloadSpec(world.spec, *testing::shippedCatalog()), &*world.target);
  const auto inForce = world.engine->weighInForce(intent, "p5.48xlarge", 8, {},
                                                  CapacityType::OnDemand, nullptr, costs);
  CHECK(inForce.verdict == InForceVerdict::Keeps);
  REQUIRE(inForce.option);
  CHECK(inForce.option->fit.nodes == 2);
  CHECK(inForce.option->cost.perReplicaHourly == doctest::Approx(2 * 55.04));
}

TEST_CASE("a JobSet across nodes whose manifest lacks the EFA interfaces: said, not written") {
  // Its workers asking for 16 Trainium and no EFA: its webhook would
  // refuse a changed resource.
  SUBCASE("the manifest asks for a node's devices and EFA: placed and resumed") {
    World world = trainingJobSetWorld(true);
    const auto result = reconcile(world);
    CHECK(result.plan.wanted.nodesPerReplica == 3);
    REQUIRE(result.plan.write.has_value());
    CHECK_FALSE(result.plan.write->patch.resourcesChanged);
    CHECK(conditionsOf(result.record).at("Applied") == "True/Applied");
  }
  SUBCASE("no EFA in the manifest: nothing written, the condition names what to write") {
    World world = trainingJobSetWorld(false);
    const auto result = reconcile(world);
    CHECK(result.plan.wanted.nodesPerReplica == 3);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/ResourcesFixed");
    const auto message = conditionMessage(result.record, "Applied");
    CAPTURE(message);
    CHECK(message.find("vpc.amazonaws.com/efa=8") != std::string::npos);
    CHECK(message.find("create it again") != std::string::npos);
  }
  SUBCASE("one worker: its size cannot change, so it is to be created again with three") {
    World world = trainingJobSetWorld(true, 1);
    const auto result = reconcile(world);
    CHECK(result.plan.wanted.nodesPerReplica == 3);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/GroupSizeNeeded");
    const auto message = conditionMessage(result.record, "Applied");
    CAPTURE(message);
    CHECK(message.find("spec.replicatedJobs[0].template.spec.parallelism is 1: set it to 3 in the "
                       "manifest and create it again") != std::string::npos);
    const auto reason = conditionMessage(result.record, "Placed");
    CAPTURE(reason);
    CHECK(reason.find("gives 1: create it again with 3") != std::string::npos);
  }
}

TEST_CASE("a run across a group of nodes: every pod counted, every node paid") {
  TargetState job;
  job.kind = TargetKind::JobSet;
  job.job.startTime = "2026-12-07T10:00:00Z";
  job.job.endTime = "2026-12-07T11:30:00Z";
  job.job.end = JobProgress::End::Complete;
  Placement placement;
  placement.instanceType = "trn1.32xlarge";
  placement.replicas = 1;
  placement.nodesPerReplica = 3;
  placement.hourlyCost = 64.5;
  placement.totalHourlyCost = 64.5;
  const auto run = jobRun(job, "llama-70b-full", placement);
  REQUIRE(run);
  CHECK(run->pods == 3);
  CHECK(run->hourlyCost == "64.5");
  CHECK(run->cost == "96.75");  // 1.5 h of three nodes at $21.50/h
}

TEST_CASE("the pod sets of a group across nodes: a pod is one node of it") {
  World world = servingGroupWorld(2);
  const json pod = {{"spec", {{"containers", {{{"name", "vllm"}}}}}}};
  const json lws = {{"metadata", {{"name", "chat"}, {"uid", "u-lws"}, {"generation", 1}}},
                    {"spec",
                     {{"replicas", 1},
                      {"leaderWorkerTemplate",
                       {{"size", 2}, {"leaderTemplate", pod}, {"workerTemplate", pod}}}}}};
  world.target = targetFromJson(TargetKind::LeaderWorkerSet, lws);
  const auto result = reconcile(world);
  REQUIRE(result.plan.wanted.nodesPerReplica == 2);
  const auto& podSets = result.record.status->at("podSets");
  REQUIRE(podSets.size() == 2);
  // A replica is two p5.48xlarge at $55.04/h: the leader and the worker
  // each one of them.
  for (const auto& podSet : podSets) {
    CAPTURE(podSet.dump());
    CHECK(podSet.at("pods") == 1);
    CHECK(podSet.at("hourlyCost") == "55.04");
  }
}

// The pod template's pod affinity terms of list `name`, as stored.
json podAffinityTerms(const TargetState& state, const char* name) {
  const auto& spec = state.podSetTemplates.front().raw.at("spec");
  if (!spec.contains("affinity")) {
    return nullptr;
  }
  return spec.at("affinity").at("podAffinity").value(name, json());
}

json requiredTerms(const TargetState& state) {
  return podAffinityTerms(state, "requiredDuringSchedulingIgnoredDuringExecution");
}

json preferredTerms(const TargetState& state) {
  return podAffinityTerms(state, "preferredDuringSchedulingIgnoredDuringExecution");
}

TEST_CASE("each group is kept in one zone: the team's affinity stands, and only ours goes back") {
  // The team keeps each pod beside its cache: their term, and their node
  // affinity, are carried over untouched.
  const json cache = {{"labelSelector", {{"matchLabels", {{"app", "cache"}}}}},
                      {"topologyKey", "kubernetes.io/hostname"}};
  const json nodeAffinity = {
      {"requiredDuringSchedulingIgnoredDuringExecution",
       {{"nodeSelectorTerms",
         {{{"matchExpressions",
            {{{"key", "kubernetes.io/arch"}, {"operator", "In"}, {"values", {"amd64"}}}}}}}}}}};
  const json teams = {
      {"nodeAffinity", nodeAffinity},
      {"podAffinity", {{"requiredDuringSchedulingIgnoredDuringExecution", {cache}}}}};
  const json zone = {{"labelSelector",
                      {{"matchExpressions",
                        {{{"key", "leaderworkerset.sigs.k8s.io/name"}, {"operator", "Exists"}}}}}},
                     {"matchLabelKeys", {"leaderworkerset.sigs.k8s.io/group-key"}},
                     {"topologyKey", "topology.kubernetes.io/zone"}};
  for (const bool team : {false, true}) {
    CAPTURE(team);
    World world = servingGroupWorld(2, team ? teams : json());
    const auto placed = reconcile(world);
    REQUIRE(placed.plan.write.has_value());
    CHECK(placed.plan.write->scheduling.zoneGroup ==
          GroupLabels{"leaderworkerset.sigs.k8s.io/name", "leaderworkerset.sigs.k8s.io/group-key"});
    REQUIRE(placed.outcome.has_value());
    const auto& state = placed.outcome->state;
    CHECK(requiredTerms(state) == (team ? json::array({cache, zone}) : json::array({zone})));
    CHECK(state.ownership.fields.zoneGroup == placed.plan.write->scheduling.zoneGroup);
    if (team) {
      CHECK(state.podSetTemplates.front().raw.at("spec").at("affinity").at("nodeAffinity") ==
            nodeAffinity);
    }
    const auto reason = conditionMessage(placed.record, "Placed");
    CAPTURE(reason);
    CHECK(reason.find("each group kept in one zone (a required pod affinity on "
                      "topology.kubernetes.io/zone by leaderworkerset.sigs.k8s.io/group-key)") !=
          std::string::npos);

    // Released (the GpuWorkload deleted): our term goes, the template is
    // as the team wrote it.
    PatchRequest release;
    release.resourceVersion = "41";
    // Another GpuWorkload's release leaves the record and the term alone.
    release.workload = "another";
    const auto others = planPodSetsPatch(state, release);
    CHECK_FALSE(others.patch.has_value());
    CHECK(others.error.empty());
    release.workload = "w";
    const auto plan = planPodSetsPatch(state, release);
    REQUIRE(plan.patch.has_value());
    const auto released = testing::applyPatch(state, *plan.patch);
    const auto& spec = released.podSetTemplates.front().raw.at("spec");
    if (team) {
      CHECK(spec.at("affinity") == teams);
    } else {
      CHECK_FALSE(spec.contains("affinity"));
    }
    CHECK(released.ownership.form == OwnershipRecord::Form::Absent);
  }
}

// A cluster of one accelerated node carrying `labels` besides Karpenter's,
// its capacity not counted, so that p5.48xlarge stays a candidate.
World groupInLabelledCluster(std::uint16_t labels) {
  World world = servingGroupWorld(2);
  auto node = testing::g6x4(true);
  node.labels |= labels;
  world.cluster = testing::Cluster{{node}, {0}, {}};
  world.policy.capacity.source = CapacitySource::None;
  return world;
}

TEST_CASE("where nodes say where they sit in the network, a group is preferred in one domain") {
  struct Row {
    const char* label;
    std::uint16_t labels;
    const char* key;     // the preferred term's topologyKey; empty: none
    const char* domain;  // what the reason calls it
  };
  const Row rows[] = {
      {"EC2's instance topology", kNetworkNodeLabel, kNetworkNodeKey, "network node"},
      {"a placement group Karpenter launched into, nearer",
       kNetworkNodeLabel | kPlacementGroupLabel, kPlacementGroupKey, "EC2 placement group"},
      {"nodes that say neither", 0, "", ""},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    World world = groupInLabelledCluster(row.labels);
    const auto placed = reconcile(world);
    REQUIRE(placed.plan.write.has_value());
    CHECK(placed.plan.write->scheduling.networkDomainKey == row.key);
    REQUIRE(placed.outcome.has_value());
    const auto& state = placed.outcome->state;
    CHECK(state.ownership.fields.networkDomainKey == row.key);
    const auto reason = conditionMessage(placed.record, "Placed");
    CAPTURE(reason);
    if (std::string(row.key).empty()) {
      CHECK(preferredTerms(state).is_null());
      CHECK(reason.find("preferred pod affinity") == std::string::npos);
      continue;
    }
    const json near = {
        {"weight", 100},
        {"podAffinityTerm",
         {{"labelSelector",
           {{"matchExpressions", json::array({{{"key", "leaderworkerset.sigs.k8s.io/name"},
                                               {"operator", "Exists"}}})}}},
          {"matchLabelKeys", json::array({"leaderworkerset.sigs.k8s.io/group-key"})},
          {"topologyKey", row.key}}}};
    CHECK(preferredTerms(state) == json::array({near}));
    CHECK(reason.find(std::string("and, where there is room, in one ") + row.domain +
                      " (a preferred pod affinity on " + row.key + ")") != std::string::npos);
    // Released: both our terms go.
    PatchRequest release;
    release.resourceVersion = "41";
    release.workload = "w";
    const auto plan = planPodSetsPatch(state, release);
    REQUIRE(plan.patch.has_value());
    const auto released = testing::applyPatch(state, *plan.patch);
    CHECK_FALSE(released.podSetTemplates.front().raw.at("spec").contains("affinity"));
  }
}

TEST_CASE(
    "a group in force gains no preference of its own: the term comes with a placement write") {
  // Placed before any node said where it sits; then the nodes do. Adding
  // the term alone would roll every group for a preference.
  World world = groupInLabelledCluster(0);
  const auto first = reconcile(world);
  REQUIRE(first.outcome.has_value());
  CHECK(first.plan.wanted.networkDomainKey.empty());
  world.target = first.outcome->state;
  world.status = workloadStatusFromJson(*first.record.status);
  world.cluster->nodes.front().labels |= kNetworkNodeLabel;
  const auto second = reconcile(world);
  CHECK(second.plan.wanted.networkDomainKey == kNetworkNodeKey);
  const bool writes = second.plan.write && second.plan.write->patch.patch.has_value();
  CHECK_FALSE(writes);
  CHECK(conditionsOf(second.record).at("Applied") == "True/Applied");
}

TEST_CASE(
    "a group whose template cannot take the affinity: nothing of it written, the reason says") {
  // A JobSet's webhook lets a suspended one change its nodeSelector and
  // tolerations, not its affinity.
  World world = trainingJobSetWorld(true);
  const auto result = reconcile(world);
  REQUIRE(result.plan.write.has_value());
  CHECK(result.plan.write->scheduling.zoneGroup.empty());
  REQUIRE(result.outcome.has_value());
  CHECK_FALSE(result.outcome->state.podSetTemplates.front().raw.at("spec").contains("affinity"));
  const auto reason = conditionMessage(result.record, "Placed");
  CAPTURE(reason);
  CHECK(reason.find("its pods' affinity is not the operator's to write, so a group stays in one "
                    "zone only where the team keeps it there") != std::string::npos);
}

TEST_CASE("a Ray cluster's group follows its head into one zone") {
  const json worker = {{"spec", {{"containers", {{{"name", "ray-worker"}}}}}}};
  const json head = {{"spec", {{"containers", {{{"name", "ray-head"}}}}}}};
  const json spec = {
      {"headGroupSpec", {{"template", head}}},
      {"workerGroupSpecs",
       json::array({{{"groupName", "gpu"}, {"replicas", 2}, {"template", worker}}})}};
  const auto cluster = targetFromJson(
      TargetKind::RayCluster,
      {{"metadata", {{"name", "chat"}, {"uid", "u-ray"}, {"generation", 1}}}, {"spec", spec}});
  CHECK(cluster.groups.labels == GroupLabels{"ray.io/node-type", "ray.io/cluster"});
  CHECK_FALSE(cluster.groups.affinityFixed);
}

// A RayCluster serving Llama-3.1-405B from one worker group of `replicas`
// workers, within `bounds` (its minReplicas and maxReplicas, where set).
World servingRayWorld(int replicas, json bounds = json::object(), bool autoscaled = false) {
  World world = servingGroupWorld(1);
  world.spec["targetRef"] = {{"kind", "RayCluster"}, {"name", "chat"}};
  json group = {{"groupName", "gpu"},
                {"replicas", replicas},
                {"template", {{"spec", {{"containers", {{{"name", "ray-worker"}}}}}}}}};
  group.update(bounds);
  json spec = {
      {"headGroupSpec", {{"template", {{"spec", {{"containers", {{{"name", "ray-head"}}}}}}}}}},
      {"workerGroupSpecs", json::array({group})}};
  if (autoscaled) {
    spec["enableInTreeAutoscaling"] = true;
  }
  world.target = targetFromJson(
      TargetKind::RayCluster,
      {{"metadata", {{"name", "chat"}, {"uid", "u-ray"}, {"generation", 1}}}, {"spec", spec}});
  return world;
}

// The ops of a JSON patch that write `path`'s value, by path.
std::map<std::string, json> sizeOps(const json& patch) {
  std::map<std::string, json> ops;
  for (const auto& op : patch) {
    const auto path = op.at("path").get<std::string>();
    if (path.find("eplicas") != std::string::npos || path.ends_with("/size")) {
      ops[path] = op.at("value");
    }
  }
  return ops;
}

// Released: the GpuWorkload deleted.
TargetState released(const TargetState& state) {
  PatchRequest release;
  release.resourceVersion = "41";
  release.workload = "w";
  const auto plan = planPodSetsPatch(state, release);
  REQUIRE(plan.patch.has_value());
  return testing::applyPatch(state, *plan.patch);
}

TEST_CASE(
    "spec.scaling.groupSize: Set writes the size beside the placement, and release puts "
    "the team's back") {
  struct Row {
    const char* name;
    World world;
    std::map<std::string, json> written;  // the size ops of the placing write
    OwnedGroupSize owned;
    const char* field;
  };
  const std::string worker = "/spec/workerGroupSpecs/0";
  Row rows[] = {
      {"a LeaderWorkerSet of size 1",
       servingGroupWorld(1),
       {{"/spec/leaderWorkerTemplate/size", 2}},
       {"/spec/leaderWorkerTemplate/size", 2, 1, {}, {}},
       "spec.leaderWorkerTemplate.size"},
      {"a Ray worker group of 1 within the CRD's default bounds",
       servingRayWorld(1),
       {{worker + "/replicas", 2}},
       {worker + "/replicas", 2, 1, {}, {}},
       "spec.workerGroupSpecs[0].replicas"},
      {"a Ray worker group whose maxReplicas 1 KubeRay would clamp it to: raised with it",
       servingRayWorld(1, {{"minReplicas", 1}, {"maxReplicas", 1}}),
       {{worker + "/replicas", 2}, {worker + "/maxReplicas", 2}},
       {worker + "/replicas", 2, 1, {}, 1},
       "spec.workerGroupSpecs[0].replicas"},
      {"a Ray worker group whose minReplicas 3 is above the size: lowered with it",
       servingRayWorld(1, {{"minReplicas", 3}, {"maxReplicas", 4}}),
       {{worker + "/replicas", 2}, {worker + "/minReplicas", 2}},
       {worker + "/replicas", 2, 1, 3, {}},
       "spec.workerGroupSpecs[0].replicas"},
  };
  for (auto& row : rows) {
    CAPTURE(row.name);
    World& world = row.world;
    const auto team = *world.target;
    world.spec["scaling"] = {{"groupSize", "Set"}};
    const auto placed = reconcile(world);
    CHECK(placed.plan.wanted.nodesPerReplica == 2);
    REQUIRE(placed.plan.write.has_value());
    REQUIRE(placed.plan.write->patch.patch.has_value());
    CHECK(sizeOps(*placed.plan.write->patch.patch) == row.written);
    CHECK(conditionsOf(placed.record).at("Applied") == "True/Applied");
    const auto reason = conditionMessage(placed.record, "Placed");
    CAPTURE(reason);
    CHECK(reason.find(std::string("groups of 2 pods set in ") + row.field + " (was 1)") !=
          std::string::npos);
    REQUIRE(placed.outcome.has_value());
    const auto& state = placed.outcome->state;
    CHECK(state.groups.size == 2);
    CHECK(state.ownership.fields.groupSize == std::optional<OwnedGroupSize>(row.owned));

    // The next reconcile keeps it: nothing to write, the reason the same.
    world.target = state;
    world.status = workloadStatusFromJson(*placed.record.status);
    const auto again = reconcile(world);
    CHECK(conditionsOf(again.record).at("Applied") == "True/Applied");
    const bool unchanged = !again.plan.write || !again.plan.write->patch.patch.has_value();
    CHECK(unchanged);
    CHECK(conditionMessage(again.record, "Placed") == reason);

    // Released while the size is the operator's: the team's size and
    // bounds are back, and the record is gone.
    const auto back = released(state);
    CHECK(back.groups.size == team.groups.size);
    CHECK(back.groups.bounds == team.groups.bounds);
    CHECK(back.ownership.form == OwnershipRecord::Form::Absent);
    // Released after someone set another size: theirs stays.
    auto changed = state;
    changed.groups.size = 4;
    const auto kept = released(changed);
    CHECK(kept.groups.size == 4);
    CHECK(kept.groups.bounds == state.groups.bounds);
    CHECK(kept.ownership.form == OwnershipRecord::Form::Absent);
    // A model one node holds: no group, the team's size back in the write
    // that places it.
    world.spec["model"] = {{"parameters", "8B"}, {"precision", "fp16"}};
    world.spec["constraints"] = json::object();
    const auto single = reconcile(world);
    CHECK(single.plan.wanted.nodesPerReplica == 1);
    REQUIRE(single.outcome.has_value());
    CHECK(single.outcome->state.groups.size == team.groups.size);
    CHECK(single.outcome->state.groups.bounds == team.groups.bounds);
    CHECK_FALSE(single.outcome->state.ownership.fields.groupSize.has_value());
  }
}

TEST_CASE(
    "a size the operator wrote, taken back while placed: put back as any field, and "
    "counted as a revert") {
  World world = servingGroupWorld(1);
  world.spec["scaling"] = {{"groupSize", "Set"}};
  const auto placed = reconcile(world);
  REQUIRE(placed.outcome.has_value());
  world.target = placed.outcome->state;
  world.target->groups.size = 1;  // GitOps applies the team's manifest again
  world.status = workloadStatusFromJson(*placed.record.status);
  const auto again = reconcile(world);
  REQUIRE(again.plan.write.has_value());
  REQUIRE(again.plan.write->patch.patch.has_value());
  CHECK(sizeOps(*again.plan.write->patch.patch) ==
        std::map<std::string, json>{{"/spec/leaderWorkerTemplate/size", 2}});
  const auto& reverts = again.record.status->at("reverts");
  CHECK(reverts.at("count") == 1);
  CHECK(reverts.at("fields") == json::array({"spec.leaderWorkerTemplate.size"}));
  REQUIRE(again.outcome.has_value());
  // The team's size it replaced is still the one recorded.
  CHECK(again.outcome->state.ownership.fields.groupSize->was == 1);
}

TEST_CASE("where the operator does not write the size, GroupSizeNeeded says why and what to set") {
  struct Row {
    const char* name;
    World world;
    const char* scaling;  // spec.scaling.groupSize; null: unset (Keep)
    std::vector<const char*> says;
  };
  Row rows[] = {
      {"Keep, by default: the team sets it",
       servingGroupWorld(1),
       nullptr,
       {"spec.leaderWorkerTemplate.size is 1: set it to 2",
        "or set spec.scaling.groupSize: Set to let the operator write it",
        "nothing is written until then"}},
      {"Keep, stated", servingGroupWorld(1), "Keep", {"is 1: set it to 2"}},
      {"Set on a JobSet: its size cannot change once created",
       trainingJobSetWorld(true, 1),
       "Set",
       {"spec.replicatedJobs[0].template.spec.parallelism is 1: set it to 3 in the manifest and "
        "create it again (it cannot change once created, so spec.scaling.groupSize: Set cannot set "
        "it in place); nothing is written"}},
      {"Set on a Ray cluster the autoscaler sizes: the size is the autoscaler's",
       servingRayWorld(1, json::object(), true),
       "Set",
       {"spec.workerGroupSpecs[0].replicas is 1, which the Ray autoscaler "
        "(spec.enableInTreeAutoscaling: true) sets, not the operator: raise the group's "
        "minReplicas to 2"}},
  };
  for (auto& row : rows) {
    CAPTURE(row.name);
    if (row.scaling) {
      row.world.spec["scaling"] = {{"groupSize", row.scaling}};
    }
    const auto result = reconcile(row.world);
    CHECK_FALSE(result.plan.write.has_value());
    CHECK(conditionsOf(result.record).at("Applied") == "False/GroupSizeNeeded");
    const auto message = conditionMessage(result.record, "Applied");
    CAPTURE(message);
    for (const char* part : row.says) {
      CAPTURE(part);
      CHECK(message.find(part) != std::string::npos);
    }
  }
}

TEST_CASE("Set in Recommend mode writes nothing, and the reason says the size to set") {
  World world = servingGroupWorld(1);
  world.spec["scaling"] = {{"groupSize", "Set"}};
  world.spec["mode"] = "Recommend";
  const auto result = reconcile(world);
  CHECK_FALSE(result.plan.write.has_value());
  CHECK(conditionsOf(result.record).at("Applied") == "False/RecommendOnly");
  const auto reason = conditionMessage(result.record, "Placed");
  CAPTURE(reason);
  CHECK(reason.find("spec.leaderWorkerTemplate.size gives 1: set it to 2") != std::string::npos);
}

TEST_CASE("spec.scaling.groupSize: Keep or Set, and nothing else") {
  World world = servingGroupWorld(1);
  const auto& catalog = *testing::shippedCatalog();
  for (const char* value : {"Keep", "Set"}) {
    world.spec["scaling"] = {{"groupSize", value}};
    const auto parsed = parseGpuWorkloadSpec(world.spec, catalog);
    REQUIRE(parsed);
    CHECK(base::nameOf(parsed->scaling.groupSize) == value);
  }
  world.spec["scaling"] = {{"groupSize", "Always"}};
  const auto bad = parseGpuWorkloadSpec(world.spec, catalog);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().field == "spec.scaling.groupSize");
  CHECK(bad.error().message.find("Keep") != std::string::npos);
  world.spec["scaling"] = {{"replicas", "Set"}};
  const auto unknown = parseGpuWorkloadSpec(world.spec, catalog);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().field.starts_with("spec.scaling"));
}

TEST_CASE("the ownership record carries the size written, and reads one written before it") {
  OwnedFields owned;
  owned.workload = "w";
  owned.groupSize = OwnedGroupSize{"/spec/workerGroupSpecs/0/replicas", 2, 1, {}, 1};
  const auto read = readOwnership(serializeOwnedFields(owned));
  REQUIRE(read.form == OwnershipRecord::Form::Readable);
  CHECK(read.fields == owned);
  const auto before = readOwnership(R"({"workload":"w","nodeSelector":{"a":"b"}})");
  REQUIRE(before.form == OwnershipRecord::Form::Readable);
  CHECK_FALSE(before.fields.groupSize.has_value());
  CHECK(readOwnership(R"({"workload":"w","groupSize":{"set":2}})").form ==
        OwnershipRecord::Form::Unreadable);
}

TEST_CASE(
    "a RayJob gets the size with its placement while it waits suspended, and keeps it once "
    "KubeRay has started it") {
  // KubeRay makes the cluster from spec.rayClusterSpec when the RayJob
  // starts and disregards later changes; its webhook checks only the name.
  World world = servingRayWorld(1);
  world.spec["targetRef"] = {{"kind", "RayJob"}, {"name", "chat"}};
  world.spec["scaling"] = {{"groupSize", "Set"}};
  const json clusterSpec = {
      {"headGroupSpec", {{"template", {{"spec", {{"containers", {{{"name", "ray-head"}}}}}}}}}},
      {"workerGroupSpecs",
       json::array({{{"groupName", "gpu"},
                     {"replicas", 1},
                     {"template", {{"spec", {{"containers", {{{"name", "ray-worker"}}}}}}}}}})}};
  world.target =
      targetFromJson(TargetKind::RayJob, {{"metadata",
                                           {{"name", "chat"},
                                            {"uid", "u-rj"},
                                            {"generation", 1},
                                            {"labels", {{"gpuplacement.io/workload", "w"}}}}},
                                          {"spec",
                                           {{"entrypoint", "python serve.py"},
                                            {"shutdownAfterJobFinishes", true},
                                            {"suspend", true},
                                            {"rayClusterSpec", clusterSpec}}}});
  const auto placed = reconcile(world);
  REQUIRE(placed.plan.write.has_value());
  REQUIRE(placed.plan.write->patch.patch.has_value());
  CHECK(sizeOps(*placed.plan.write->patch.patch) ==
        std::map<std::string, json>{{"/spec/rayClusterSpec/workerGroupSpecs/0/replicas", 2}});
  REQUIRE(placed.outcome.has_value());
  auto started = placed.outcome->state;
  CHECK(started.groups.size == 2);
  CHECK_FALSE(started.job.suspended);  // resumed in the same write
  // Started: released, its record goes and its run keeps the size it runs.
  started.job.startTime = "2026-12-07T10:05:00Z";
  PatchRequest release;
  release.resourceVersion = "41";
  release.workload = "w";
  const auto plan = planPodSetsPatch(started, release);
  REQUIRE(plan.patch.has_value());
  CHECK(sizeOps(*plan.patch).empty());
}

}  // namespace
}  // namespace gpuplacement::core
