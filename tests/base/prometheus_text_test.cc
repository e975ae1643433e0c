// Prometheus' text format, read as another component serves it: only the
// wanted metrics, labels unescaped, and a broken line named.
#include "base/prometheus_text.h"

#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace gpuplacement::base::prometheus_text_tests {

namespace {

struct Read {
  std::vector<PrometheusSample> samples;  // labels copied; names point into the text
  Result<Ok> result = Ok{};
};

Read readAll(std::string_view text, std::initializer_list<std::string_view> names) {
  Read read;
  read.result = readPrometheusText(text, names,
                                   [&](const PrometheusSample& s) { read.samples.push_back(s); });
  return read;
}

}  // namespace

TEST_CASE("samples of the wanted metrics, labels unescaped, values as written") {
  const std::string text =
      "# HELP price the price\n"
      "# TYPE price gauge\n"
      "price{instance_type=\"g5.xlarge\",capacity_type=\"spot\",zone=\"us-east-1a\"} 0.4025\n"
      "price_total 7\n"
      "other{a=\"b\"} 3\n"
      "  price{note=\"a \\\"quoted\\\" back\\\\slash\\nline\",} +Inf 1733000000000\r\n"
      "price{x=\"1\"} NaN\n"
      "\n"
      "price -2.5e-3\n";
  const auto read = readAll(text, {"price"});
  REQUIRE(read.result.ok());
  REQUIRE(read.samples.size() == 4);
  CHECK(read.samples[0].label("instance_type") == "g5.xlarge");
  CHECK(read.samples[0].label("zone") == "us-east-1a");
  CHECK(read.samples[0].label("absent").empty());
  CHECK(read.samples[0].value == doctest::Approx(0.4025));
  CHECK(read.samples[1].label("note") == "a \"quoted\" back\\slash\nline");
  CHECK(std::isinf(read.samples[1].value));
  CHECK(std::isnan(read.samples[2].value));
  CHECK(read.samples[3].labels.empty());
  CHECK(read.samples[3].value == doctest::Approx(-0.0025));
}

TEST_CASE("a broken sample of a wanted metric names its line; others are not read") {
  struct Row {
    const char* text;
    const char* problem;
  };
  const Row rows[] = {
      {"price{a=\"1\" 2\n", "labels are not separated by commas or closed by }"},
      {"price{a=1} 2\n", "label a has no quoted value"},
      {"price{a=\"1} 2\n", "label a's value is not closed"},
      {"price{=\"1\"} 2\n", "a label name is missing or malformed"},
      {"price{a=\"1\"}\n", "no value after the name"},
      {"price{a=\"1\"} two\n", "the value is not a number"},
      {"price 1.2.3\n", "the value is not a number"},
  };
  for (const auto& row : rows) {
    CAPTURE(row.text);
    const auto read = readAll(std::string("# first\n") + row.text, {"price"});
    REQUIRE_FALSE(read.result.ok());
    CHECK(read.result.error().field == "line 2");
    CHECK(read.result.error().message == std::string("price: ") + row.problem);
    // The same line of a metric not asked for is skipped.
    CHECK(readAll(std::string("# first\n") + row.text, {"other"}).result.ok());
  }
}

}  // namespace gpuplacement::base::prometheus_text_tests
