#pragma once

#include <cstdint>
#include <string_view>

namespace gpuplacement::core {

// FNV-1a: a stable 64-bit digest of a canonical document, used to tell
// whether a status the controller would write differs from the one stored.
constexpr std::uint64_t stableHash(std::string_view text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

}  // namespace gpuplacement::core
