// The cluster view's caches: Nodes, NodePools, EC2NodeClasses and what the
// pods hold of the nodes, as the decisions read them.
#include "app/cluster_view_caches.h"

namespace gpuplacement::app {

ClusterViewCaches::ClusterViewCaches(NodeCache& nodes, PodCache& pods, std::string regionFlag)
    : nodes_(nodes), pods_(pods), regionFlag_(std::move(regionFlag)) {
  nodes.addHandler(
      [this](const std::string&, const core::NodeView* previous, const core::NodeView* current) {
        // What its pods hold stays until they go (the pod garbage collector
        // deletes them after the node): their deletions subtract it.
        if (previous && current && *previous == *current) {
          return;  // a heartbeat or a field no decision reads
        }
        ++generation_;
      });
  pods.addHandler([this](const std::string&, const core::PodView* previous,
                         const core::PodView* current) { podChanged(previous, current); });
}

void ClusterViewCaches::podChanged(const core::PodView* previous, const core::PodView* current) {
  const auto sharesKept = [this](const std::string& node) {
    return !node.empty() && offersShares(node) && holdsDevices(room_.usedOn(node).devices);
  };
  const std::string node = current && !current->node.empty() ? current->node
                           : previous                        ? previous->node
                                                             : "";
  const bool keptBefore = sharesKept(node);
  room_.podChanged(previous, current);
  if (keptBefore != sharesKept(node)) {
    sharesKeptChanged_.notify();  // its idle shares now cost nothing more, or the node
  }
}

bool ClusterViewCaches::offersShares(const std::string& name) const {
  const core::NodeView* node = nodes_.get(name);
  if (node && (!node->allocatable.mig.empty() || node->allocatable.sharedGpus > 0)) {
    return true;
  }
  const auto* dra = draRoom_.on(name);
  return dra && !dra->offered.mig.empty();
}

bool ClusterViewCaches::holdsDevices(const core::Devices& devices) {
  return devices.gpus > 0 || devices.neuronDevices > 0 || devices.sharedGpus > 0 ||
         !devices.mig.empty();
}

void ClusterViewCaches::readNodePools(NodePoolCache& nodePools) {
  nodePools_ = &nodePools;
  nodePools.addHandler([this](const std::string&, const core::NodePoolView* previous,
                              const core::NodePoolView* current) {
    if (previous && current && *previous == *current) {
      return;  // its status: nothing the cluster view reads
    }
    ++generation_;
    nodePoolsChanged_.notify();
  });
}

void ClusterViewCaches::readNodeOverlays(NodeOverlayCache& nodeOverlays) {
  nodeOverlays_ = &nodeOverlays;
  nodeOverlays.addHandler([this](const std::string&, const core::NodeOverlay* previous,
                                 const core::NodeOverlay* current) {
    if (!previous || !current || !(*previous == *current)) {
      nodeOverlaysChanged_.notify();
    }
  });
}

void ClusterViewCaches::readReservations(ReservationCache& nodeClasses) {
  nodeClasses.addHandler([this, &nodeClasses](const std::string&,
                                              const core::ReservationEnds* previous,
                                              const core::ReservationEnds* current) {
    if (previous && current && *previous == *current) {
      return;  // the rest of its status: nothing the cluster view reads
    }
    reservationEnds_.clear();
    nodeClasses.forEach([&](const std::string&, const core::ReservationEnds& reservations) {
      for (const auto& [id, end] : reservations.ends) {
        reservationEnds_[id] = end;
      }
    });
    ++generation_;
  });
}

std::vector<core::NodeOverlay> ClusterViewCaches::nodeOverlays() const {
  std::vector<core::NodeOverlay> overlays;
  if (nodeOverlays_) {
    nodeOverlays_->forEach(
        [&](const std::string&, const core::NodeOverlay& overlay) { overlays.push_back(overlay); });
  }
  return overlays;
}

core::ClusterState ClusterViewCaches::state() const {
  core::ClusterState cluster;
  cluster.regionFlag = regionFlag_;
  cluster.nodesKnown = nodes_.synced() && pods_.synced();
  if (!cluster.nodesKnown) {
    cluster.nodesProblem = !nodes_.synced() ? nodes_.unreadable() : pods_.unreadable();
    return cluster;
  }
  cluster.nodes.reserve(nodes_.size());
  nodes_.forEach([&](const std::string& name, const core::NodeView& node) {
    cluster.nodes.push_back(nodeOf(name, node));
  });
  cluster.nodePoolsInstalled = nodePools_ && nodePools_->synced();
  if (cluster.nodePoolsInstalled) {
    nodePools_->forEach([&](const std::string& name, const core::NodePoolView& pool) {
      cluster.nodePools.emplace_back(name, &pool);
    });
  }
  return cluster;
}

ClusterViewCaches::Stamp ClusterViewCaches::stamp() const {
  return {generation_, room_.generation(), nodes_.synced() && pods_.synced(),
          nodePools_ && nodePools_->synced()};
}

std::optional<core::ClusterState::Node> ClusterViewCaches::node(const std::string& name) const {
  const core::NodeView* node = nodes_.get(name);
  if (!node) {
    return std::nullopt;
  }
  return nodeOf(name, *node);
}

core::ClusterState::Node ClusterViewCaches::nodeOf(const std::string& name,
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
