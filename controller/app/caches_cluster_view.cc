// ObjectCaches' cluster view: Nodes, NodePools and what the pods hold of
// the nodes, as the decisions read them.
#include "app/caches.h"

namespace gpuplacement::app {

core::ClusterState ObjectCaches::clusterState() const {
  core::ClusterState cluster;
  cluster.regionFlag = regionFlag_;
  cluster.nodesKnown = nodes_->synced() && pods_->synced();
  if (!cluster.nodesKnown) {
    cluster.nodesProblem = !nodes_->synced() ? nodes_->unreadable() : pods_->unreadable();
    return cluster;
  }
  cluster.nodes.reserve(nodes_->size());
  nodes_->forEach([&](const std::string& name, const core::NodeView& node) {
    cluster.nodes.push_back(clusterNodeOf(name, node));
  });
  cluster.nodePoolsInstalled = nodePools_ && nodePools_->synced();
  if (cluster.nodePoolsInstalled) {
    nodePools_->forEach([&](const std::string& name, const core::NodePoolView& pool) {
      cluster.nodePools.emplace_back(name, &pool);
    });
  }
  return cluster;
}

ObjectCaches::ClusterStamp ObjectCaches::clusterStamp() const {
  return {clusterGeneration_, room_.generation(), nodes_->synced() && pods_->synced(),
          nodePools_ && nodePools_->synced()};
}

std::optional<core::ClusterState::Node> ObjectCaches::clusterNode(const std::string& name) const {
  const core::NodeView* node = nodes_->get(name);
  if (!node) {
    return std::nullopt;
  }
  return clusterNodeOf(name, *node);
}

core::ClusterState::Node ObjectCaches::clusterNodeOf(const std::string& name,
                                                     const core::NodeView& node) const {
  const core::NodeUse used = room_.usedOn(name);
  core::ClusterState::Node entry{
      name, &node, used.devices, used.milliCpu, used.memoryBytes, used.pods, std::nullopt};
  if (const auto* dra = draRoom_.on(name)) {
    entry.dra = dra->offered;
    entry.draUsed = dra->held;
  }
  if (!node.reservationId.empty()) {
    if (const auto end = reservationEnds_.find(node.reservationId); end != reservationEnds_.end()) {
      entry.reservationEnds = end->second;
    }
  }
  return entry;
}

core::PendingPods ObjectCaches::pendingPodsOf(const TargetKey& target) const {
  core::PendingPods pending;
  for (const auto& key : pendingOf_->of(target)) {
    const auto* pod = pods_->get(key);
    if (!pod) {
      continue;
    }
    ++pending.count;
    const auto since = base::parseRfc3339(pod->unschedulableSince);
    if (pending.message.empty() || (since && pending.since && *since < *pending.since)) {
      pending.message = pod->unschedulable;
      pending.since = since ? std::optional<base::Timestamp>(*since) : std::nullopt;
    }
  }
  return pending;
}

std::vector<core::OwnPod> ObjectCaches::boundPodsOf(const TargetKey& target) const {
  std::vector<core::OwnPod> bound;
  for (const auto& key : boundOf_->of(target)) {
    const auto* pod = pods_->get(key);
    const auto* node = pod ? nodes_->get(pod->node) : nullptr;
    if (node) {
      const auto& devices = pod->devices;
      const auto& mig = devices.mig;  // a replica holds one profile's instances
      const bool shared = mig.empty() && devices.sharedGpus > 0;
      bound.push_back({pod->node, node->instanceType, node->capacityType,
                       !mig.empty() ? mig.front().second
                       : shared     ? devices.sharedGpus
                                    : devices.gpus + devices.neuronDevices,
                       pod->milliCpu, pod->memoryBytes, mig.empty() ? "" : mig.front().first,
                       shared});
    }
  }
  return bound;
}

const core::GatedPod* ObjectCaches::gatedPod(const std::string& key) const {
  const auto* pod = pods_->get(key);
  return pod ? pod->gated.get() : nullptr;
}

}  // namespace gpuplacement::app
