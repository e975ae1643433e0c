#pragma once

#include <optional>
#include <string>

#include "core/catalog/catalog.h"
#include "core/decide/cluster_cost.h"
#include "core/decide/decision.h"
#include "core/kinds/target.h"

// Whether a rollout of a Deployment's pod template can finish on the room
// the cluster has. A RollingUpdate starts a new pod beside the old ones
// (maxSurge) or takes an old one down first (maxUnavailable); with no
// unavailable pod allowed, the new pod needs room of its own, and where no
// node has it and none can be launched, it stays Pending beside the one
// serving until someone adds a node. The operator checks before any write
// of its own that changes the template (a move, the switch to the pods, a
// re-placement) and does not start such a rollout.
namespace gpuplacement::core {

struct RolloutRoomInput {
  const TargetState* target = nullptr;
  std::string targetName;
  const Placement* wanted = nullptr;  // what the new template asks for
  const ClusterView* view = nullptr;  // null: no cluster view, nothing can be told
  const Catalog* catalog = nullptr;
  // The pod template's own requests per replica (WorkloadIntent).
  double podCpu = 0;
  double podMemoryGiB = 0;
};

// Why the rollout would stall, naming maxSurge and maxUnavailable, the room
// and what would let it through; nullopt when it can finish or when the
// room cannot be told (no view, Karpenter may launch a node, CPU).
std::optional<std::string> rolloutStall(const RolloutRoomInput& input);

}  // namespace gpuplacement::core
