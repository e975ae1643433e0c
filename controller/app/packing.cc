#include "app/packing.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "base/time_format.h"

namespace gpuplacement::app {
namespace {

constexpr std::size_t kUidBytes = 16;
constexpr std::string_view kUidLayout = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
constexpr std::string_view kHexDigits = "0123456789abcdef";

// The 16 bytes of a UID in the canonical lowercase form Kubernetes writes,
// or false for any other text (which is then kept as it is).
bool uidBytes(std::string_view text, std::array<unsigned char, kUidBytes>& bytes) {
  if (text.size() != kUidLayout.size()) {
    return false;
  }
  std::size_t nibble = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (kUidLayout[i] == '-') {
      if (text[i] != '-') {
        return false;
      }
      continue;
    }
    const auto digit = kHexDigits.find(text[i]);
    if (digit == std::string_view::npos) {
      return false;
    }
    auto& byte = bytes[nibble / 2];
    byte = nibble % 2 == 0 ? static_cast<unsigned char>(digit << 4)
                           : static_cast<unsigned char>(byte | digit);
    ++nibble;
  }
  return true;
}

}  // namespace

const Vocabulary Packer::kNoWords;
const Vocabulary Unpacker::kNoWords;

Vocabulary::Vocabulary(std::initializer_list<std::string_view> words) : words_(words) {
  for (std::size_t i = 0; i < words_.size(); ++i) {
    index_.emplace(words_[i], static_cast<std::int64_t>(i));  // the first of duplicates wins
  }
}

std::int64_t Vocabulary::indexOf(std::string_view word) const {
  const auto found = index_.find(word);
  return found == index_.end() ? -1 : found->second;
}

std::string_view Vocabulary::at(std::int64_t index) const {
  return index >= 0 && static_cast<std::size_t>(index) < words_.size()
             ? words_[static_cast<std::size_t>(index)]
             : std::string_view();
}

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

void Packer::literal(std::string_view value) {
  integer(-1 - static_cast<std::int64_t>(value.size()));
  bytes_.append(value);
}

void Packer::word(std::string_view value) {
  if (const auto index = vocabulary_.indexOf(value); index >= 0) {
    integer(index);
  } else {
    literal(value);
  }
}

void Packer::timestamp(std::string_view rfc3339) {
  // Only a time that reads back as the same text: "…:52.5Z" or "+02:00"
  // stays text, so the status digest and what we write back do not change.
  if (const auto parsed = base::parseRfc3339(rfc3339);
      parsed && base::formatRfc3339(*parsed) == rfc3339) {
    const auto seconds =
        std::chrono::duration_cast<std::chrono::seconds>(parsed->time_since_epoch()).count();
    if (seconds >= 0) {
      integer(seconds);
      return;
    }
  }
  literal(rfc3339);
}

void Packer::uid(std::string_view value) {
  std::array<unsigned char, kUidBytes> bytes{};
  if (uidBytes(value, bytes)) {
    integer(0);
    bytes_.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  } else {
    literal(value);
  }
}

void Packer::real(double value) {
  char raw[sizeof value];
  std::memcpy(raw, &value, sizeof value);
  bytes_.append(raw, sizeof raw);
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

std::string_view Unpacker::take(std::int64_t size) {
  const auto taken = bytes_.substr(0, static_cast<std::size_t>(std::max<std::int64_t>(0, size)));
  bytes_.remove_prefix(taken.size());
  return taken;
}

std::string Unpacker::string() {
  return std::string(take(integer()));
}

std::string Unpacker::literalOf(std::int64_t tag) {
  return tag < 0 ? std::string(take(-1 - tag)) : std::string();
}

std::string Unpacker::word() {
  const auto tag = integer();
  return tag >= 0 ? std::string(vocabulary_.at(tag)) : literalOf(tag);
}

std::string Unpacker::timestamp() {
  const auto tag = integer();
  return tag >= 0 ? base::formatRfc3339(base::Timestamp(std::chrono::seconds(tag)))
                  : literalOf(tag);
}

std::string Unpacker::uid() {
  const auto tag = integer();
  if (tag != 0) {
    return literalOf(tag);
  }
  const auto bytes = take(kUidBytes);
  std::string text(kUidLayout);
  std::size_t nibble = 0;
  for (auto& c : text) {
    if (c == '-') {
      continue;
    }
    const auto byte = nibble / 2 < bytes.size() ? static_cast<unsigned char>(bytes[nibble / 2]) : 0;
    c = kHexDigits[nibble % 2 == 0 ? byte >> 4 : byte & 0xf];
    ++nibble;
  }
  return text;
}

double Unpacker::real() {
  double value = 0;
  const auto raw = take(sizeof value);
  std::memcpy(&value, raw.data(), raw.size());  // short (never, for ours): the rest stays 0
  return value;
}

}  // namespace gpuplacement::app
