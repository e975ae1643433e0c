#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuplacement::base {

// FNV-1a: a stable 64-bit digest of a canonical document, used to tell
// whether a status the controller would write differs from the one stored.
inline constexpr std::uint64_t kFnvOffsetBasis = 14695981039346656037ULL;

constexpr std::uint64_t fnvAppend(std::uint64_t hash, std::string_view bytes) {
  for (char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

constexpr std::uint64_t stableHash(std::string_view text) {
  return fnvAppend(kFnvOffsetBasis, text);
}

// The same kind of digest of a JSON value, walked in place instead of
// serialized first. Objects are ordered by key; an integer hashes the same
// whether it was parsed as signed or unsigned.
std::uint64_t jsonDigest(const nlohmann::json& value);

// A digest as 16 lower-case hex digits, for documents that record one, and
// back (nullopt: not such a text).
std::string digestText(std::uint64_t digest);
std::optional<std::uint64_t> parseDigest(std::string_view text);

}  // namespace gpuplacement::base
