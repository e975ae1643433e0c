#pragma once

#include <string>

#include "core/decide/decision.h"
#include "core/decide/engine.h"
#include "core/decide/weighing.h"

// The words of a decision, one level above the engine: what was chosen and
// why, the runners-up and what lost, what bound when nothing could be
// placed. It reads what the engine weighed (core/decide/weighing.h); the engine
// never calls it.
namespace gpuplacement::core {

// The engine's weighing, explained.
Decision explain(const PlacementEngine& engine, const Weighing& weighing);

// Weighs and explains. Priced by the policy's cost model:
Decision decide(const PlacementEngine& engine, const WorkloadIntent& intent);
// by `costs` (what a caller that knows the cluster passes: devices already
// paid for on existing nodes cost only their share):
Decision decide(const PlacementEngine& engine, const WorkloadIntent& intent,
                const NodeCostModel& costs);
// or within what the cluster has or can get: a type no node carries and no
// NodePool may launch is no candidate, and under whole-node pricing idle
// devices on existing nodes cost their share (ClusterCost).
Decision decide(const PlacementEngine& engine, const WorkloadIntent& intent,
                const ClusterContext& cluster);

// Whether a placement already in use can stay, under the engine's prices and
// the workload's current intent, and what it costs now; `cluster`, when
// given, prices it as decide() with it would. `share`: the part of a GPU
// each replica holds (count is its MIG instances, 1, or its replicas of a
// time-sliced GPU), or whole devices.
Assessment assess(const PlacementEngine& engine, const WorkloadIntent& intent,
                  const std::string& instanceType, int count, const DeviceShare& share,
                  CapacityType capacity, const ClusterContext* cluster = nullptr);

}  // namespace gpuplacement::core
