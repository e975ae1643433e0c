#include "base/decimal.h"

#include <charconv>
#include <cmath>
#include <random>
#include <string>

#include <doctest/doctest.h>

namespace gpuplacement::base {

TEST_CASE("parseDecimal accepts plain non-negative decimals only") {
  CHECK(*parseDecimal("0.526") == doctest::Approx(0.526));
  CHECK(*parseDecimal("12") == doctest::Approx(12.0));
  CHECK(*parseDecimal("0") == doctest::Approx(0.0));
  for (const char* bad : {"", "-1", ".5", "5.", "1e3", "1.2.3", "abc", " 1", "NaN", "inf"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseDecimal(bad).ok());
  }
}

TEST_CASE("decimal strings for the API") {
  CHECK(decimalString(1.861, 4) == "1.861");
  CHECK(decimalString(0.52600001, 4) == "0.526");
  CHECK(decimalString(1358.5300000001, 2) == "1358.53");
  CHECK(decimalString(12.0, 4) == "12");
  CHECK(decimalString(-0.00001, 2) == "0");
  CHECK(decimalString(-702.4, 2) == "-702.4");
}

TEST_CASE("money, sizes and percentages as people read them") {
  struct Case {
    std::string actual;
    const char* expected;
  };
  const Case cases[] = {
      {formatMoney(0.2131), "$0.2131"},       // sub-dollar prices keep four decimals
      {formatMoney(0.5), "$0.50"},            // ...unless two say it all
      {formatMoney(21.5), "$21.50"},          //
      {formatMoney(15695.36), "$15,695.36"},  // thousands grouped
      {formatMoney(-702.4), "-$702.40"},      //
      {formatMoney(1234567.891), "$1,234,567.89"},
      {formatGiB(15.65), "15.7"},          // one decimal below 100 GiB
      {formatGiB(1043.2), "1,044"},        // rounded up above
      {formatPercent(0.978), "98%"},       //
      {formatPercent(0.978, 1), "97.8%"},  //
      {formatFixed(12.5, 2), "12.50"},     //
  };
  for (const auto& c : cases) {
    CHECK(c.actual == c.expected);
  }
}

namespace {

std::string printfFixed(double value, int decimals) {
  char buffer[400];
  const auto [end, ec] =
      std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::fixed, decimals);
  REQUIRE(ec == std::errc());
  return std::string(buffer, end);
}

}  // namespace

// formatFixed takes an integer shortcut when it is sure of the digits; it
// must give printf's digits for every value, halves and their neighbours too.
TEST_CASE("formatFixed gives printf's digits for every value") {
  std::mt19937_64 random(42);
  std::uniform_real_distribution<double> exponent(-8, 14);
  std::uniform_int_distribution<int> decimals(0, 7);
  int checked = 0;
  for (int i = 0; i < 200'000; ++i) {
    const int places = decimals(random);
    double value = std::pow(10.0, exponent(random));
    if (i % 3 == 0) {
      // A decimal half at this precision, as written, and its neighbours.
      const double unit = std::pow(10.0, -places);
      value = (std::floor(value / unit) + 0.5) * unit;
      value = i % 2 == 0 ? value : std::nextafter(value, i % 4 == 1 ? 0.0 : 1e300);
    }
    if (i % 5 == 0) {
      value = -value;
    }
    CAPTURE(value);
    CAPTURE(places);
    CHECK(formatFixed(value, places) == printfFixed(value, places));
    ++checked;
  }
  for (double value : {0.0, -0.0, 0.5, 1.5, 2.5, 0.125, 0.375, -0.001, 1e12, 999999999999.5, 0.05,
                       123.456, 1e-300, 4503599627370496.0}) {
    for (int places = 0; places <= 7; ++places) {
      CAPTURE(value);
      CAPTURE(places);
      CHECK(formatFixed(value, places) == printfFixed(value, places));
    }
  }
  CHECK(checked == 200'000);
}

}  // namespace gpuplacement::base
