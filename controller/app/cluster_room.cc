#include "app/cluster_room.h"

#include <string_view>
#include <unordered_set>

namespace gpuplacement::app {

void ClusterRoom::podChanged(const core::PodView* previous, const core::PodView* current) {
  const bool held = previous && previous->holdsDevices();
  const bool holds = current && current->holdsDevices();
  if (held && holds && previous->node == current->node && previous->devices == current->devices &&
      previous->milliCpu == current->milliCpu && previous->memoryBytes == current->memoryBytes) {
    return;  // nothing a decision reads has changed
  }
  if (held) {
    auto& used = usedOnNode_[previous->node];
    used.subtract(*previous);
    if (used == core::NodeUse{}) {
      usedOnNode_.erase(previous->node);
    }
    moved(previous->node);
  }
  if (holds) {
    usedOnNode_[current->node].add(*current);
    if (!held || previous->node != current->node) {
      moved(current->node);
    }
  }
}

core::NodeUse ClusterRoom::usedOn(const std::string& node) const {
  const auto found = usedOnNode_.find(node);
  return found == usedOnNode_.end() ? core::NodeUse{} : found->second;
}

void ClusterRoom::moved(const std::string& node) {
  moves_.emplace_back(++generation_, node);
  if (moves_.size() > kMovesKept) {
    moves_.pop_front();
  }
}

std::optional<std::vector<std::string>> ClusterRoom::nodesMovedSince(std::uint64_t since) const {
  std::vector<std::string> nodes;
  if (since >= generation_) {
    return nodes;
  }
  if (moves_.empty() || moves_.front().first > since + 1) {
    return std::nullopt;  // some of the moves since have been forgotten
  }
  std::unordered_set<std::string_view> seen;
  for (auto it = moves_.rbegin(); it != moves_.rend() && it->first > since; ++it) {
    if (seen.insert(it->second).second) {
      nodes.push_back(it->second);
    }
  }
  return nodes;
}

}  // namespace gpuplacement::app
