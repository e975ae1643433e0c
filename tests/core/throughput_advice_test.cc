// Whether a serving target's replicas carry its throughput target, and how
// many would: from spec.replicas, or from the maxReplicas of the
// HorizontalPodAutoscaler that scales it. Replicas are never written.
#include "core/explain/throughput_advice.h"

#include <doctest/doctest.h>

namespace gpuplacement::core::throughput_advice_test {

using json = nlohmann::json;

Placement servingPlacement() {
  Placement placement;
  placement.instanceType = "p5.4xlarge";
  placement.hourlyCost = 6.88;
  placement.tokensPerSecondPerReplica = 659;
  placement.replicasForThroughput = 4;  // of 2,600 tokens a second
  return placement;
}

ServingLoad load(double tokensPerSecond) {
  ServingLoad serving{4096, 16, Precision::FP8};
  serving.tokensPerSecond = tokensPerSecond;
  return serving;
}

TEST_CASE("replicas against a throughput target: enough, too few, and the autoscaler's bound") {
  struct Row {
    const char* what;
    int replicas;
    std::optional<Autoscaler> autoscaler;
    bool enough;
    int counted;
    const char* from;
    const char* message;
  };
  const Row rows[] = {
      {"spec.replicas carry it", 5, std::nullopt, true, 5, "spec.replicas of Deployment chat",
       "5 replicas (spec.replicas of Deployment chat) carry about 3,295 tokens a second, the "
       "2,600 targeted taking 4 replicas"},
      {"exactly enough", 4, std::nullopt, true, 4, "spec.replicas of Deployment chat", "carry"},
      {"too few: how many, the command, and both costs", 1, std::nullopt, false, 1,
       "spec.replicas of Deployment chat",
       "1 replica (spec.replicas of Deployment chat) carries about 659 of the 2,600 tokens a "
       "second targeted: it takes 4 replicas on p5.4xlarge (kubectl scale deployment/chat "
       "--replicas=4), $27.52/h against $6.88/h for 1"},
      {"an autoscaler's maximum counts, not today's replicas", 1, Autoscaler{"chat-hpa", 1, 6},
       true, 6, "maxReplicas of HorizontalPodAutoscaler chat-hpa", "6 replicas"},
      {"an autoscaler too small is what to raise", 8, Autoscaler{"chat-hpa", 1, 3}, false, 3,
       "maxReplicas of HorizontalPodAutoscaler chat-hpa",
       "raise maxReplicas of HorizontalPodAutoscaler chat-hpa to 4"},
      {"a Deployment at zero", 0, std::nullopt, false, 0, "spec.replicas of Deployment chat",
       "0 replicas (spec.replicas of Deployment chat) carry about 0 of the 2,600"},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.what));
    const auto advice = adviseThroughput(servingPlacement(), load(2600), TargetKind::Deployment,
                                         "chat", row.replicas, row.autoscaler);
    REQUIRE(advice);
    CHECK(advice->enough == row.enough);
    CHECK(advice->replicas == row.counted);
    CHECK(advice->replicasFrom == row.from);
    CHECK(advice->replicasNeeded == 4);
    CHECK(advice->hourlyCostNeeded == doctest::Approx(27.52));
    CHECK(advice->carriesTokensPerSecond == doctest::Approx(659.0 * row.counted));
    CHECK_MESSAGE(advice->message.find(row.message) != std::string::npos, advice->message);
  }
  // A StatefulSet's command names it so.
  const auto set = adviseThroughput(servingPlacement(), load(2600), TargetKind::StatefulSet, "kv",
                                    2, std::nullopt);
  REQUIRE(set);
  CHECK(set->message.find("kubectl scale statefulset/kv --replicas=4") != std::string::npos);
}

TEST_CASE("no advice without a target, a replica count, or for a Job") {
  CHECK_FALSE(adviseThroughput(servingPlacement(), load(0), TargetKind::Deployment, "chat", 1,
                               std::nullopt));
  Placement none = servingPlacement();
  none.replicasForThroughput = 0;
  CHECK_FALSE(adviseThroughput(none, load(2600), TargetKind::Deployment, "chat", 1, std::nullopt));
  CHECK_FALSE(
      adviseThroughput(servingPlacement(), load(2600), TargetKind::Job, "batch", 1, std::nullopt));
  // A target in requests counts as its output tokens.
  ServingLoad requests = load(0);
  requests.requestsPerSecond = 13;
  requests.meanPromptTokens = 500;
  requests.meanOutputTokens = 200;
  const auto advice = adviseThroughput(servingPlacement(), requests, TargetKind::Deployment, "chat",
                                       1, std::nullopt);
  REQUIRE(advice);
  CHECK(advice->targetTokensPerSecond == doctest::Approx(2600));
}

TEST_CASE("a HorizontalPodAutoscaler as the cache keeps it") {
  struct Row {
    const char* object;
    std::optional<TargetKind> kind;
    const char* target;
    int min;
    int max;
  };
  const Row rows[] = {
      {R"({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1",
          "kind": "Deployment", "name": "chat"}, "minReplicas": 2, "maxReplicas": 8}})",
       TargetKind::Deployment, "chat", 2, 8},
      {R"({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1",
          "kind": "StatefulSet", "name": "kv"}, "maxReplicas": 3}})",
       TargetKind::StatefulSet, "kv", 1, 3},
      // Another group's Deployment, a kind not placed, a Job (no scale
      // subresource), and what cannot be read: no target.
      {R"({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "example.com/v1",
          "kind": "Deployment", "name": "chat"}, "maxReplicas": 3}})",
       std::nullopt, "", 1, 3},
      {R"({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1",
          "kind": "ReplicaSet", "name": "rs"}, "maxReplicas": 3}})",
       std::nullopt, "", 1, 3},
      {R"({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": {"apiVersion": "batch/v1",
          "kind": "Job", "name": "j"}, "maxReplicas": 3}})",
       std::nullopt, "", 1, 3},
      {R"({"metadata": {"name": "h"}, "spec": {"scaleTargetRef": "chat", "minReplicas": -4,
          "maxReplicas": "many"}})",
       std::nullopt, "", 0, 0},
      {R"([])", std::nullopt, "", 1, 0},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.object));
    const auto view = autoscalerFromJson(json::parse(row.object));
    CHECK(view.targetKind == row.kind);
    CHECK(view.targetName == row.target);
    CHECK(view.bounds.minReplicas == row.min);
    CHECK(view.bounds.maxReplicas == row.max);
  }
}

}  // namespace gpuplacement::core::throughput_advice_test
