#include "base/decimal.h"

#include <charconv>
#include <cmath>
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
std::string fixed(double value, int decimals) {
  char buffer[64];
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  if (ec != std::errc()) {
    std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
    return buffer;
  }
  return std::string(buffer, end);
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

}  // namespace gpuplacement::base
