// ObjectCaches' Dynamic Resource Allocation: the devices ResourceSlices
// publish for each node and the ones ResourceClaims hold, as the cluster
// view counts them (core/dra.h).
#include <map>

#include "app/caches.h"
#include "app/resource_paths.h"

namespace gpuplacement::app {

void ObjectCaches::enableDynamicResources() {
  slices_ = &caches_.add<core::ResourceSliceView>(
      {"resourceslices", [](const std::string&) { return resourceSlicesPath(); }, false, false},
      core::resourceSliceFromJson);
  claims_ = &caches_.add<core::ClaimAllocation>(
      {"resourceclaims", [](const std::string&) { return resourceClaimsPath(); }, false, false},
      core::claimAllocationFromJson);
  slices_->addHandler([this](const std::string&, const core::ResourceSliceView* previous,
                             const core::ResourceSliceView* current) {
    if (!(previous && current && *previous == *current)) {
      recountDynamicResources();
      deviceSlicesChanged_.notify();
    }
  });
  claims_->addHandler([this](const std::string&, const core::ClaimAllocation* previous,
                             const core::ClaimAllocation* current) {
    if (!(previous && current && *previous == *current)) {
      recountDynamicResources();  // allocated or deallocated: the devices it holds moved
    }
  });
}

// Counted over again: a claim names its devices by driver, pool and name,
// and only the slices say which node that is. A change re-counts the whole
// cluster view, as a node's does.
void ObjectCaches::recountDynamicResources() {
  std::map<core::DeviceRef, std::pair<const std::string*, const core::Devices*>> where;
  auto before = std::move(draByNode_);
  draByNode_.clear();
  slices_->forEach([&](const std::string&, const core::ResourceSliceView& slice) {
    if (slice.node.empty()) {
      return;
    }
    draByNode_[slice.node].offered += slice.devices;
    for (const auto& [device, counted] : slice.each) {
      where[device] = {&slice.node, &counted};
    }
  });
  if (claims_) {
    claims_->forEach([&](const std::string&, const core::ClaimAllocation& claim) {
      for (const auto& device : claim.devices) {
        if (const auto found = where.find(device); found != where.end()) {
          draByNode_[*found->second.first].held += *found->second.second;
        }
      }
    });
  }
  ++clusterGeneration_;
  // A node cut into MIG devices whose claims went from none to some, or
  // back: its idle slices now cost nothing more, or the whole node.
  for (const auto& [node, devices] : draByNode_) {
    const auto was = before.find(node);
    const bool keptBefore = was != before.end() && holdsDevices(was->second.held);
    if (!devices.offered.mig.empty() && keptBefore != holdsDevices(devices.held)) {
      sharesKeptChanged_.notify();
      return;
    }
  }
}

}  // namespace gpuplacement::app
