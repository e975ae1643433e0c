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

}  // namespace gpuplacement::app
