#include "app/dra_room.h"

#include <algorithm>
#include <functional>

namespace gpuplacement::app {

std::size_t DraRoom::DeviceHash::operator()(const core::DeviceRef& device) const {
  const std::hash<std::string> hash;
  std::size_t seed = hash(std::get<0>(device));
  for (const auto* part : {&std::get<1>(device), &std::get<2>(device)}) {
    seed ^= hash(*part) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  }
  return seed;
}

void DraRoom::moving(const std::string& node, Moves& moves) const {
  const bool noted =
      std::any_of(moves.begin(), moves.end(), [&](const auto& move) { return move.first == node; });
  if (!noted) {
    const auto* before = on(node);
    moves.emplace_back(node, before ? *before : OnNode{});
  }
}

DraRoom::Moves DraRoom::sliceChanged(const core::ResourceSliceView* previous,
                                     const core::ResourceSliceView* current) {
  Moves moves;
  if (previous && current && *previous == *current) {
    return moves;
  }
  if (previous && !previous->node.empty()) {
    moving(previous->node, moves);
    auto& on = nodes_[previous->node];
    for (const auto& [ref, counted] : previous->each) {
      const auto found = devices_.find(ref);
      if (found == devices_.end() || found->second.node != previous->node) {
        continue;  // published again elsewhere since
      }
      on.offered -= counted;
      if (found->second.holders > 0) {
        on.held -= counted;
      }
      if (found->second.holders == 0) {
        devices_.erase(found);
      } else {
        found->second.node.clear();
      }
    }
    if (on == OnNode{}) {
      nodes_.erase(previous->node);
    }
  }
  if (current && !current->node.empty()) {
    moving(current->node, moves);
    auto& on = nodes_[current->node];
    for (const auto& [ref, counted] : current->each) {
      auto& device = devices_[ref];
      device.node = current->node;
      device.counted = counted;
      on.offered += counted;
      if (device.holders > 0) {
        on.held += counted;
      }
    }
  }
  return moves;
}

DraRoom::Moves DraRoom::claimChanged(const core::ClaimAllocation* previous,
                                     const core::ClaimAllocation* current) {
  Moves moves;
  if (previous && current && *previous == *current) {
    return moves;
  }
  if (current) {
    for (const auto& ref : current->devices) {
      auto& device = devices_[ref];
      if (++device.holders == 1 && !device.node.empty()) {
        moving(device.node, moves);
        nodes_[device.node].held += device.counted;
      }
    }
  }
  if (previous) {
    for (const auto& ref : previous->devices) {
      const auto found = devices_.find(ref);
      if (found == devices_.end()) {
        continue;
      }
      auto& device = found->second;
      if (--device.holders == 0) {
        if (!device.node.empty()) {
          moving(device.node, moves);
          nodes_[device.node].held -= device.counted;
        } else {
          devices_.erase(found);
        }
      }
    }
  }
  return moves;
}

const DraRoom::OnNode* DraRoom::on(const std::string& node) const {
  const auto found = nodes_.find(node);
  return found == nodes_.end() ? nullptr : &found->second;
}

}  // namespace gpuplacement::app
