#pragma once

// How a training replica across a group of nodes splits its memory:
// tensor parallel within a node, pipeline parallel across nodes, data
// parallel over what is left, the degrees the memory model needs.
namespace gpuplacement::core {

// A training replica's memory by part, for the whole model (GiB): the
// parts a pipeline stage keeps on each of its tensor-parallel devices
// whatever the data parallelism (weights, gradients, activations), and the
// part data parallelism shards (the optimizer's states).
struct TrainingMemory {
  double weightsGradientsGiB = 0;
  double optimizerGiB = 0;
  double activationsGiB = 0;

  double totalGiB() const { return weightsGradientsGiB + optimizerGiB + activationsGiB; }
  bool known() const { return totalGiB() > 0; }
  bool operator==(const TrainingMemory&) const = default;
};

// The parallel degrees of one replica over nodes x devices per node
// (tensor x pipeline x data = every device), and what each device holds.
struct TrainingLayout {
  int tensor = 0;    // within a node, over its own links (NVLink, NeuronLink)
  int pipeline = 0;  // stages across nodes, over EFA
  int data = 0;      // copies of each stage, the optimizer's states sharded over them
  TrainingMemory perDevice;

  bool found() const { return tensor > 0; }
  bool operator==(const TrainingLayout&) const = default;
};

// The layout that holds the model in `deviceGiB` a device with the least
// model parallelism (tensor x pipeline), tensor parallel filling a node
// before pipeline stages cross nodes; none (found() false) where even
// every device in one data-parallel copy does not hold it. Within a stage
// weights and gradients are split by tensor x pipeline and kept whole by
// each data-parallel copy, so that a step crosses EFA only with
// activations between stages and the gradients' reduction, not with the
// weights (sharding those too, as FSDP does, gathers them over EFA every
// step); the optimizer's states are sharded over the copies as well
// (Megatron-LM's distributed optimizer, ZeRO stage 1). A stage holds at
// least one of `layers` layers.
TrainingLayout trainingLayout(const TrainingMemory& memory, int nodes, int devicesPerNode,
                              int layers, double deviceGiB);

}  // namespace gpuplacement::core
