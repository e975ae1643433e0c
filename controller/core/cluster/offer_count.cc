// How each node counts in the offers, one node at a time: capacityOf counts
// them all this way, and the cluster view recounts only the nodes whose
// pods changed.
#include <algorithm>

#include "core/cluster/capacity.h"

namespace gpuplacement::core {

std::optional<NodeShare> shareOf(const ClusterState::Node& entry, const Catalog& catalog,
                                 const Policy& policy) {
  const NodeView& node = *entry.node;
  const int index = catalog.indexOf(node.instanceType);
  if (index < 0 || !node.schedulable) {
    return std::nullopt;
  }
  const auto& instance = catalog.instances[static_cast<std::size_t>(index)];
  if (!tolerates(policy.tier(instance.tier).tolerations, node.taints)) {
    return std::nullopt;  // a taint our placements do not tolerate: the team's own nodes
  }
  Devices idle = node.allocatable;
  idle -= entry.used;
  idle += entry.dra;
  idle -= entry.draUsed;
  // A time-sliced GPU that is not renamed advertises its replicas as
  // nvidia.com/gpu: they are not whole devices, and a whole-device
  // placement is not counted onto them.
  const bool replicasAsGpus = node.gpuReplicas > 1 && node.allocatable.sharedGpus == 0;
  if (replicasAsGpus) {
    idle.gpus = 0;
  }
  NodeShare share;
  share.instance = index;
  share.slot = offerSlot(node.capacityType);
  share.room = {entry.name,
                tierDevices(idle, instance.tier),
                node.milliCpu - entry.usedMilliCpu,
                node.memoryBytes - entry.usedMemoryBytes,
                node.pods > 0 ? node.pods - entry.usedPods : NodeRoom::kUnboundedPods,
                node.reservation,
                node.capacityBlock,
                node.interruptible,
                entry.reservationEnds};
  share.used = replicasAsGpus ? 0
                              : tierDevices(entry.used, instance.tier) +
                                    tierDevices(entry.draUsed, instance.tier);
  if (node.allocatable.sharedGpus > 0) {
    share.room.timeSlices =
        node.gpuReplicas > 1 ? node.gpuReplicas
                             : node.allocatable.sharedGpus / std::max(instance.acceleratorCount, 1);
    share.room.sharedFree = idle.sharedGpus;
  }
  Devices advertised = node.allocatable;
  advertised += entry.dra;
  for (const auto& [profile, count] : advertised.mig) {
    share.room.mig.emplace_back(profile,
                                count - entry.used.migOf(profile) - entry.draUsed.migOf(profile));
  }
  share.room.claims = tierDevices(entry.dra, instance.tier) > 0 || !entry.dra.mig.empty();
  share.room.kept = share.used > 0 || !entry.used.mig.empty() || !entry.draUsed.mig.empty() ||
                    entry.used.sharedGpus > 0 || (replicasAsGpus && entry.used.gpus > 0);
  return share;
}

namespace {

// Only a node some pod's devices keep up has devices that cost the cluster
// nothing more: an empty one is what the cluster autoscaler or Karpenter's
// consolidation removes, so using it costs the whole node.
bool idleAtNoCost(std::int32_t free, std::int32_t used) {
  return free > 0 && used > 0;
}

}  // namespace

void Capacity::recount(const std::string& node, std::optional<NodeShare> share) {
  if (offers.empty()) {
    return;  // source None: no offers to count in
  }
  takeOut(node);
  if (share) {
    putIn(node, std::move(*share));
  }
}

void Capacity::putIn(const std::string& node, NodeShare share) {
  if (share.instance < 0 || static_cast<std::size_t>(share.instance) >= offers.size()) {
    return;
  }
  auto& offer = offers[static_cast<std::size_t>(share.instance)][share.slot];
  const auto free = share.room.devices;
  ++offer.nodes;
  offer.used += share.used;
  offer.largestIdle = std::max(offer.largestIdle, free);
  if (idleAtNoCost(free, share.used)) {
    offer.idle.push_back(free);
  }
  counted_.insert_or_assign(node,
                            Counted{share.instance, share.slot, offer.room.size(), share.used});
  offer.room.push_back(std::move(share.room));
}

void Capacity::takeOut(const std::string& node) {
  const auto found = counted_.find(node);
  if (found == counted_.end()) {
    return;
  }
  const Counted was = found->second;
  counted_.erase(found);
  auto& offer = offers[static_cast<std::size_t>(was.instance)][was.slot];
  const auto free = offer.room[was.at].devices;
  --offer.nodes;
  offer.used -= was.used;
  if (idleAtNoCost(free, was.used)) {
    if (const auto at = std::find(offer.idle.begin(), offer.idle.end(), free);
        at != offer.idle.end()) {
      *at = offer.idle.back();
      offer.idle.pop_back();
    }
  }
  // The last node's room takes the place of this one's.
  if (was.at + 1 != offer.room.size()) {
    offer.room[was.at] = std::move(offer.room.back());
    counted_[offer.room[was.at].node].at = was.at;
  }
  offer.room.pop_back();
  if (free == offer.largestIdle && free > 0) {
    offer.largestIdle = 0;
    for (const auto& room : offer.room) {
      offer.largestIdle = std::max(offer.largestIdle, room.devices);
    }
  }
}

}  // namespace gpuplacement::core
