#include "base/decimal.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

namespace gpuplacement::base {
namespace {

std::string withThousands(const std::string& digits) {
  // Built by appending: g++ 12 warns falsely (-Wrestrict) on string::insert.
  const auto dot = digits.find('.');
  const std::size_t end = dot == std::string::npos ? digits.size() : dot;
  std::string grouped;
  grouped.reserve(digits.size() + end / 3);
  for (std::size_t i = 0; i < end; ++i) {
    if (i > 0 && (end - i) % 3 == 0) {
      grouped.push_back(',');
    }
    grouped.push_back(digits[i]);
  }
  grouped.append(digits, end, std::string::npos);
  return grouped;
}

// printf's "%.*f" (std::to_chars is specified to match it), without
// printf's cost: placements format a few figures each, many thousand a second.
std::string exactFixed(double value, int decimals) {
  char buffer[64];
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  if (ec != std::errc()) {
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
  }
  return std::string(buffer, end);
}

// The same digits by integer arithmetic when they are certainly the same:
// |value| x 10^decimals below 1e12 is computed within 1.2e-4 of the exact
// product (one rounding, 2^-53 relative), so a fraction more than 1e-3 away
// from one half rounds as the exact binary value does. Near a half, and for
// large or odd values, the exact path decides; it costs ten times as much.
std::string fixed(double value, int decimals) {
  static constexpr double kPowers[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  constexpr double kFastBelow = 1e12;
  constexpr double kNearHalf = 1e-3;
  if (decimals < 0 || decimals > 6 || !std::isfinite(value)) {
    return exactFixed(value, decimals);
  }
  const double scaled = std::fabs(value) * kPowers[decimals];
  if (scaled >= kFastBelow) {
    return exactFixed(value, decimals);
  }
  const double whole = std::floor(scaled);
  const double fraction = scaled - whole;
  if (std::fabs(fraction - 0.5) <= kNearHalf) {
    return exactFixed(value, decimals);
  }
  auto units = static_cast<std::uint64_t>(whole) + (fraction > 0.5 ? 1 : 0);
  char digits[24];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + units % 10);
    units /= 10;
  } while (units != 0);
  while (count <= decimals) {
    digits[count++] = '0';  // 0.05: at least one digit before the point
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(count) + 2);
  if (std::signbit(value)) {
    text.push_back('-');  // as printf: -0.001 at two decimals is "-0.00"
  }
  for (int i = count - 1; i >= 0; --i) {
    text.push_back(digits[i]);
    if (i == decimals && decimals > 0) {
      text.push_back('.');
    }
  }
  return text;
}

}  // namespace

Result<double> parseDecimal(std::string_view text) {
  const auto fail = [&] {
    return Error{"", quoted(text) + " is not a non-negative decimal such as 0.526"};
  };
  if (text.empty() || text.front() == '.' || text.back() == '.') {
    return fail();
  }
  int dots = 0;
  for (char c : text) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return fail();
    }
  }
  if (dots > 1) {
    return fail();
  }
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return fail();
  }
  return value;
}

std::string decimalString(double value, int maxDecimals) {
  std::string result = fixed(value, maxDecimals);
  if (result.find('.') != std::string::npos) {
    while (result.back() == '0') {
      result.pop_back();
    }
    if (result.back() == '.') {
      result.pop_back();
    }
  }
  return result == "-0" ? "0" : result;
}

std::string formatMoney(double dollars) {
  const double magnitude = std::fabs(dollars);
  const double tenThousandths = std::round(magnitude * 1e4) / 1e4;
  if (magnitude < 1 && std::round(tenThousandths * 100) != tenThousandths * 100) {
    // Sub-dollar prices keep their precision: $0.2131, not $0.21.
    std::string trimmed = fixed(magnitude, 4);
    while (trimmed.back() == '0') {
      trimmed.pop_back();
    }
    return std::string(dollars < 0 ? "-$" : "$") + trimmed;
  }
  return std::string(dollars < 0 ? "-$" : "$") + withThousands(fixed(magnitude, 2));
}

std::string formatGiB(double gib) {
  if (gib < 100) {
    return fixed(gib, 1);
  }
  return withThousands(fixed(std::ceil(gib), 0));
}

std::string formatPercent(double fraction, int decimals) {
  return formatFixed(fraction * 100, decimals) + "%";
}

std::string formatFixed(double value, int decimals) {
  return fixed(value, decimals);
}

std::string formatCount(long long count) {
  std::string text;
  if (count < 0) {
    text.push_back('-');
  }
  text += withThousands(std::to_string(count < 0 ? -count : count));
  return text;
}

}  // namespace gpuplacement::base
