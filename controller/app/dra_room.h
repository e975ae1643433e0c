#pragma once

#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/cluster/cluster.h"
#include "core/cluster/dra.h"

namespace gpuplacement::app {

// What the devices DRA drivers publish for each node are, and which of
// them ResourceClaims hold, counted as the device plugins' are (core/cluster/dra.h),
// one change at a time: a claim allocated or let go moves only its own
// devices' nodes, whatever the size of the cluster. A claim may name a
// device before its slice is seen (or after it is gone): it counts from
// when both are known. A device two claims hold is taken once.
class DraRoom {
 public:
  struct OnNode {
    core::Devices offered;
    core::Devices held;

    bool operator==(const OnNode&) const = default;
  };

  // The nodes whose counts a change moved, each once, with what they were
  // before it.
  using Moves = std::vector<std::pair<std::string, OnNode>>;

  // A ResourceSlice added, changed or deleted (previous or current null).
  Moves sliceChanged(const core::ResourceSliceView* previous,
                     const core::ResourceSliceView* current);
  // A ResourceClaim's allocation added, changed or deleted.
  Moves claimChanged(const core::ClaimAllocation* previous, const core::ClaimAllocation* current);

  // Null: no DRA device on the node.
  const OnNode* on(const std::string& node) const;

 private:
  struct DeviceHash {
    std::size_t operator()(const core::DeviceRef& device) const;
  };
  struct Device {
    std::string node;  // empty: no slice publishes it (now)
    core::Devices counted;
    int holders = 0;  // claims allocated it
  };

  // Notes the node's counts before the change moves them.
  void moving(const std::string& node, Moves& moves) const;

  std::unordered_map<core::DeviceRef, Device, DeviceHash> devices_;
  std::unordered_map<std::string, OnNode> nodes_;
};

}  // namespace gpuplacement::app
