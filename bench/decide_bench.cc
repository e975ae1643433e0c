// Decisions per second and latency per decision of the placement engine,
// with the full shipped catalog and rules, on one core. Prints figures; it
// passes or fails nothing. Target (issue 3): >= 200,000 decisions/s, p99 < 20 us.
//   build/bin/decide_bench [decisions]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "app/placement_config.h"
#include "core/catalog/quantity.h"
#include "core/explain/explainer.h"

namespace {

std::atomic<std::size_t> allocations{0};

}  // namespace

// Counting allocations shows what a decision costs the allocator.
void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* pointer = std::malloc(size == 0 ? 1 : size)) {
    return pointer;
  }
  throw std::bad_alloc();
}
void operator delete(void* pointer) noexcept {
  std::free(pointer);
}
void operator delete(void* pointer, std::size_t) noexcept {
  std::free(pointer);
}

int main(int argc, char** argv) {
  using namespace gpuplacement;
  using Clock = std::chrono::steady_clock;
  const std::size_t decisions = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 500'000;

  auto engine = app::loadEngine({});
  if (!engine) {
    std::fprintf(stderr, "error: %s\n", engine.error().describe().c_str());
    return 1;
  }

  // A fixed, varied workload mix: every kind, size bucket, precision,
  // objective, capacity type and latency class.
  std::mt19937 random(7);
  const char* sizes[] = {"125M", "350M", "1.3B", "3B", "7B", "13B", "34B", "70B", "180B"};
  std::vector<core::WorkloadIntent> intents(4096);
  for (auto& intent : intents) {
    intent.kind = static_cast<core::WorkloadKind>(random() % 4);
    intent.parameters = *core::parseParameterCount(sizes[random() % 9]);
    intent.precision = static_cast<core::Precision>(random() % 6);
    intent.framework = static_cast<core::Framework>(random() % 5);
    intent.architecture = static_cast<core::Architecture>(random() % 5);
    intent.objective = static_cast<core::Objective>(random() % 3);
    intent.constraints.capacityType = static_cast<core::CapacityType>(random() % 3);
    if (random() % 3 == 0) {
      intent.latencyTargetMs = 5.0 + static_cast<double>(random() % 300);
    }
  }

  std::size_t placed = 0;
  for (const auto& intent : intents) {  // warm up
    placed += decide(**engine, intent).placement.has_value();
  }

  std::vector<double> latencies;
  latencies.reserve(decisions);
  const std::size_t allocationsBefore = allocations.load();
  const auto start = Clock::now();
  for (std::size_t i = 0; i < decisions; ++i) {
    const auto before = Clock::now();
    const auto decision = decide(**engine, intents[i % intents.size()]);
    const auto after = Clock::now();
    placed += decision.placement.has_value();
    latencies.push_back(std::chrono::duration<double, std::micro>(after - before).count());
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double allocationsPerDecision =
      static_cast<double>(allocations.load() - allocationsBefore) / static_cast<double>(decisions);

  std::sort(latencies.begin(), latencies.end());
  const auto percentile = [&](double p) {
    return latencies[std::min(latencies.size() - 1,
                              static_cast<std::size_t>(p * static_cast<double>(latencies.size())))];
  };
  std::printf("decide_bench: %zu decisions over %zu instance types and %zu rules, one thread\n",
              decisions, (*engine)->catalog().instances.size(), (*engine)->rules().rules.size());
  std::printf("  throughput      %.0f decisions/s\n", static_cast<double>(decisions) / seconds);
  std::printf("  latency p50     %.2f us\n", percentile(0.50));
  std::printf("  latency p90     %.2f us\n", percentile(0.90));
  std::printf("  latency p99     %.2f us\n", percentile(0.99));
  std::printf("  latency max     %.2f us\n", latencies.back());
  std::printf("  allocations     %.1f per decision\n", allocationsPerDecision);
  std::printf(
      "{\"decisionsPerSecond\": %.0f, \"p50Micros\": %.3f, \"p90Micros\": %.3f, "
      "\"p99Micros\": %.3f, \"maxMicros\": %.3f, \"allocationsPerDecision\": %.1f, "
      "\"placedFraction\": %.3f}\n",
      static_cast<double>(decisions) / seconds, percentile(0.50), percentile(0.90),
      percentile(0.99), latencies.back(), allocationsPerDecision,
      static_cast<double>(placed) / static_cast<double>(decisions + intents.size()));
  return 0;
}
