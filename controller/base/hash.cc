#include "base/hash.h"

#include <bit>

namespace gpuplacement::base {
namespace {

struct Fnv {
  std::uint64_t hash = kFnvOffsetBasis;

  void byte(unsigned char c) {
    const char one = static_cast<char>(c);
    hash = fnvAppend(hash, std::string_view(&one, 1));
  }
  void bytes(std::string_view text) { hash = fnvAppend(hash, text); }
  void word(std::uint64_t value) {
    for (int i = 0; i < 8; ++i) {
      byte(static_cast<unsigned char>(value >> (8 * i)));
    }
  }
  // Strings carry their length, so {"ab": "c"} and {"a": "bc"} differ.
  void string(std::string_view text) {
    word(text.size());
    bytes(text);
  }

  void value(const nlohmann::json& json) {
    using Type = nlohmann::json::value_t;
    switch (json.type()) {
      case Type::null:
      case Type::discarded:
        byte('n');
        break;
      case Type::boolean:
        byte(json.get<bool>() ? 't' : 'f');
        break;
      case Type::number_integer:
        byte('i');
        word(static_cast<std::uint64_t>(json.get<std::int64_t>()));
        break;
      case Type::number_unsigned:
        byte('i');
        word(json.get<std::uint64_t>());
        break;
      case Type::number_float:
        byte('d');
        word(std::bit_cast<std::uint64_t>(json.get<double>()));
        break;
      case Type::string:
        byte('s');
        string(json.get_ref<const std::string&>());
        break;
      case Type::array:
        byte('[');
        word(json.size());
        for (const auto& element : json) {
          value(element);
        }
        break;
      case Type::object:
        byte('{');
        word(json.size());
        for (const auto& [key, member] : json.items()) {
          string(key);
          value(member);
        }
        break;
      case Type::binary:
        byte('b');
        word(json.get_binary().size());
        for (auto c : json.get_binary()) {
          byte(c);
        }
        break;
    }
  }
};

}  // namespace

std::uint64_t jsonDigest(const nlohmann::json& value) {
  Fnv fnv;
  fnv.value(value);
  return fnv.hash;
}

std::string digestText(std::uint64_t digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text(16, '0');
  for (int i = 15; i >= 0; --i, digest >>= 4) {
    text[static_cast<std::size_t>(i)] = kHex[digest & 0xf];
  }
  return text;
}

std::optional<std::uint64_t> parseDigest(std::string_view text) {
  if (text.size() != 16) {
    return std::nullopt;
  }
  std::uint64_t digest = 0;
  for (char c : text) {
    const int value = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (value < 0) {
      return std::nullopt;
    }
    digest = digest << 4 | static_cast<std::uint64_t>(value);
  }
  return digest;
}

}  // namespace gpuplacement::base
