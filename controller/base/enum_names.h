#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gpuplacement::base {

// Names for the values of an enum, in declaration order, and what the enum
// is called in messages. A layer that defines an enum specializes this:
//   template <> struct EnumNames<Tier> {
//     static constexpr std::string_view what = "tier";
//     static constexpr auto names = std::to_array<std::string_view>({"NVIDIA", ...});
//   };
template <typename E>
struct EnumNames;

template <typename E>
constexpr std::string_view nameOf(E value) {
  return EnumNames<E>::names[static_cast<std::size_t>(value)];
}

template <typename E>
constexpr std::size_t enumCount() {
  return EnumNames<E>::names.size();
}

// "a, b or c": the allowed values, for error messages.
template <typename E>
std::string allowedValues() {
  std::string text;
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) {
      text += i + 1 == names.size() ? " or " : ", ";
    }
    text += names[i];
  }
  return text;
}

// Input matches a name case-insensitively and ignoring '-' and '_', so
// "on-demand", "ONDEMAND" and "OnDemand" are one value.
bool sameName(std::string_view input, std::string_view name);

template <typename E>
Result<E> parseEnum(std::string_view text) {
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (sameName(text, names[i])) {
      return static_cast<E>(i);
    }
  }
  return Error{"", quoted(text) + " is not a valid " +
                       std::string(EnumNames<E>::what) + " (use " + allowedValues<E>() + ")"};
}

}  // namespace gpuplacement::base
