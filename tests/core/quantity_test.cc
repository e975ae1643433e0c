#include "core/catalog/quantity.h"

#include <doctest/doctest.h>

namespace gpuplacement::core {

TEST_CASE("parseParameterCount reads the forms people write") {
  struct Case {
    const char* text;
    std::uint64_t expected;
  };
  const Case cases[] = {
      {"7B", 7'000'000'000ULL},
      {"7b", 7'000'000'000ULL},
      {"1.3B", 1'300'000'000ULL},
      {"350M", 350'000'000ULL},
      {"125K", 125'000ULL},
      {"1.5T", 1'500'000'000'000ULL},
      {"70B", 70'000'000'000ULL},
      {"0.5B", 500'000'000ULL},
      {"7e9", 7'000'000'000ULL},
      {"1.3e9", 1'300'000'000ULL},
      {"7000000000", 7'000'000'000ULL},
      {"1", 1ULL},
      {"175B", 175'000'000'000ULL},
      {"100T", 100'000'000'000'000ULL},
      {"2.75B", 2'750'000'000ULL},
      {"13E9", 13'000'000'000ULL},
  };
  for (const auto& c : cases) {
    const std::string text = c.text;
    CAPTURE(text);
    auto parsed = parseParameterCount(c.text);
    REQUIRE(parsed.ok());
    CHECK(*parsed == c.expected);
  }
}

TEST_CASE("parseParameterCount rejects what is not a count, saying why") {
  struct Case {
    const char* text;
    const char* why;
  };
  const Case cases[] = {
      {"", "expected a count"},
      {"-7B", "must be positive"},
      {"0", "at least 1"},
      {"0B", "at least 1"},
      {"7X", "unknown suffix"},
      {"B", "expected a count"},
      {"seven", "expected a count"},
      {"sixB", "expected a count"},
      {"1.2.3B", "expected a count"},
      {"1.0000000001B", "more decimals"},
      {"101T", "larger than 100T"},
      {"1e15", "larger than 100T"},
      {"99999999999999999999", "larger than 100T"},
      {"1e-3", "at least 1"},
      {"7 B", "expected a count"},
      {"nan", "unknown suffix"},
  };
  for (const auto& c : cases) {
    const std::string text = c.text;
    CAPTURE(text);
    auto parsed = parseParameterCount(c.text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find(c.why) != std::string::npos);
    CHECK(parsed.error().message.find(std::string("\"") + c.text + "\"") != std::string::npos);
  }
}

TEST_CASE("formatParameterCount is the inverse of parseParameterCount") {
  const std::pair<std::uint64_t, const char*> cases[] = {
      {7'000'000'000ULL, "7B"},  {1'300'000'000ULL, "1.3B"},
      {350'000'000ULL, "350M"},  {125'000ULL, "125K"},
      {999ULL, "999"},           {1'500'000'000'000ULL, "1.5T"},
      {1'000'500ULL, "1.0005M"}, {70'000'000'000ULL, "70B"},
  };
  for (const auto& [count, text] : cases) {
    CAPTURE(text);
    CHECK(formatParameterCount(count) == text);
    CHECK(*parseParameterCount(formatParameterCount(count)) == count);
  }
}

}  // namespace gpuplacement::core
