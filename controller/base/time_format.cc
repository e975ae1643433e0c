#include "base/time_format.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

namespace gpuplacement::base {
namespace {

// Days since 1970-01-01 for a civil date (Howard Hinnant's algorithm), so
// no time zone database or global state is involved.
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

bool readInt(std::string_view text, std::size_t pos, std::size_t width, int& out) {
  if (pos + width > text.size()) {
    return false;
  }
  auto [end, ec] = std::from_chars(text.data() + pos, text.data() + pos + width, out);
  return ec == std::errc() && end == text.data() + pos + width;
}

}  // namespace

std::string formatRfc3339(Timestamp time) {
  const auto days = std::chrono::floor<std::chrono::days>(time);
  const std::chrono::year_month_day date{days};
  const std::chrono::hh_mm_ss clock{std::chrono::floor<std::chrono::seconds>(time - days)};
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02ld:%02ld:%02ldZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<long>(clock.hours().count()),
                static_cast<long>(clock.minutes().count()),
                static_cast<long>(clock.seconds().count()));
  return buffer;
}

Result<Timestamp> parseRfc3339(std::string_view text) {
  const auto fail = [&] {
    return Error{"", quoted(text) + " is not an RFC 3339 time"};
  };
  int year, month, day, hour, minute, second;
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' ||
      !readInt(text, 0, 4, year) || !readInt(text, 5, 2, month) || !readInt(text, 8, 2, day) ||
      !readInt(text, 11, 2, hour) || !readInt(text, 14, 2, minute) ||
      !readInt(text, 17, 2, second)) {
    return fail();
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) {
    return fail();
  }
  // Timestamps count nanoseconds in 64 bits: years 1678 to 2261. Beyond,
  // the conversion below overflows (found by fuzz/targets/exec_credential.cc
  // with an expirationTimestamp in 4052).
  if (year < 1678 || year > 2261) {
    return Error{"", quoted(text) + " is outside the years 1678 to 2261"};
  }
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::int64_t scale = 100'000'000;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      nanos += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) {
      return fail();
    }
  }
  std::int64_t offsetSeconds = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int offsetHours, offsetMinutes;
    if (pos + 6 > text.size() || text[pos + 3] != ':' || !readInt(text, pos + 1, 2, offsetHours) ||
        !readInt(text, pos + 4, 2, offsetMinutes)) {
      return fail();
    }
    offsetSeconds = (offsetHours * 3600 + offsetMinutes * 60) * (text[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return fail();
  }
  if (pos != text.size()) {
    return fail();
  }
  const std::int64_t seconds =
      daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second - offsetSeconds;
  return Timestamp(std::chrono::duration_cast<Timestamp::duration>(
      std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos)));
}

Result<std::chrono::milliseconds> parseDuration(std::string_view text) {
  const auto fail = [&] {
    return Error{"", quoted(text) + " is not a duration such as 90s, 15m or 1h30m"};
  };
  if (text.empty()) {
    return fail();
  }
  if (text == "0") {
    return std::chrono::milliseconds(0);
  }
  double totalMs = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    while (pos < text.size() && ((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) {
      ++pos;
    }
    if (pos == start) {
      return fail();
    }
    double value = 0;
    auto [end, ec] = std::from_chars(text.data() + start, text.data() + pos, value);
    if (ec != std::errc() || end != text.data() + pos) {
      return fail();
    }
    const std::size_t unitStart = pos;
    while (pos < text.size() && !((text[pos] >= '0' && text[pos] <= '9') || text[pos] == '.')) {
      ++pos;
    }
    const std::string_view unit = text.substr(unitStart, pos - unitStart);
    double scale = 0;
    if (unit == "ms") {
      scale = 1;
    } else if (unit == "s") {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    } else {
      return fail();
    }
    totalMs += value * scale;
  }
  if (totalMs > 1e13) {
    return fail();
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(totalMs + 0.5));
}

std::string formatDuration(std::chrono::seconds duration) {
  auto total = duration.count();
  std::string text;
  if (total >= 3600) {
    text += std::to_string(total / 3600) + "h";
    total %= 3600;
  }
  if (total >= 60 || !text.empty()) {
    text += std::to_string(total / 60) + "m";
    total %= 60;
  }
  return text + std::to_string(total) + "s";
}

}  // namespace gpuplacement::base
