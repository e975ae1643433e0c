#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/cluster_room.h"
#include "app/dra_room.h"
#include "core/cluster/cluster.h"
#include "core/cluster/dra.h"
#include "core/cluster/node_overlays.h"
#include "runtime/cache.h"
#include "runtime/event_source.h"

namespace gpuplacement::app {

using NodeCache = runtime::Cache<core::NodeView>;
using PodCache = runtime::Cache<core::PodView>;
using NodePoolCache = runtime::Cache<core::NodePoolView>;
using NodeOverlayCache = runtime::Cache<core::NodeOverlay>;
using ReservationCache = runtime::Cache<core::ReservationEnds>;  // EC2NodeClasses
using ResourceSliceCache = runtime::Cache<core::ResourceSliceView>;
using ResourceClaimCache = runtime::Cache<core::ClaimAllocation>;

// The cluster as the decisions read it (core::ClusterState), kept from the
// caches of Nodes, Pods (only the devices they hold) and, when they are
// served, NodePools, NodeOverlays, EC2NodeClasses (when reservations end)
// and DRA's ResourceSlices and ResourceClaims: the room the pods and
// claims hold on each node (ClusterRoom, DraRoom) and a stamp that says
// when a view computed from it is out of date. ObjectCaches makes the
// caches and hands each one here as it adds it.
class ClusterViewCaches {
 public:
  // Reads both from now on.
  ClusterViewCaches(NodeCache& nodes, PodCache& pods, std::string regionFlag);
  ClusterViewCaches(const ClusterViewCaches&) = delete;  // the caches' handlers point at it
  ClusterViewCaches& operator=(const ClusterViewCaches&) = delete;

  // Each optional cache, once it is added (its CRD found served).
  void readNodePools(NodePoolCache& nodePools);
  void readNodeOverlays(NodeOverlayCache& nodeOverlays);
  void readReservations(ReservationCache& nodeClasses);
  void readDynamicResources(ResourceSliceCache& slices, ResourceClaimCache& claims);

  // The cluster view as it is now. Its pointers are into the caches: use
  // it before the next co_await.
  core::ClusterState state() const;
  // What is computed from state() is good while this stays equal.
  // `generation` moves on every change of a Node or a NodePool that the
  // view reads, `room` on every change of what the pods bound to a node
  // hold of it.
  struct Stamp {
    std::uint64_t generation = 0;
    std::uint64_t room = 0;
    bool nodesKnown = false;
    bool nodePoolsInstalled = false;
    bool operator==(const Stamp&) const = default;
    // Since `before`, only the room on some nodes moved: a view computed
    // then is brought up to date by recounting those nodes.
    bool onlyRoomMovedSince(const Stamp& before) const {
      return generation == before.generation && nodesKnown == before.nodesKnown &&
             nodePoolsInstalled == before.nodePoolsInstalled;
    }
  };
  Stamp stamp() const;
  // The nodes whose room moved after stamp().room was `room`, each once;
  // nullopt when more moved than are remembered (kRoomMovesKept).
  std::optional<std::vector<std::string>> nodesWithRoomMovedSince(std::uint64_t room) const {
    return room_.nodesMovedSince(room);
  }
  static constexpr std::size_t kRoomMovesKept = ClusterRoom::kMovesKept;
  // One node as state() gives it; nullopt when it is not cached. Its
  // pointer is into the caches: use it before the next co_await.
  std::optional<core::ClusterState::Node> node(const std::string& name) const;

  // NodeOverlays are served and listed.
  bool nodeOverlaysKnown() const { return nodeOverlays_ && nodeOverlays_->synced(); }
  // The NodeOverlays as cached (none before readNodeOverlays()).
  std::vector<core::NodeOverlay> nodeOverlays() const;

  // What a NodePool may launch changed: one added or deleted, its
  // requirements, taints, template labels or limits edited (not its status,
  // which Karpenter rewrites with every node it launches).
  runtime::EventSource<>& nodePoolsChanged() { return nodePoolsChanged_; }
  // A NodeOverlay was added, edited or deleted, or Karpenter's verdict on
  // one moved.
  runtime::EventSource<>& nodeOverlaysChanged() { return nodeOverlaysChanged_; }
  // A ResourceSlice was added, edited or deleted: the devices a node offers
  // through DRA changed.
  runtime::EventSource<>& deviceSlicesChanged() { return deviceSlicesChanged_; }
  // A node whose GPUs are shared (MIG slices, time-sliced replicas) got its
  // first pod holding devices, or lost its last: its idle shares now cost
  // the cluster nothing more, or the whole node again.
  runtime::EventSource<>& sharesKeptChanged() { return sharesKeptChanged_; }

 private:
  core::ClusterState::Node nodeOf(const std::string& name, const core::NodeView& node) const;
  void podChanged(const core::PodView* previous, const core::PodView* current);
  void draMoved(const DraRoom::Moves& moves);
  bool offersShares(const std::string& node) const;
  static bool holdsDevices(const core::Devices& devices);

  const NodeCache& nodes_;
  const PodCache& pods_;
  std::string regionFlag_;                          // --region: core::ClusterState::regionFlag
  const NodePoolCache* nodePools_ = nullptr;        // only when the CRD is served
  const NodeOverlayCache* nodeOverlays_ = nullptr;  // only when the CRD is served
  // Reservation id -> when it ends, from every EC2NodeClass's status.
  std::unordered_map<std::string, core::Timestamp> reservationEnds_;
  ClusterRoom room_;  // what the pods bound to each node hold of it
  DraRoom draRoom_;   // the devices DRA drivers publish for each node, and those claims hold
  std::uint64_t generation_ = 0;  // Nodes, NodePools and reservations the view reads
  runtime::EventSource<> nodePoolsChanged_;
  runtime::EventSource<> nodeOverlaysChanged_;
  runtime::EventSource<> deviceSlicesChanged_;
  runtime::EventSource<> sharesKeptChanged_;
};

}  // namespace gpuplacement::app
