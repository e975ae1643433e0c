#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gpuplacement::runtime {

// Texts kept in memory that resemble one another (a controller's statuses,
// all of one shape) compressed against a reference text: zstd with the
// reference as its dictionary keeps a 3 KB status in about 0.5 KB, where
// compressing it alone keeps 1.3 KB. A packed text unpacks only with the
// reference it was packed with, so the owner changes the reference only
// while it keeps no packed text.
class TextCompressor {
 public:
  TextCompressor();
  ~TextCompressor();
  TextCompressor(const TextCompressor&) = delete;
  TextCompressor& operator=(const TextCompressor&) = delete;

  // What the next texts are packed against (until the first: nothing, and
  // a text is compressed alone).
  void setReference(std::string_view reference);
  std::string pack(std::string_view text);
  // None for what pack() did not make with this reference.
  std::optional<std::string> unpack(std::string_view packed) const;

 private:
  struct Contexts;
  std::unique_ptr<Contexts> contexts_;
};

}  // namespace gpuplacement::runtime
