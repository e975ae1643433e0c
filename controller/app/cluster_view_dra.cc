// The cluster view's Dynamic Resource Allocation: the devices
// ResourceSlices publish for each node and the ones ResourceClaims hold, as
// the view counts them (core/cluster/dra.h), one change at a time (DraRoom).
#include "app/cluster_view_caches.h"

namespace gpuplacement::app {

void ClusterViewCaches::readDynamicResources(ResourceSliceCache& slices,
                                             ResourceClaimCache& claims) {
  slices.addHandler([this](const std::string&, const core::ResourceSliceView* previous,
                           const core::ResourceSliceView* current) {
    const auto moves = draRoom_.sliceChanged(previous, current);
    if (!moves.empty()) {
      draMoved(moves);
      deviceSlicesChanged_.notify();
    }
  });
  claims.addHandler([this](const std::string&, const core::ClaimAllocation* previous,
                           const core::ClaimAllocation* current) {
    draMoved(draRoom_.claimChanged(previous, current));  // allocated or let go
  });
}

// The moved nodes are recounted in the cluster view as a pod's are. A node
// cut into MIG devices whose claims went from none to some, or back: its
// idle slices now cost nothing more, or the whole node.
void ClusterViewCaches::draMoved(const DraRoom::Moves& moves) {
  bool sharesKept = false;
  for (const auto& [node, before] : moves) {
    room_.moved(node);
    const auto* after = draRoom_.on(node);
    const bool keptAfter = after && !after->offered.mig.empty() && holdsDevices(after->held);
    const bool keptBefore = !before.offered.mig.empty() && holdsDevices(before.held);
    sharesKept = sharesKept || keptBefore != keptAfter;
  }
  if (sharesKept) {
    sharesKeptChanged_.notify();
  }
}

}  // namespace gpuplacement::app
