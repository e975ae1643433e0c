// Parsing API objects and lists the way the informers do: managedFields
// never built, list items handed over one at a time.
#include "runtime/object_json.h"

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace gpuplacement::runtime {
namespace {

using json = nlohmann::json;

const char* kList = R"({
  "apiVersion": "v1", "kind": "List",
  "items": [
    {"metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}]},
     "spec": {"items": [{"name": "nested"}]}},
    {"metadata": {"name": "b", "resourceVersion": "7"}}
  ],
  "metadata": {"resourceVersion": "42", "continue": "token"}
})";

TEST_CASE("an object loses its managedFields and keeps everything else") {
  const auto object = parseObject(
      R"({"metadata": {"name": "x", "managedFields": [{"manager": "m"}]}, "spec": {"a": 1}})");
  CHECK(object == json::parse(R"({"metadata": {"name": "x"}, "spec": {"a": 1}})"));
  CHECK(parseObject("{not json").is_discarded());
}

TEST_CASE("what a parse keeps: all, all but managedFields, or the status alone") {
  const char* text =
      R"({"metadata": {"name": "x", "managedFields": [{"manager": "m"}]},
          "spec": {"status": "spec's own"},
          "status": {"phase": "Placed", "managedFields": "a status's own field"}})";
  CHECK(parseObject(text, Keep::All) == json::parse(text));
  CHECK(parseObject(text, Keep::AllButManagedFields) ==
        json::parse(R"({"metadata": {"name": "x"}, "spec": {"status": "spec's own"},
                        "status": {"phase": "Placed"}})"));
  // Only the top-level status, with everything in it; a nested "status" is
  // not taken for it.
  CHECK(parseObject(text, Keep::StatusOnly) ==
        json::parse(R"({"status": {"phase": "Placed", "managedFields": "a status's own field"}})"));
  CHECK(parseObject(R"({"metadata": {}})", Keep::StatusOnly) == json::object());
  CHECK(parseObject("{not json", Keep::StatusOnly).is_discarded());
}

TEST_CASE("a list hands over its items one by one and keeps its own metadata") {
  std::vector<json> items;
  const auto list = parseList(kList, [&](json& item) { items.push_back(std::move(item)); });
  REQUIRE_FALSE(list.is_discarded());
  CHECK(list["items"] == json::array());
  CHECK(list["metadata"] == json{{"resourceVersion", "42"}, {"continue", "token"}});
  CHECK(list["kind"] == "List");
  REQUIRE(items.size() == 2);
  CHECK(items[0]["metadata"] == json{{"name", "a"}});
  // Only the top-level items array is split; an object's own "items" stays.
  CHECK(items[0]["spec"]["items"] == json::parse(R"([{"name": "nested"}])"));
  CHECK(items[1]["metadata"] == json{{"name", "b"}, {"resourceVersion", "7"}});
}

TEST_CASE("a list cut short: the items before the cut were delivered, the result is an error") {
  std::string truncated = kList;
  truncated.resize(truncated.find("\"metadata\": {\"name\": \"b\""));
  std::vector<std::string> names;
  const auto list = parseList(
      truncated, [&](json& item) { names.push_back(item["metadata"]["name"].get<std::string>()); });
  CHECK(list.is_discarded());
  CHECK(names == std::vector<std::string>{"a"});
}

TEST_CASE("an empty list and a list without items") {
  int calls = 0;
  const auto empty = parseList(R"({"items": [], "metadata": {}})", [&](json&) { ++calls; });
  CHECK(empty["items"] == json::array());
  const auto none = parseList(R"({"kind": "Status", "code": 500})", [&](json&) { ++calls; });
  CHECK_FALSE(none.contains("items"));
  CHECK(calls == 0);
}

}  // namespace
}  // namespace gpuplacement::runtime
