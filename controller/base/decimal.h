#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace gpuplacement::base {

// Parses a non-negative decimal such as "0.526" or "12" (no exponent, no
// sign), as used for prices in the API where floats are avoided.
Result<double> parseDecimal(std::string_view text);

// A decimal string with at most `maxDecimals` decimals and no trailing
// zeros ("0.5", "12", never "-0"): money and GiB as the API carries them.
std::string decimalString(double value, int maxDecimals);

// "$1,234.56"; sub-dollar amounts keep up to four decimals ("$0.2131").
std::string formatMoney(double dollars);

// "15.6" below 100 GiB, "1,044" (rounded up) from there.
std::string formatGiB(double gib);

// "98%" from 0.98.
std::string formatPercent(double fraction, int decimals = 0);

// Fixed decimals, "12.50".
std::string formatFixed(double value, int decimals);

// A whole count with thousands separators, "6,208".
std::string formatCount(long long count);

}  // namespace gpuplacement::base
