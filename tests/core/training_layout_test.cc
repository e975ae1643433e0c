// The tensor, pipeline and data parallel degrees of a training replica
// across nodes (core/decide/training_layout.h).

#include "core/decide/training_layout.h"

#include <doctest/doctest.h>

#include "core/decide/weighing.h"

namespace gpuplacement::core {
namespace {

TEST_CASE("trainingLayout: the least model parallelism that holds it, tensor parallel first") {
  // Llama-3-70B trained in full: 1,174 GiB by the default overhead.
  const TrainingMemory full70B{1174.0 * 4 / 18, 1174.0 * 12 / 18, 1174.0 * 2 / 18};
  struct Row {
    const char* label;
    TrainingMemory memory;
    int nodes;
    int devicesPerNode;
    int layers;
    double deviceGiB;
    int tensor, pipeline, data;  // 0: none holds it
  };
  const Row rows[] = {
      // 16 Trainium of 32 GiB (28.8 under the fill limit): 1,174 / 48 =
      // 24.5 GiB a device only when no copy is repeated.
      {"70B on three trn1.32xlarge", full70B, 3, 16, 80, 28.8, 16, 3, 1},
      // Eight H100 a stage (one node, three copies) hold 48.9 + 32.6 GiB, too
      // much; four a stage in three stages, two copies: 32.6 + 32.6.
      {"70B on three p5.48xlarge", full70B, 3, 8, 80, 71.6, 4, 3, 2},
      // Six nodes shard the optimizer's states over six copies of a node.
      {"70B on six p5.48xlarge", full70B, 6, 8, 80, 71.6, 8, 1, 6},
      {"small enough for data parallel alone", {10, 30, 5}, 2, 8, 32, 71.6, 1, 1, 16},
      // Eight devices a stage leave 15 + 10 GiB; twelve, four a layer and
      // three stages with two copies, leave 10 + 10.
      {"half a node's tensor parallel and three stages", {100, 240, 20}, 3, 8, 80, 21, 4, 3, 2},
      {"fine-tuning: nothing to shard, every copy the same", {100, 0, 20}, 2, 8, 80, 20, 8, 1, 2},
      {"more than every device holds", full70B, 2, 16, 80, 28.8, 0, 0, 0},
      {"fewer layers than the stages it needs", {40, 0, 0}, 4, 1, 2, 10, 0, 0, 0},
      {"no memory stated", {}, 2, 8, 80, 80, 0, 0, 0},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    const auto layout =
        trainingLayout(row.memory, row.nodes, row.devicesPerNode, row.layers, row.deviceGiB);
    CHECK(layout.tensor == row.tensor);
    CHECK(layout.pipeline == row.pipeline);
    CHECK(layout.data == row.data);
    if (layout.found()) {
      CHECK(layout.tensor * layout.pipeline * layout.data == row.nodes * row.devicesPerNode);
      CHECK(layout.perDevice.totalGiB() <= row.deviceGiB + 1e-9);
      CHECK(layout.perDevice.optimizerGiB * row.nodes * row.devicesPerNode ==
            doctest::Approx(row.memory.optimizerGiB));
    }
  }
}

TEST_CASE("training memory by part: what the overhead gives, weights and gradients, the rest") {
  MemoryEstimate memory;
  memory.weightsGiB = 130.4;
  SUBCASE("full training at the default overhead: 4, 12 and 2 bytes of 18") {
    memory.overhead = 9;
    memory.requiredGiB = 1174;
    const auto parts = trainingMemoryOf(WorkloadKind::Training, memory);
    CHECK(parts.weightsGradientsGiB == doctest::Approx(1174.0 * 4 / 18));
    CHECK(parts.optimizerGiB == doctest::Approx(1174.0 * 12 / 18));
    CHECK(parts.activationsGiB == doctest::Approx(1174.0 * 2 / 18));
  }
  SUBCASE("an overhead below the states' 16 bytes leaves no activations") {
    memory.overhead = 6;
    memory.requiredGiB = 780;
    const auto parts = trainingMemoryOf(WorkloadKind::Training, memory);
    CHECK(parts.weightsGradientsGiB == doctest::Approx(195));
    CHECK(parts.optimizerGiB == doctest::Approx(585));
    CHECK(parts.activationsGiB == doctest::Approx(0));
  }
  SUBCASE("fine-tuning: the frozen weights, and adapters with activations") {
    memory.overhead = 1.5;
    memory.requiredGiB = 195.6;
    const auto parts = trainingMemoryOf(WorkloadKind::FineTuning, memory);
    CHECK(parts.weightsGradientsGiB == doctest::Approx(130.4));
    CHECK(parts.optimizerGiB == 0);
    CHECK(parts.activationsGiB == doctest::Approx(65.2));
  }
  SUBCASE("serving has none") {
    memory.requiredGiB = 160;
    CHECK_FALSE(trainingMemoryOf(WorkloadKind::Inference, memory).known());
  }
}

}  // namespace
}  // namespace gpuplacement::core
