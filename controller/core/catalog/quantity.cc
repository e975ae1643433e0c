#include "core/catalog/quantity.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace gpuplacement::core {
namespace {

constexpr std::string_view kParameterFormat =
    "expected a count such as 7B, 1.3B, 350M, 7e9 or 7000000000";

std::uint64_t suffixMultiplier(char suffix) {
  switch (std::toupper(static_cast<unsigned char>(suffix))) {
    case 'K':
      return 1'000ULL;
    case 'M':
      return 1'000'000ULL;
    case 'B':
      return 1'000'000'000ULL;
    case 'T':
      return 1'000'000'000'000ULL;
    default:
      return 0;
  }
}

Error parameterError(std::string_view text, std::string_view why) {
  return Error{"", base::quoted(text) + " is not a parameter count: " + std::string(why)};
}

// Scientific notation: the only form that goes through a double.
Result<std::uint64_t> parseScientificCount(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    return parameterError(text, kParameterFormat);
  }
  if (value < 1) {
    return parameterError(text, "it must be at least 1");
  }
  if (value > static_cast<double>(kMaxParameterCount)) {
    return parameterError(text, "it is larger than 100T");
  }
  return static_cast<std::uint64_t>(std::llround(value));
}

// Exact decimal: integer part and fraction digits, scaled by the suffix.
Result<std::uint64_t> parseDecimalCount(std::string_view text, std::string_view digits,
                                        std::uint64_t multiplier) {
  std::uint64_t whole = 0;
  std::uint64_t fraction = 0;
  std::uint64_t fractionScale = 1;
  bool seenDot = false;
  bool seenDigit = false;
  for (char c : digits) {
    if (c == '.' && !seenDot) {
      seenDot = true;
      continue;
    }
    if (c < '0' || c > '9') {
      return parameterError(text, kParameterFormat);
    }
    seenDigit = true;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (seenDot) {
      if (fractionScale >= multiplier) {
        return parameterError(text, "more decimals than the suffix allows");
      }
      fraction = fraction * 10 + digit;
      fractionScale *= 10;
    } else {
      if (whole > kMaxParameterCount / 10) {
        return parameterError(text, "it is larger than 100T");
      }
      whole = whole * 10 + digit;
    }
  }
  if (!seenDigit) {
    return parameterError(text, kParameterFormat);
  }
  if (whole > kMaxParameterCount / multiplier) {
    return parameterError(text, "it is larger than 100T");
  }
  const std::uint64_t count = whole * multiplier + fraction * (multiplier / fractionScale);
  if (count == 0) {
    return parameterError(text, "it must be at least 1");
  }
  if (count > kMaxParameterCount) {
    return parameterError(text, "it is larger than 100T");
  }
  return count;
}

}  // namespace

Result<std::uint64_t> parseParameterCount(std::string_view text) {
  if (text.empty()) {
    return parameterError(text, kParameterFormat);
  }
  if (text.front() == '-') {
    return parameterError(text, "it must be positive");
  }
  if (text.find_first_of("eE") != std::string_view::npos) {
    return parseScientificCount(text);
  }
  std::uint64_t multiplier = 1;
  std::string_view digits = text;
  if (std::isalpha(static_cast<unsigned char>(digits.back()))) {
    multiplier = suffixMultiplier(digits.back());
    if (multiplier == 0) {
      return parameterError(text, "unknown suffix (use K, M, B or T)");
    }
    digits.remove_suffix(1);
  }
  return parseDecimalCount(text, digits, multiplier);
}

std::string formatParameterCount(std::uint64_t count) {
  struct Unit {
    std::uint64_t scale;
    char suffix;
  };
  for (Unit unit : {Unit{1'000'000'000'000ULL, 'T'}, Unit{1'000'000'000ULL, 'B'},
                    Unit{1'000'000ULL, 'M'}, Unit{1'000ULL, 'K'}}) {
    if (count < unit.scale) {
      continue;
    }
    std::string text = std::to_string(count / unit.scale);
    std::uint64_t rest = count % unit.scale;
    if (rest != 0) {
      std::string decimals;
      for (std::uint64_t scale = unit.scale / 10; scale > 0 && rest != 0; scale /= 10) {
        decimals.push_back(static_cast<char>('0' + rest / scale));
        rest %= scale;
      }
      text += "." + decimals;
    }
    return text + unit.suffix;
  }
  return std::to_string(count);
}

namespace {

// The multiplier of a quantity's suffix, or 0 for none we know.
long double quantitySuffix(std::string_view suffix) {
  constexpr std::pair<std::string_view, long double> kSuffixes[] = {{"", 1},
                                                                    {"m", 1e-3},
                                                                    {"k", 1e3},
                                                                    {"M", 1e6},
                                                                    {"G", 1e9},
                                                                    {"T", 1e12},
                                                                    {"P", 1e15},
                                                                    {"E", 1e18},
                                                                    {"Ki", 1024.0L},
                                                                    {"Mi", 1048576.0L},
                                                                    {"Gi", 1073741824.0L},
                                                                    {"Ti", 1099511627776.0L},
                                                                    {"Pi", 1125899906842624.0L},
                                                                    {"Ei", 1152921504606846976.0L}};
  for (const auto& [name, multiplier] : kSuffixes) {
    if (suffix == name) {
      return multiplier;
    }
  }
  return 0;
}

}  // namespace

Result<std::int64_t> parseResourceMilli(std::string_view text) {
  const auto fail = [&] {
    return Error{"", base::quoted(text) + " is not a resource quantity such as 4, 500m or 16Gi"};
  };
  std::size_t end = 0;
  while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) ||
                               text[end] == '.' || text[end] == '+')) {
    ++end;
  }
  // A decimal exponent ("2e3") is part of the number; "E" alone is exa.
  if (end + 1 < text.size() && (text[end] == 'e' || text[end] == 'E') &&
      std::isdigit(static_cast<unsigned char>(text[end + 1]))) {
    end += 1;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) {
      ++end;
    }
  }
  const std::string number(text.substr(0, end));
  const long double multiplier = quantitySuffix(text.substr(end));
  if (number.empty() || multiplier == 0) {
    return fail();
  }
  char* parsedEnd = nullptr;
  const long double value = std::strtold(number.c_str(), &parsedEnd);
  if (parsedEnd != number.c_str() + number.size() || !std::isfinite(value) || value < 0) {
    return fail();
  }
  // Rounded up like the API server, but not for the last bits a binary
  // fraction adds: 3920m is 3920, not 3921.
  const long double exact = value * multiplier * 1000;
  const long double nearest = std::round(exact);
  const long double milli =
      std::fabs(exact - nearest) <= 1e-9L * std::max(1.0L, nearest) ? nearest : std::ceil(exact);
  if (milli > static_cast<long double>(std::numeric_limits<std::int64_t>::max() / 2)) {
    return fail();
  }
  return static_cast<std::int64_t>(milli);
}

std::string quantityTextOf(const nlohmann::json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_number_integer()) {
    return std::to_string(value.get<std::int64_t>());
  }
  return value.dump();
}

}  // namespace gpuplacement::core
