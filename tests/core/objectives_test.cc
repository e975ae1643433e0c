// The objectives agree with themselves, as properties over a generated grid
// of intents: CostOptimized is the cheapest answer, MaxPerformance the
// fastest, Balanced the best performance per dollar of the three; a latency
// target moves the answer only where the hardware says so; online serving
// takes spot only with the policy's consent. A property that fails names
// the intent.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "core/decide/engine.h"
#include "core/explain/explainer.h"
#include "core/intent/workload.h"
#include "support/engine_fixture.h"

namespace gpuplacement::core {
namespace {

using testing::shippedEngine;
using K = WorkloadKind;
using O = Objective;
using P = Precision;

constexpr double kTolerance = 1e-9;

std::string describe(const WorkloadIntent& intent) {
  std::ostringstream out;
  out << nameOf(intent.kind) << " " << intent.parameters << " " << nameOf(intent.precision) << " "
      << nameOf(intent.architecture) << " " << nameOf(intent.objective) << " "
      << nameOf(intent.constraints.capacityType) << " x" << intent.replicas;
  if (intent.latencyTargetMs) {
    out << " < " << *intent.latencyTargetMs << " ms";
  }
  return out.str();
}

// Every valid combination of size, precision, kind, architecture, latency
// target and replicas (the objective is set by the caller).
std::vector<WorkloadIntent> grid() {
  std::vector<WorkloadIntent> intents;
  const std::uint64_t sizes[] = {125'000'000,   1'000'000'000,  3'000'000'000,
                                 7'000'000'000, 13'000'000'000, 70'000'000'000};
  const auto& catalog = *testing::shippedCatalog();
  for (auto parameters : sizes) {
    for (auto precision : {P::FP32, P::BF16, P::FP8, P::INT4}) {
      for (auto kind : {K::Training, K::FineTuning, K::Inference, K::BatchInference}) {
        for (auto architecture :
             {Architecture::Transformer, Architecture::Diffusion, Architecture::Speech}) {
          for (std::optional<double> latency : {std::optional<double>{}, std::optional{50.0}}) {
            for (int replicas : {1, 4}) {
              WorkloadIntent intent;
              intent.parameters = parameters;
              intent.precision = precision;
              intent.kind = kind;
              intent.architecture = architecture;
              intent.latencyTargetMs = isTraining(kind) ? std::nullopt : latency;
              intent.replicas = replicas;
              if (isTraining(kind) && latency) {
                continue;  // no target for training: one copy is enough
              }
              if (validateIntent(intent, catalog).ok()) {
                intents.push_back(intent);
              }
            }
          }
        }
      }
    }
  }
  return intents;
}

Decision decideAs(const PlacementEngine& engine, WorkloadIntent intent, Objective objective) {
  intent.objective = objective;
  return decide(engine, intent);
}

double perDollar(const Placement& placement) {
  return placement.performance / std::max(placement.paidByCluster(), 1e-9);
}

}  // namespace

TEST_CASE("objectives agree with themselves over a grid of intents") {
  const auto engine = shippedEngine();
  const auto intents = grid();
  MESSAGE(intents.size() << " intents, three objectives each");
  CHECK(intents.size() >= 300);
  int compared = 0;
  for (const auto& intent : intents) {
    const auto cost = decideAs(*engine, intent, O::CostOptimized);
    const auto balanced = decideAs(*engine, intent, O::Balanced);
    const auto fastest = decideAs(*engine, intent, O::MaxPerformance);
    const std::string what = describe(intent);
    CAPTURE(what);
    // Whether a workload can be placed does not depend on its objective.
    CHECK(cost.placement.has_value() == balanced.placement.has_value());
    CHECK(cost.placement.has_value() == fastest.placement.has_value());
    if (!cost.placement || !balanced.placement || !fastest.placement) {
      continue;
    }
    // A target is met by all three answers or by none of them.
    CHECK(cost.latencyTargetUnreachable == balanced.latencyTargetUnreachable);
    CHECK(cost.latencyTargetUnreachable == fastest.latencyTargetUnreachable);
    const auto& c = *cost.placement;
    const auto& b = *balanced.placement;
    const auto& m = *fastest.placement;
    CAPTURE(c.costNote);
    CAPTURE(b.costNote);
    CAPTURE(m.costNote);
    ++compared;
    // CostOptimized: nothing the others chose is cheaper.
    CHECK(c.paidByCluster() <= b.paidByCluster() + kTolerance);
    CHECK(c.paidByCluster() <= m.paidByCluster() + kTolerance);
    // MaxPerformance: nothing the others chose is faster, unless it pays
    // for devices it leaves idle (which the fastest answer avoids).
    if (b.idleAccelerators == 0) {
      CHECK(m.performance >= b.performance * (1 - 1e-9));
    }
    if (c.idleAccelerators == 0) {
      CHECK(m.performance >= c.performance * (1 - 1e-9));
    }
    // Balanced: the most performance per dollar of the three.
    CHECK(perDollar(b) >= perDollar(c) * (1 - 1e-9));
    CHECK(perDollar(b) >= perDollar(m) * (1 - 1e-9));
  }
  MESSAGE(compared << " intents placed under all three objectives");
  CHECK(compared >= 250);
}

TEST_CASE("a latency target moves the answer only where the hardware says so") {
  // Tightening a target that the answer still meets changes nothing: no
  // class boundary flips the tier (10 and 100 ms were such boundaries).
  const auto engine = shippedEngine();
  int tightened = 0;
  for (auto intent : grid()) {
    if (isTraining(intent.kind) || !intent.latencyTargetMs) {
      continue;
    }
    for (auto objective : {O::CostOptimized, O::Balanced, O::MaxPerformance}) {
      intent.objective = objective;
      for (double target : {10.0, 20.0, 50.0, 100.0, 200.0}) {
        intent.latencyTargetMs = target;
        const auto at = decide(*engine, intent);
        if (!at.placement || at.latencyTargetUnreachable || *at.placement->latencyMs > target - 1) {
          continue;
        }
        auto tighter = intent;
        tighter.latencyTargetMs = target - 1;
        const auto below = decide(*engine, tighter);
        const std::string what = describe(tighter);
        CAPTURE(what);
        REQUIRE(below.placement);
        CHECK(below.placement->instanceType == at.placement->instanceType);
        CHECK(below.placement->acceleratorCount == at.placement->acceleratorCount);
        CHECK(below.placement->capacityType == at.placement->capacityType);
        ++tightened;
      }
    }
  }
  MESSAGE(tightened << " targets tightened by 1 ms with the answer unchanged");
  CHECK(tightened >= 100);
}

TEST_CASE("online serving takes spot only with the policy's consent, and says so") {
  const auto engine = shippedEngine();
  Policy allow;
  allow.capacity.spotForServing = true;
  const auto allowing = shippedEngine(allow);
  int withheld = 0;
  int allowed = 0;
  for (auto intent : grid()) {
    if (intent.kind != K::Inference) {
      continue;
    }
    intent.constraints.capacityType = CapacityType::Any;
    intent.objective = O::CostOptimized;
    const std::string what = describe(intent);
    CAPTURE(what);
    const auto decision = decide(*engine, intent);
    if (decision.placement) {
      CHECK(decision.placement->capacityType == CapacityType::OnDemand);
      CHECK(decision.reason.find("spot not considered: online serving") != std::string::npos);
      ++withheld;
    }
    const auto consented = decide(*allowing, intent);
    if (consented.placement && consented.placement->capacityType == CapacityType::Spot) {
      CHECK(consented.reason.find("interrupted with two minutes' notice") != std::string::npos);
      ++allowed;
    }
  }
  CHECK(withheld > 0);
  CHECK(allowed > 0);
}

}  // namespace gpuplacement::core
