#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuplacement::app {

// A compact byte encoding for what the caches keep: variable-length
// integers and length-prefixed strings, written and read in the same
// order. Tens of thousands of cached objects cost a few hundred bytes each
// this way instead of a tree of small allocations.
class Packer {
 public:
  void integer(std::int64_t value);
  void string(std::string_view value);
  void boolean(bool value) { integer(value ? 1 : 0); }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Reads what a Packer wrote. Past the end (never, for bytes we packed) it
// yields zeros and empty strings rather than reading out of bounds.
class Unpacker {
 public:
  explicit Unpacker(std::string_view bytes) : bytes_(bytes) {}
  std::int64_t integer();
  std::string string();
  bool boolean() { return integer() != 0; }

 private:
  std::string_view bytes_;
};

}  // namespace gpuplacement::app
