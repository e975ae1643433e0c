// base/io/yaml_json: YAML streams as JSON documents. In core_tests, the
// first test binary that links base_yaml.
#include "base/io/yaml_json.h"

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "support/why_not.h"

namespace gpuplacement::base {

TEST_CASE("YAML streams: documents, markers, and values after them") {
  auto documents = parseYamlDocuments(
      "# a comment\na: 1\n---\nb: [x, y]\n--- c\n...\n---\n---\n# only a comment\n", "t");
  REQUIRE_MESSAGE(documents.ok(), gpuplacement::testing::whyNot(documents));
  REQUIRE(documents->size() == 3);
  CHECK((*documents)[0] == nlohmann::json{{"a", 1}});
  CHECK((*documents)[1] == nlohmann::json{{"b", {"x", "y"}}});
  CHECK((*documents)[2] == "c");
  // "---" inside a line or indented is content, not a marker.
  auto inline_ = parseYaml("text: a---b\nlist:\n  - ---x\n", "t");
  REQUIRE(inline_.ok());
  CHECK((*inline_)["text"] == "a---b");
  CHECK((*inline_)["list"][0] == "---x");
}

// Regression (fuzz/regressions/catalog_yaml, rules_yaml): yaml-cpp's
// LoadAll read ",'" as an endless run of empty documents, growing without
// bound; a catalog or rules file like it hung the operator at start.
TEST_CASE("malformed YAML is an error, at once") {
  for (const char* text : {",'", ",\x04", "[", "a: [b", "{a: b"}) {
    CAPTURE(text);
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(parseYaml(text, "t").ok());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  }
}

// Regression (fuzz/regressions/rules_yaml): std::stod threw out of range
// on a float too large for a double, and the exception ended the process.
TEST_CASE("numbers out of range stay text") {
  auto document = parseYaml("big: 4222222222E222221\ntiny: 1e-999\nfine: 2.5e3\n", "t");
  REQUIRE_MESSAGE(document.ok(), gpuplacement::testing::whyNot(document));
  CHECK((*document)["big"] == "4222222222E222221");
  CHECK((*document)["fine"] == 2500.0);
}

// Regression (fuzz/regressions/rules_yaml): an alias inside its own anchor
// made a cycle, and the walk to JSON overflowed the stack. Nested aliases
// that expand to billions of values are refused as well.
TEST_CASE("aliases that contain themselves or explode are errors") {
  const std::string cycle = "&:\n:\n:\n:\n*:\n:\n\n";
  const std::string selfList = "a: &x [1, *x]\n";
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level < 9; ++level) {
    const auto previous = "*a" + std::to_string(level - 1);
    laughs += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) {
      laughs += (i ? ", " : "") + previous;
    }
    laughs += "]\n";
  }
  const std::vector<std::pair<std::string, std::string>> rows = {
      {cycle, "nested deeper than 100 levels"},
      {selfList, "nested deeper than 100 levels"},
      {laughs, "more values than the document's size allows"}};
  for (const auto& [text, problem] : rows) {
    CAPTURE(text);
    const auto document = parseYaml(text, "rules.yaml");
    REQUIRE_FALSE(document.ok());
    CHECK(document.error().field == "rules.yaml");
    CHECK(document.error().message.find(problem) != std::string::npos);
  }
  // Aliases a person writes on purpose still read.
  auto shared = parseYaml("base: &b {tier: a100}\nfirst: *b\nsecond: *b\n", "t");
  REQUIRE_MESSAGE(shared.ok(), gpuplacement::testing::whyNot(shared));
  CHECK((*shared)["second"]["tier"] == "a100");
}

}  // namespace gpuplacement::base
