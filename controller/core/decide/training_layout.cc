#include "core/decide/training_layout.h"

#include <algorithm>

namespace gpuplacement::core {
namespace {

constexpr double kEpsilon = 1e-9;

TrainingMemory perDeviceOf(const TrainingMemory& memory, int tensor, int pipeline, int data) {
  const double split = static_cast<double>(tensor) * pipeline;
  return {memory.weightsGradientsGiB / split, memory.optimizerGiB / (split * data),
          memory.activationsGiB / split};
}

}  // namespace

TrainingLayout trainingLayout(const TrainingMemory& memory, int nodes, int devicesPerNode,
                              int layers, double deviceGiB) {
  TrainingLayout best;
  if (!memory.known() || nodes < 1 || devicesPerNode < 1) {
    return best;
  }
  const int devices = nodes * devicesPerNode;
  const int stagesAtMost = std::max(layers, 1);
  for (int tensor = 1; tensor <= devicesPerNode; ++tensor) {
    if (devicesPerNode % tensor != 0) {
      continue;
    }
    for (int pipeline = 1; pipeline <= stagesAtMost && tensor * pipeline <= devices; ++pipeline) {
      if (devices % (tensor * pipeline) != 0) {
        continue;
      }
      const int data = devices / (tensor * pipeline);
      const auto perDevice = perDeviceOf(memory, tensor, pipeline, data);
      if (perDevice.totalGiB() > deviceGiB + kEpsilon) {
        continue;
      }
      const int split = tensor * pipeline;
      const int bestSplit = best.tensor * best.pipeline;
      // The least model parallelism; of two as small, the more tensor
      // parallel: a node's own links are faster than EFA, and fewer stages
      // leave the pipeline fewer idle slots.
      if (!best.found() || split < bestSplit || (split == bestSplit && tensor > best.tensor)) {
        best = {tensor, pipeline, data, perDevice};
      }
      break;  // more stages only split it further
    }
  }
  return best;
}

}  // namespace gpuplacement::core
