#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/cluster/capacity.h"
#include "core/cluster/cluster.h"

namespace gpuplacement::app {

// What the pods bound to each node hold of it, kept from the pods' events,
// and the log of which nodes' room moved: a cluster view computed earlier
// is brought up to date by recounting only those nodes.
class ClusterRoom {
 public:
  static constexpr std::size_t kMovesKept = 4096;

  // A pod was added, changed or deleted (previous or current null).
  void podChanged(const core::PodView* previous, const core::PodView* current);
  // What the pods bound to the node hold of it.
  core::NodeUse usedOn(const std::string& node) const;
  // Moves on every change of what the pods bound to a node hold of it.
  std::uint64_t generation() const { return generation_; }
  // The nodes whose room moved after generation() was `since`, each once;
  // nullopt when more moved than kMovesKept.
  std::optional<std::vector<std::string>> nodesMovedSince(std::uint64_t since) const;
  // The node's room moved for another reason than its pods: the devices
  // DRA drivers publish for it, or claims hold (DraRoom).
  void moved(const std::string& node);

 private:
  std::unordered_map<std::string, core::NodeUse> usedOnNode_;
  std::uint64_t generation_ = 0;
  // The last kMovesKept moves: (generation, node).
  std::deque<std::pair<std::uint64_t, std::string>> moves_;
};

}  // namespace gpuplacement::app
