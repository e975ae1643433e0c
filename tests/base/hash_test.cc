#include "base/hash.h"

#include <doctest/doctest.h>

namespace gpuplacement::base {

using json = nlohmann::json;

TEST_CASE("stableHash is FNV-1a: the published test vectors") {
  CHECK(stableHash("") == 0xcbf29ce484222325ULL);
  CHECK(stableHash("a") == 0xaf63dc4c8601ec8cULL);
  CHECK(stableHash("foobar") == 0x85944171f73967e8ULL);
  static_assert(stableHash("a") == 0xaf63dc4c8601ec8cULL);
}

TEST_CASE("jsonDigest: equal documents agree, however they were built") {
  const json built = {{"replicas", 3}, {"name", "w"}, {"ok", true}};
  const json parsed = json::parse(R"({"ok": true, "name": "w", "replicas": 3})");
  CHECK(parsed["replicas"].is_number_unsigned());
  CHECK(built["replicas"].is_number_integer());
  CHECK(jsonDigest(built) == jsonDigest(parsed));
  CHECK(jsonDigest(json::parse(built.dump())) == jsonDigest(built));
}

TEST_CASE("jsonDigest: any difference changes it") {
  struct Case {
    const char* name;
    json a, b;
  };
  const Case cases[] = {
      {"value", json{{"a", "x"}}, json{{"a", "y"}}},
      {"key and value boundary", json{{"ab", "c"}}, json{{"a", "bc"}}},
      {"string or number", json{{"a", "1"}}, json{{"a", 1}}},
      {"integer or float", json{{"a", 1}}, json{{"a", 1.0}}},
      {"null or missing", json{{"a", nullptr}}, json::object()},
      {"array order", json::array({1, 2}), json::array({2, 1})},
      {"nesting", json::array({json::array({1}), 2}), json::array({1, json::array({2})})},
      {"negative", json{{"a", -1}}, json{{"a", 1}}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    CHECK(jsonDigest(c.a) != jsonDigest(c.b));
  }
}

TEST_CASE("a digest as text reads back; anything else is refused") {
  for (const std::uint64_t digest :
       {std::uint64_t{0}, std::uint64_t{1}, stableHash("template"), ~std::uint64_t{0}}) {
    CAPTURE(digest);
    const auto text = digestText(digest);
    CHECK(text.size() == 16);
    CHECK(parseDigest(text) == digest);
  }
  CHECK(digestText(0xabcdefULL) == "0000000000abcdef");
  for (const char* bad : {"", "abc", "0000000000ABCDEF", "000000000000000g", "00000000000000000"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseDigest(bad));
  }
}

}  // namespace gpuplacement::base
