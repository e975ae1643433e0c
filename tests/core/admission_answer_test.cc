// The operator's answer as Kueue's admission check controller
// (core/plan/admission_answer.h), from Kueue's Workload and ResourceFlavor
// as the API server serves them (core/kinds/kueue_workload.h,
// core/cluster/kueue_flavors.h), and the types a flavor reaches.
#include "core/plan/admission_answer.h"

#include <doctest/doctest.h>

#include "core/explain/explainer.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

constexpr const char* kCheck = "gpu-placement";

// A Job's Workload as Kueue v0.19 writes it: quota reserved on `flavor`
// for nvidia.com/gpu, our check in `state`.
json workloadJson(const std::string& flavor, const std::string& state,
                  const char* condition = "QuotaReserved") {
  return {
      {"metadata",
       {{"name", "job-train-1a2b3"},
        {"ownerReferences", json::array({{{"apiVersion", "batch/v1"},
                                          {"kind", "Job"},
                                          {"name", "train"},
                                          {"uid", "u-1"},
                                          {"controller", true}}})}}},
      {"spec", {{"podSets", json::array({{{"name", "main"}, {"count", 2}}})}}},
      {"status",
       {{"admission",
         {{"clusterQueue", "gpu-training"},
          {"podSetAssignments",
           json::array({{{"name", "main"},
                         {"flavors", {{"nvidia.com/gpu", flavor}, {"cpu", flavor}}},
                         {"count", 2}}})}}},
        {"admissionChecks", json::array({{{"name", kCheck}, {"state", state}, {"message", ""}}})},
        {"conditions", json::array({{{"type", condition}, {"status", "True"}}})}}}};
}

std::map<std::string, ResourceFlavorView> flavors() {
  const json l4 = {{"spec",
                    {{"nodeLabels",
                      {{"karpenter.k8s.aws/instance-gpu-name", "l4"},
                       {"karpenter.sh/capacity-type", "on-demand"}}},
                     {"tolerations", json::array({{{"key", "nvidia.com/gpu"},
                                                   {"operator", "Exists"},
                                                   {"effect", "NoSchedule"}}})}}}};
  const json l40s = {{"spec",
                      {{"nodeLabels",
                        {{"karpenter.k8s.aws/instance-gpu-name", "l40s"},
                         {"karpenter.sh/capacity-type", "spot"}}}}}};
  return {{"l4-on-demand", resourceFlavorFromJson(l4)},
          {"l40s-spot", resourceFlavorFromJson(l40s)}};
}

// The placement on one L4 of a g6.xlarge, on demand, as rendered under
// Karpenter's labels.
Scheduling l4Placement() {
  Scheduling scheduling;
  scheduling.nodeSelector = {{"karpenter.k8s.aws/instance-gpu-name", "l4"},
                             {"karpenter.k8s.aws/instance-gpu-count", "1"},
                             {"karpenter.sh/capacity-type", "on-demand"}};
  scheduling.tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule"},
                            {"team", "Equal", "ml", "NoSchedule"}};
  return scheduling;
}

TEST_CASE("a Kueue Workload as the API server serves it") {
  const auto workload = kueueWorkloadFromJson(workloadJson("l4-on-demand", "Pending"));
  CHECK(workload.name == "job-train-1a2b3");
  CHECK(workload.ownerKind == "Job");
  CHECK(workload.ownerName == "train");
  CHECK(workload.podSets == std::vector<std::string>{"main"});
  CHECK(workload.clusterQueue == "gpu-training");
  REQUIRE(workload.assignment("main") != nullptr);
  CHECK(workload.assignment("main")->flavors.at("nvidia.com/gpu") == "l4-on-demand");
  CHECK(workload.assignment("main")->count == 2);
  REQUIRE(workload.check(kCheck) != nullptr);
  CHECK(workload.check(kCheck)->state == "Pending");
  CHECK(workload.quotaReserved);
  CHECK_FALSE(workload.admitted);
  // What is not Kueue's shape reads as empty, never throws.
  const auto odd = kueueWorkloadFromJson(json{{"metadata", 3}, {"status", {{"admission", "x"}}}});
  CHECK(odd.name.empty());
  CHECK(odd.assignments.empty());
  CHECK_FALSE(odd.quotaReserved);
}

TEST_CASE("the answer: Ready with what the flavor does not give, Retry where it disagrees") {
  const auto known = flavors();
  const auto scheduling = l4Placement();
  struct Row {
    const char* label;
    std::string flavor;
    std::string state;
    const char* condition;
    bool placed;
    const char* answer;  // "", Ready or Retry
  };
  const Row rows[] = {
      {"quota on the flavor the placement chose", "l4-on-demand", "Pending", "QuotaReserved", true,
       "Ready"},
      {"quota on another GPU: Kueue would fail the Workload", "l40s-spot", "Pending",
       "QuotaReserved", true, "Retry"},
      {"no placement", "l4-on-demand", "Pending", "QuotaReserved", false, "Retry"},
      {"answered already", "l4-on-demand", "Ready", "QuotaReserved", true, ""},
      {"no quota reserved yet", "l4-on-demand", "Pending", "Pending", true, ""},
      {"evicted: Kueue takes its updates back itself", "l4-on-demand", "Pending", "Evicted", true,
       ""},
      {"a flavor not in the cache yet", "h100", "Pending", "QuotaReserved", true, ""},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto workload = kueueWorkloadFromJson(workloadJson(row.flavor, row.state, row.condition));
    AdmissionRequest request;
    request.workload = &workload;
    request.check = kCheck;
    request.scheduling = row.placed ? &scheduling : nullptr;
    request.unplaced = "no node of the queue's flavors holds 70B";
    request.podSets = {"main"};
    request.flavors = &known;
    const auto answer = answerAdmission(request);
    if (std::string(row.answer).empty()) {
      CHECK_FALSE(answer.has_value());
      continue;
    }
    REQUIRE(answer.has_value());
    CHECK(answer->state == row.answer);
    if (answer->state == "Retry") {
      CHECK(answer->updates.empty());
      CHECK(answer->requeueAfterSeconds > 0);
    }
  }
}

TEST_CASE("a Ready answer carries only what Kueue's flavor does not, and applies to our check") {
  const auto known = flavors();
  const auto scheduling = l4Placement();
  const auto workload = kueueWorkloadFromJson(workloadJson("l4-on-demand", "Pending"));
  AdmissionRequest request{&workload, kCheck, &scheduling, {"main", "head"}, "", &known};
  const auto answer = answerAdmission(request);
  REQUIRE(answer.has_value());
  REQUIRE(answer->updates.size() == 1);  // "head" is no pod set of this Workload
  const auto& update = answer->updates.front();
  CHECK(update.podSet == "main");
  // The flavor's own labels and toleration are Kueue's to merge.
  CHECK(update.nodeSelector ==
        std::map<std::string, std::string>{{"karpenter.k8s.aws/instance-gpu-count", "1"}});
  CHECK(update.tolerations == std::vector<Toleration>{{"team", "Equal", "ml", "NoSchedule"}});
  CHECK(answer->message.find("l4-on-demand") != std::string::npos);

  const auto apply =
      admissionCheckApply(workload, "research", kCheck, *answer, "2026-12-08T03:00:00Z");
  CHECK(apply.at("kind") == "Workload");
  CHECK(apply.at("metadata").at("namespace") == "research");
  const auto& state = apply.at("status").at("admissionChecks").at(0);
  CHECK(state.at("name") == kCheck);
  CHECK(state.at("state") == "Ready");
  CHECK(state.at("lastTransitionTime") == "2026-12-08T03:00:00Z");
  CHECK(state.at("podSetUpdates").at(0).at("nodeSelector") ==
        json{{"karpenter.k8s.aws/instance-gpu-count", "1"}});
  CHECK(state.at("podSetUpdates").at(0).at("tolerations").size() == 1);
  CHECK_FALSE(state.contains("requeueAfterSeconds"));

  const auto other = kueueWorkloadFromJson(workloadJson("l40s-spot", "Pending"));
  request.workload = &other;
  const auto retry = answerAdmission(request);
  REQUIRE(retry.has_value());
  CHECK(retry->message ==
        "pod set main: the flavor l40s-spot Kueue reserved selects "
        "karpenter.k8s.aws/instance-gpu-name=l40s, and the placement needs "
        "karpenter.k8s.aws/instance-gpu-name=l4");
  const auto retried = admissionCheckApply(other, "research", kCheck, *retry, "t");
  CHECK(retried.at("status").at("admissionChecks").at(0).at("requeueAfterSeconds") == 30);
  CHECK_FALSE(retried.at("status").at("admissionChecks").at(0).contains("podSetUpdates"));
}

TEST_CASE("a flavor's reach: the types whose nodes carry its labels, by capacity type") {
  const auto& catalog = *testing::shippedCatalog();
  const auto known = flavors();
  ClusterState noPools;
  const auto l4 = flavorReach(known.at("l4-on-demand"), catalog, noPools);
  CHECK(l4.spot.empty());
  CHECK(l4.onDemand.count("g6.xlarge") == 1);
  CHECK(l4.onDemand.count("g6.48xlarge") == 1);
  CHECK(l4.onDemand.count("g6e.xlarge") == 0);
  const auto l40s = flavorReach(known.at("l40s-spot"), catalog, noPools);
  CHECK(l40s.onDemand.empty());
  CHECK(l40s.spot.count("g6e.xlarge") == 1);

  // A flavor by NodePool: the types the pool may launch, its labels on them.
  const NodePoolView a10g{
      {{"karpenter.k8s.aws/instance-family", "In", {"g5"}}}, {{"team", "vision"}}, {}, {}};
  ClusterState pools;
  pools.nodePools = {{"gpu-a10g", &a10g}};
  const auto byPool = resourceFlavorFromJson(json{
      {"spec", {{"nodeLabels", {{"karpenter.sh/nodepool", "gpu-a10g"}, {"team", "vision"}}}}}});
  const auto reach = flavorReach(byPool, catalog, pools);
  CHECK(reach.onDemand.count("g5.xlarge") == 1);
  CHECK(reach.spot.count("g5.12xlarge") == 1);
  CHECK(reach.onDemand.count("g6.xlarge") == 0);
  CHECK(flavorReach(byPool, catalog, noPools).empty());

  // A zone is where a node runs, not what it is; no labels: anywhere.
  const auto zoned =
      resourceFlavorFromJson(json{{"spec",
                                   {{"nodeLabels",
                                     {{"topology.kubernetes.io/zone", "us-east-1a"},
                                      {"node.kubernetes.io/instance-type", "p5.48xlarge"}}}}}});
  CHECK(flavorReach(zoned, catalog, noPools).onDemand == std::set<std::string>{"p5.48xlarge"});
  const auto anywhere = flavorReach(ResourceFlavorView{}, catalog, noPools);
  CHECK(anywhere.onDemand.size() == catalog.instances.size());
}

TEST_CASE("the decision within the flavor Kueue reserved: its types, at its capacity type") {
  const auto engine = testing::shippedEngine();
  const auto known = flavors();
  ClusterState noPools;
  using K = WorkloadKind;
  std::string why;
  const auto l4 = flavorReach(known.at("l4-on-demand"), engine->catalog(), noPools);
  const auto within = intentWithinFlavor(testing::IntentBuilder(K::Inference, "7B").intent, l4,
                                         "l4-on-demand", why);
  REQUIRE(within.has_value());
  CHECK(within->constraints.capacityType == CapacityType::OnDemand);
  const auto decision = decide(*engine, *within);
  REQUIRE(decision.placement.has_value());
  CHECK(decision.placement->accelerator == "L4");
  CHECK(decision.placement->capacityType == CapacityType::OnDemand);
  // Rendered, its selector agrees with the flavor's labels: Kueue's merge
  // finds nothing to refuse.
  const auto scheduling =
      renderScheduling(*decision.placement, engine->catalog(), engine->policy(),
                       NodeLabels{LabelScheme::Karpenter, CapacityTypeLabel{}, "", ""});
  for (const auto& [key, value] : known.at("l4-on-demand").nodeLabels) {
    const auto found = scheduling.nodeSelector.find(key);
    CHECK((found == scheduling.nodeSelector.end() || found->second == value));
  }

  // The team asks for on-demand, the flavor is spot: no decision, and why.
  const auto l40s = flavorReach(known.at("l40s-spot"), engine->catalog(), noPools);
  CHECK_FALSE(
      intentWithinFlavor(testing::IntentBuilder(K::Inference, "7B").intent, l40s, "l40s-spot", why)
          .has_value());
  CHECK(why ==
        "the flavor l40s-spot reaches spot capacity only, and spec.constraints.capacityType is "
        "OnDemand");
  // The team's own types, none of them the flavor's.
  auto p5 = testing::IntentBuilder(K::Inference, "7B").only({"p5.48xlarge"}).intent;
  CHECK_FALSE(intentWithinFlavor(p5, l4, "l4-on-demand", why).has_value());
  CHECK(why.find("spec.constraints.instanceTypes") != std::string::npos);
}

}  // namespace
}  // namespace gpuplacement::core
