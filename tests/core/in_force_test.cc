// The placement in force, judged once: the engine's verdict decides whether
// it may stay, and the explainer's assessment only words it. Each row is a
// reason a placement stops being kept (or is kept); the explainer must
// agree with the engine on every one.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/decide/engine.h"
#include "core/explain/explainer.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using testing::IntentBuilder;
using testing::shippedEngine;
using K = WorkloadKind;
using V = InForceVerdict;

struct Row {
  const char* label;
  WorkloadIntent intent;
  Policy policy;
  const char* instanceType;
  int count;
  CapacityType capacity;
  V verdict;
  const char* reason;  // a part of the assessment's reason; empty: none
};

Policy spotForServing() {
  Policy policy;
  policy.capacity.spotForServing = true;
  return policy;
}

Policy disabled(const char* type) {
  Policy policy;
  policy.disabledInstanceTypes = {type};
  return policy;
}

TEST_CASE("the engine judges the placement in force; the assessment words its verdict") {
  const auto serving = IntentBuilder(K::Inference, "1B").precision(Precision::BF16);
  const std::vector<Row> rows = {
      {"kept", serving, {}, "g5.xlarge", 1, CapacityType::OnDemand, V::Keeps, ""},
      {"gone from the catalog",
       serving,
       {},
       "p9.huge",
       1,
       CapacityType::OnDemand,
       V::NotInCatalog,
       "p9.huge is no longer in the catalog"},
      {"no price any more", serving, disabled("g5.xlarge"), "g5.xlarge", 1, CapacityType::OnDemand,
       V::Unpriced, "g5.xlarge has no on-demand price any more"},
      {"tiers exclude it",
       IntentBuilder(serving).tiers({Tier::Inferentia}),
       {},
       "g5.xlarge",
       1,
       CapacityType::OnDemand,
       V::OutsideConstraints,
       "outside the workload's constraints"},
      {"instance types exclude it",
       IntentBuilder(serving).exclude({"g5.xlarge"}),
       {},
       "g5.xlarge",
       1,
       CapacityType::OnDemand,
       V::OutsideConstraints,
       "outside the workload's constraints"},
      {"on-demand asked, spot in force",
       IntentBuilder(serving).capacity(CapacityType::OnDemand),
       {},
       "g5.xlarge",
       1,
       CapacityType::Spot,
       V::CapacityNotAllowed,
       "now asks for OnDemand capacity"},
      {"Any never keeps Mixed",
       IntentBuilder(serving).capacity(CapacityType::Any),
       {},
       "g5.xlarge",
       1,
       CapacityType::Mixed,
       V::CapacityNotAllowed,
       "now asks for Any capacity"},
      {"Inferentia does not train",
       IntentBuilder(K::Training, "1B").precision(Precision::BF16),
       {},
       "inf2.xlarge",
       1,
       CapacityType::OnDemand,
       V::NeuronIneligible,
       "Inferentia"},
      {"serving on spot without the policy's consent",
       IntentBuilder(serving).capacity(CapacityType::Any),
       {},
       "g5.xlarge",
       1,
       CapacityType::Spot,
       V::SpotWithheld,
       "spec.capacity.spotForServing"},
      {"serving on spot with it", IntentBuilder(serving).capacity(CapacityType::Any),
       spotForServing(), "g5.xlarge", 1, CapacityType::Spot, V::Keeps, ""},
      {"serving on spot it asked for",
       IntentBuilder(serving).capacity(CapacityType::Spot),
       {},
       "g5.xlarge",
       1,
       CapacityType::Spot,
       V::Keeps,
       ""},
      {"the model outgrew it",
       IntentBuilder(K::Inference, "70B"),
       {},
       "g5.xlarge",
       1,
       CapacityType::OnDemand,
       V::NoLongerFits,
       "no longer runs the model"},
      {"over budget",
       IntentBuilder(serving).maxHourlyCost(0.5),
       {},
       "g5.xlarge",
       1,
       CapacityType::OnDemand,
       V::OverBudget,
       "g5.xlarge now costs $1.01/h, over maxHourlyCost"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto engine = shippedEngine(row.policy);
    std::optional<ClusterCost> storage;
    const auto weighing = engine->weighInForce(row.intent, row.instanceType, row.count, {},
                                               row.capacity, nullptr, storage);
    CHECK(weighing.verdict == row.verdict);
    CHECK(weighing.option.has_value() ==
          (row.verdict != V::NotInCatalog && row.verdict != V::Unpriced));
    const auto assessment =
        assess(*engine, row.intent, row.instanceType, row.count, {}, row.capacity, nullptr);
    CHECK(assessment.feasible == weighing.keeps());
    CHECK(assessment.placement.has_value() == weighing.option.has_value());
    if (*row.reason == '\0') {
      CHECK(assessment.reason.empty());
    } else {
      CHECK_MESSAGE(assessment.reason.find(row.reason) != std::string::npos, assessment.reason);
    }
  }
}

// A Mixed option is short of room in one half: the message names that half
// and counts its replicas, as the engine counted them.
TEST_CASE("a Mixed option short of spot room names the spot half") {
  const auto engine = shippedEngine();
  const auto& catalog = engine->catalog();
  ClusterView view;
  view.labels.capacityLabel.key = "karpenter.sh/capacity-type";
  view.capacity.source = CapacitySource::Nodes;
  view.capacity.why = "capacity.source is Nodes";
  view.capacity.offers.resize(catalog.instances.size());
  const int g5 = catalog.indexOf("g5.xlarge");
  REQUIRE(g5 >= 0);
  const auto node = [](const char* name) {
    return NodeRoom{name, 1, 4000, std::int64_t{16} << 30, NodeRoom::kUnboundedPods};
  };
  auto& onDemand = view.capacity.offers[static_cast<std::size_t>(g5)][0];
  onDemand.nodes = 2;
  onDemand.room = {node("od-1"), node("od-2")};
  auto& spot = view.capacity.offers[static_cast<std::size_t>(g5)][1];
  spot.nodes = 1;
  spot.room = {node("spot-1")};
  const WorkloadIntent intent = IntentBuilder(K::Inference, "1B")
                                    .precision(Precision::BF16)
                                    .capacity(CapacityType::Mixed)
                                    .only({"g5.xlarge"})
                                    .replicas(4);
  const auto decision = decide(*engine, intent, ClusterContext{&view, {}, {}});
  CHECK_FALSE(decision.placement);
  // Two on-demand replicas fit the two on-demand nodes; the one spot node
  // holds one of the two spot replicas.
  CHECK_MESSAGE(decision.cannotPlace.find("the 1 node of g5.xlarge spot has room for 1 of 2 "
                                          "replicas") != std::string::npos,
                decision.cannotPlace);
}

}  // namespace
}  // namespace gpuplacement::core
