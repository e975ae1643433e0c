#include "app/packing.h"

namespace gpuplacement::app {

void Packer::integer(std::int64_t value) {
  // Zigzag, then 7 bits per byte: small magnitudes of either sign take one.
  auto bits = (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
  while (bits >= 0x80) {
    bytes_.push_back(static_cast<char>((bits & 0x7f) | 0x80));
    bits >>= 7;
  }
  bytes_.push_back(static_cast<char>(bits));
}

void Packer::string(std::string_view value) {
  integer(static_cast<std::int64_t>(value.size()));
  bytes_.append(value);
}

std::int64_t Unpacker::integer() {
  std::uint64_t bits = 0;
  for (int shift = 0; shift < 64 && !bytes_.empty(); shift += 7) {
    const auto byte = static_cast<unsigned char>(bytes_.front());
    bytes_.remove_prefix(1);
    bits |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      break;
    }
  }
  return static_cast<std::int64_t>((bits >> 1) ^ (~(bits & 1) + 1));
}

std::string Unpacker::string() {
  const auto size = static_cast<std::size_t>(std::max<std::int64_t>(0, integer()));
  const auto taken = bytes_.substr(0, size);
  bytes_.remove_prefix(taken.size());
  return std::string(taken);
}

}  // namespace gpuplacement::app
