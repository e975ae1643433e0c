#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "core/catalog/catalog.h"
#include "core/cluster/capacity.h"

// A cluster to ask what a workload would take of shared GPUs, without one
// (`gpu-placement recommend --mig ... --time-sliced ...`): Karpenter may
// launch any type of the catalog, on demand, and beside it stands one node
// of each type said to be shared, cut into MIG instances or time-sliced, one
// share of which other work holds. Its idle shares then cost nothing more,
// as on a cluster whose tenants keep the node up; a node nobody keeps up
// would cost what a new one does, which the decision shows the same way.
namespace gpuplacement::core {

struct SharedNodeSpec {
  std::string instanceType;
  // MIG instances per GPU by profile ("1g.5gb" 7): every GPU cut so.
  std::vector<std::pair<std::string, int>> migPerGpu;
  int timeSlices = 0;  // the ways each GPU is time-sliced; 0: not

  bool operator==(const SharedNodeSpec&) const = default;
};

class WhatIfCluster {
 public:
  // Errors name the flag and the problem: a type the catalog lacks, a
  // profile its GPU does not have, more instances than a GPU holds,
  // time-slicing of what is not an NVIDIA GPU.
  static base::Result<std::unique_ptr<const WhatIfCluster>> build(
      const Catalog& catalog, const std::vector<SharedNodeSpec>& shared);

  const ClusterState& state() const { return state_; }
  // What the decision assumed, for the output: "Karpenter may launch any
  // type on demand; standing, kept up by other work: one p4d.24xlarge, 8
  // A100-40GB each cut into 7 MIG 1g.5gb (1 taken)".
  const std::string& assumed() const { return assumed_; }

  WhatIfCluster(const WhatIfCluster&) = delete;
  WhatIfCluster& operator=(const WhatIfCluster&) = delete;

 private:
  WhatIfCluster() = default;

  // Owned here: the state points into them.
  std::vector<NodeView> nodes_;
  NodePoolView pool_;
  ClusterState state_;
  std::string assumed_;
};

}  // namespace gpuplacement::core
