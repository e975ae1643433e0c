#pragma once

#include <algorithm>
#include <string>

#include "core/cluster/capacity.h"

namespace gpuplacement::testing {

// Offers compared as sets: a recount leaves `room` and `idle` in another
// order than a count of every node.
inline std::string offersText(const core::Capacity& capacity) {
  std::string text;
  for (std::size_t index = 0; index < capacity.offers.size(); ++index) {
    for (std::size_t slot = 0; slot < 2; ++slot) {
      const core::Offer& offer = capacity.offers[index][slot];
      auto idle = offer.idle;
      std::sort(idle.begin(), idle.end());
      auto room = offer.room;
      std::sort(room.begin(), room.end(),
                [](const core::NodeRoom& a, const core::NodeRoom& b) { return a.node < b.node; });
      text += std::to_string(index) + "/" + std::to_string(slot) + ": " +
              std::to_string(offer.nodes) + " nodes, " + std::to_string(offer.used) +
              " used, largest idle " + std::to_string(offer.largestIdle) + ", idle";
      for (const auto free : idle) {
        text += " " + std::to_string(free);
      }
      for (const auto& node : room) {
        text += "; " + node.node + " " + std::to_string(node.devices) + " " +
                std::to_string(node.milliCpu) + "m " + std::to_string(node.memoryBytes) + "B " +
                std::to_string(node.pods);
      }
      for (const auto& pool : offer.nodePools) {
        text += "; pool " + pool;
      }
      for (const auto& pool : offer.poolsAtLimit) {
        text += "; at limit " + pool;
      }
      text += "\n";
    }
  }
  return text;
}

}  // namespace gpuplacement::testing
