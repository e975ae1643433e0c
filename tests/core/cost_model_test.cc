// Cost = what the cluster pays: whole nodes by default, a share of a node
// only as an explicit policy choice, and a seam for a cost model that knows
// the cluster.
#include "core/decide/cost_model.h"

#include <doctest/doctest.h>

#include "core/decide/render.h"
#include "core/explain/explainer.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using testing::IntentBuilder;
using testing::shippedEngine;
using C = CapacityType;
using K = WorkloadKind;
using O = Objective;
using P = Precision;

WorkloadIntent only(WorkloadIntent intent, std::vector<std::string> types) {
  intent.constraints.instanceTypes = std::move(types);
  return intent;
}

Policy sharePolicy() {
  Policy policy;
  policy.costModel = CostModel::AcceleratorShare;
  return policy;
}

}  // namespace

TEST_CASE("whole nodes: nodes = ceil(replicas / replicas per node); each replica pays its part") {
  struct Row {
    int replicas;
    int replicasPerNode;
    double nodeHourly;
    int nodes;
    double totalHourly;
  };
  const Row rows[] = {
      {1, 16, 21.50, 1, 21.50},  // one Trainium chip of sixteen: the whole node
      {4, 4, 21.50, 1, 21.50},   // four 4-chip replicas fill one trn1.32xlarge
      {5, 4, 21.50, 2, 43.00},   // the fifth needs a second node
      {8, 8, 27.44705, 1, 27.44705}, {9, 8, 27.44705, 2, 54.8941},
      {0, 8, 27.44705, 1, 27.44705},  // a Deployment at zero is priced as one replica
  };
  const WholeNodeCost model;
  for (const auto& row : rows) {
    CAPTURE(row.replicas);
    CAPTURE(row.replicasPerNode);
    const auto quote = model.quote(
        CostInput{0, nullptr, C::OnDemand, row.nodeHourly, row.replicas, row.replicasPerNode, 0.1});
    CHECK(quote.basis == CostModel::WholeInstance);
    CHECK(quote.nodes == row.nodes);
    CHECK(quote.totalHourly == doctest::Approx(row.totalHourly));
    CHECK(quote.perReplicaHourly == doctest::Approx(row.totalHourly / std::max(row.replicas, 1)));
  }
}

TEST_CASE("a node's share: AcceleratorShare prices the fraction a replica uses") {
  const AcceleratorShareCost model;
  const auto quote = model.quote(CostInput{0, nullptr, C::Spot, 3.9051, 3, 16, 1.0 / 16});
  CHECK(quote.basis == CostModel::AcceleratorShare);
  CHECK(quote.perReplicaHourly == doctest::Approx(0.2441).epsilon(1e-3));
  CHECK(quote.totalHourly == doctest::Approx(3 * 3.9051 / 16));
  CHECK(&costModelFor(CostModel::AcceleratorShare) != &costModelFor(CostModel::WholeInstance));
}

TEST_CASE("issue cases: what a lone workload pays") {
  // mistral-finetune (the README's sample): 7B bf16 LoRA on spot.
  const WorkloadIntent finetune = IntentBuilder(K::FineTuning, "7B")
                                      .precision(P::BF16)
                                      .objective(O::CostOptimized)
                                      .capacity(C::Spot);
  struct Row {
    const char* label;
    WorkloadIntent intent;
    Policy policy;
    const char* instanceType;
    int count;
    double hourly;      // per replica
    double nodeHourly;  // one node
    int idle;
    const char* note;
  };
  const Row rows[] = {
      // A lone job pays for the whole node: trn1.2xlarge at $0.365/h spot,
      // not 1/16 of a trn1.32xlarge ($0.2441/h) that nobody else fills.
      {"mistral-finetune", finetune, Policy{}, "trn1.2xlarge", 1, 0.365, 0.365, 0,
       "1 of 1 Trainium on one trn1.2xlarge at $0.365/h"},
      // The big node alone: the whole $3.91/h, so the job trains
      // data-parallel on all sixteen chips rather than leave fifteen idle.
      {"on trn1.32xlarge", only(finetune, {"trn1.32xlarge"}), Policy{}, "trn1.32xlarge", 16, 3.9051,
       3.9051, 0, "16 of 16 Trainium on one trn1.32xlarge at $3.91/h"},
      // AcceleratorShare, chosen explicitly, prices the share and says so;
      // the rest of the node is others' to pay for, so none of it is idle.
      {"shared nodes", finetune, sharePolicy(), "trn1.32xlarge", 1, 3.9051 / 16, 3.9051, 0,
       "6% of a trn1.32xlarge at $3.91/h, assuming other workloads pay for the rest "
       "(AcceleratorShare)"},
      // sdxl-batch: one B200 of eight is a $113.93/h node (spot $19.09).
      {"sdxl on a B200 node",
       IntentBuilder(K::BatchInference, "3.5B")
           .architecture(Architecture::Diffusion)
           .capacity(C::Spot)
           .only({"p6-b200.48xlarge"}),
       Policy{}, "p6-b200.48xlarge", 1, 19.0919, 19.0919, 7, "; 7 B200 idle"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto decision = decide(*shippedEngine(row.policy), row.intent);
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    const auto& placement = *decision.placement;
    CHECK(placement.instanceType == row.instanceType);
    CHECK(placement.acceleratorCount == row.count);
    CHECK(placement.hourlyCost == doctest::Approx(row.hourly));
    CHECK(placement.nodeHourlyCost == doctest::Approx(row.nodeHourly));
    CHECK(placement.idleAccelerators == row.idle);
    CHECK(placement.costModel == row.policy.costModel);
    CAPTURE(placement.costNote);
    CHECK(placement.costNote.find(row.note) != std::string::npos);
  }
}

TEST_CASE("replicas pack onto nodes of the chosen type") {
  // 13B fp16 inference needs 29.1 GiB: one A100-80GB, eight replicas per p4de.
  struct Row {
    int replicas;
    int nodes;
  };
  // The cheapest: one replica alone on the node is split across all eight
  // instead (it pays for them, and they make it faster).
  const auto alone = decide(
      *shippedEngine(),
      IntentBuilder(K::Inference, "13B").objective(O::CostOptimized).only({"p4de.24xlarge"}));
  REQUIRE(alone.placement);
  CHECK(alone.placement->acceleratorCount == 8);
  CHECK(alone.placement->idleAccelerators == 0);
  for (const Row row : {Row{8, 1}, Row{9, 2}, Row{16, 2}, Row{17, 3}}) {
    CAPTURE(row.replicas);
    const auto decision = decide(*shippedEngine(), IntentBuilder(K::Inference, "13B")
                                                       .objective(O::CostOptimized)
                                                       .only({"p4de.24xlarge"})
                                                       .replicas(row.replicas));
    REQUIRE(decision.placement);
    const auto& placement = *decision.placement;
    CHECK(placement.acceleratorCount == 1);
    CHECK(placement.replicasPerNode == 8);
    CHECK(placement.nodes == row.nodes);
    CHECK(placement.totalHourlyCost == doctest::Approx(27.44705 * row.nodes));
    CHECK(placement.hourlyCost == doctest::Approx(27.44705 * row.nodes / row.replicas));
    CHECK(placement.idleAccelerators == 8 * row.nodes - row.replicas);
  }
  // With many replicas, packing a big node can beat small ones: sixteen
  // 1-chip fine-tunes fill one trn1.32xlarge ($21.50/h) where sixteen
  // trn1.2xlarge cost $21.50 too, on-demand, and cost per replica is equal.
  const auto sixteen = decide(*shippedEngine(), IntentBuilder(K::FineTuning, "7B")
                                                    .precision(P::BF16)
                                                    .objective(O::CostOptimized)
                                                    .replicas(16)
                                                    .only({"trn1.32xlarge"}));
  REQUIRE(sixteen.placement);
  CHECK(sixteen.placement->nodes == 1);
  CHECK(sixteen.placement->hourlyCost == doctest::Approx(21.50 / 16));
}

TEST_CASE("AcceleratorShare is no longer what makes 13B training choose 3 of 8 A100s") {
  const WorkloadIntent intent =
      IntentBuilder(K::Training, "13B").precision(P::BF16).objective(O::CostOptimized);
  // Whole nodes: a trn1.32xlarge ($21.50/h) beats a p4d ($21.96/h).
  const auto whole = decide(*shippedEngine(), intent);
  REQUIRE(whole.placement);
  CHECK(whole.placement->instanceType == "trn1.32xlarge");
  CHECK(whole.placement->hourlyCost == doctest::Approx(21.50));
  // Shares: half a trn1.32xlarge ($10.75/h) against half a p4de (4 of 8,
  // a power of two, $13.72/h).
  const auto shared = decide(*shippedEngine(sharePolicy()), intent);
  REQUIRE(shared.placement);
  CHECK(shared.placement->instanceType == "trn1.32xlarge");
  CHECK(shared.placement->hourlyCost == doctest::Approx(21.50 * 8 / 16));
  for (const auto& alternative : shared.alternatives) {
    if (alternative.instanceType == "p4de.24xlarge") {
      CHECK(alternative.acceleratorCount == 4);
      CHECK(*alternative.hourlyCost == doctest::Approx(27.44705 * 4 / 8));
    }
  }
}

TEST_CASE("the scheduling fields select the node shape that was priced, under every scheme") {
  const WorkloadIntent finetune = IntentBuilder(K::FineTuning, "7B")
                                      .precision(P::BF16)
                                      .objective(O::CostOptimized)
                                      .capacity(C::Spot);
  const WorkloadIntent llama = IntentBuilder(K::Inference, "70B").only({"p4de.24xlarge"});
  for (auto scheme :
       {LabelScheme::InstanceType, LabelScheme::Karpenter, LabelScheme::GPUFeatureDiscovery}) {
    CAPTURE(std::string(nameOf(scheme)));
    for (const auto& [intent, costModel] : {std::pair{finetune, CostModel::WholeInstance},
                                            std::pair{finetune, CostModel::AcceleratorShare},
                                            std::pair{llama, CostModel::WholeInstance}}) {
      Policy policy;
      policy.labelScheme = scheme;
      policy.costModel = costModel;
      const auto engine = shippedEngine(policy);
      const auto decision = decide(*engine, intent);
      REQUIRE(decision.placement);
      const auto& placement = *decision.placement;
      const auto scheduling = renderScheduling(placement, engine->catalog(), policy);
      const auto& selector = scheduling.nodeSelector;
      const auto* instance = engine->catalog().find(placement.instanceType);
      if (const auto it = selector.find("node.kubernetes.io/instance-type"); it != selector.end()) {
        CHECK(it->second == placement.instanceType);
      }
      // Never a node with more devices than the one that was priced.
      for (const char* key : {"karpenter.k8s.aws/instance-accelerator-count",
                              "karpenter.k8s.aws/instance-gpu-count", "nvidia.com/gpu.count"}) {
        if (const auto it = selector.find(key); it != selector.end()) {
          CHECK(it->second == std::to_string(instance->acceleratorCount));
        }
      }
      CHECK(selector.size() >= 2);  // the node shape plus the capacity type
    }
  }
  // Karpenter tells the A100 sizes apart by memory per GPU (EC2 MiB).
  Policy karpenter;
  karpenter.labelScheme = LabelScheme::Karpenter;
  const auto engine = shippedEngine(karpenter);
  const auto decision = decide(*engine, llama);
  REQUIRE(decision.placement);
  const auto scheduling = renderScheduling(*decision.placement, engine->catalog(), karpenter);
  CHECK(scheduling.nodeSelector.at("karpenter.k8s.aws/instance-gpu-name") == "a100");
  CHECK(scheduling.nodeSelector.at("karpenter.k8s.aws/instance-gpu-memory") == "81920");
  CHECK(scheduling.nodeSelector.at("karpenter.k8s.aws/instance-gpu-count") == "8");
}

namespace {

// The seam the next issue fills: a cluster with free, already-paid devices
// on one instance type. Those cost only their share; anything else a whole
// new node.
class FreeDevicesOn final : public NodeCostModel {
 public:
  explicit FreeDevicesOn(std::string type) : type_(std::move(type)) {}
  CostQuote quote(const CostInput& input) const override {
    if (input.type && input.type->type == type_) {
      return AcceleratorShareCost().quote(input);
    }
    return WholeNodeCost().quote(input);
  }

 private:
  std::string type_;
};

}  // namespace

TEST_CASE("a cost model that knows the cluster plugs into decide()") {
  const WorkloadIntent intent = IntentBuilder(K::FineTuning, "7B")
                                    .precision(P::BF16)
                                    .objective(O::CostOptimized)
                                    .capacity(C::Spot);
  const auto engine = shippedEngine();
  CHECK(decide(*engine, intent).placement->instanceType == "trn1.2xlarge");
  // Fifteen idle chips on an existing trn1.32xlarge: the share is cheapest.
  const auto decision = decide(*engine, intent, FreeDevicesOn("trn1.32xlarge"));
  REQUIRE(decision.placement);
  CHECK(decision.placement->instanceType == "trn1.32xlarge");
  CHECK(decision.placement->hourlyCost == doctest::Approx(3.9051 / 16));
}

TEST_CASE("Mixed: half the replicas at each capacity type, the odd one priced on-demand") {
  struct Split {
    int replicas;
    int onDemand;
    int spot;
  };
  for (const Split row : {Split{0, 1, 0}, Split{1, 1, 0}, Split{2, 1, 1}, Split{3, 2, 1},
                          Split{4, 2, 2}, Split{7, 4, 3}}) {
    CAPTURE(row.replicas);
    CHECK(mixedSplit(row.replicas).onDemand == row.onDemand);
    CHECK(mixedSplit(row.replicas).spot == row.spot);
  }

  // 7B fp16 serving on g5.xlarge (one A10G a node), each part on its own nodes.
  const auto engine = shippedEngine();
  const int index = engine->catalog().indexOf("g5.xlarge");
  REQUIRE(index >= 0);
  const double onDemand = *engine->price(index, C::OnDemand);
  const double spot = *engine->price(index, C::Spot);
  REQUIRE(spot < onDemand);
  CHECK(engine->price(index, C::Mixed) == onDemand);
  for (const Split row : {Split{1, 1, 0}, Split{2, 1, 1}, Split{3, 2, 1}, Split{4, 2, 2}}) {
    CAPTURE(row.replicas);
    const auto decision = decide(*engine, IntentBuilder(K::Inference, "7B")
                                              .capacity(C::Mixed)
                                              .replicas(row.replicas)
                                              .only({"g5.xlarge"}));
    REQUIRE_MESSAGE(decision.placement, decision.cannotPlace);
    const auto& placement = *decision.placement;
    CHECK(placement.capacityType == C::Mixed);
    CHECK(placement.onDemandReplicas == row.onDemand);
    CHECK(placement.spotReplicas == row.spot);
    CHECK(placement.nodes == row.replicas);
    CHECK(placement.nodeHourlyCost == doctest::Approx(onDemand));
    CHECK(placement.spotNodeHourlyCost == doctest::Approx(spot));
    CHECK(placement.totalHourlyCost == doctest::Approx(row.onDemand * onDemand + row.spot * spot));
    CAPTURE(placement.costNote);
    CHECK(placement.costNote.find(
              std::to_string(row.onDemand) +
              (row.onDemand == 1 ? " replica on-demand, " : " replicas on-demand, ") +
              std::to_string(row.spot) + " spot") == 0);
    CHECK((placement.costNote.find("the odd one priced on-demand") != std::string::npos) ==
          (row.replicas % 2 == 1));
    CHECK(decision.reason.find("half spot, half on-demand") != std::string::npos);
    CHECK(decision.reason.find("the spot half can be interrupted") != std::string::npos);
  }
}

TEST_CASE("Mixed needs a capacity-type label to spread over") {
  Policy none;
  none.capacityTypeLabel = {"", "", ""};
  const auto decision = decide(*shippedEngine(none),
                               IntentBuilder(K::Inference, "7B").capacity(C::Mixed).replicas(4));
  REQUIRE_FALSE(decision.placement);
  CHECK(decision.cannotPlace.find("constraints.capacityType Mixed spreads the replicas over a "
                                  "capacity-type node label") == 0);
  // The same workload at one capacity type needs no label.
  CHECK(
      decide(*shippedEngine(none), IntentBuilder(K::Inference, "7B").capacity(C::Spot)).placement);
}

}  // namespace gpuplacement::core
