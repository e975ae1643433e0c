// Every field of both CRDs says what it is in `kubectl explain`: the test
// walks each openAPIV3Schema and names every property without a description.
// The root's metadata is the exception: the API server refuses anything but
// its type there and explains it with ObjectMeta's own description.
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "support/paths.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using json = nlohmann::json;

// Appends the path of every property under `schema` (objects' properties,
// list items, map values) that has no description, and counts them all.
void findUndescribed(const json& schema, const std::string& path,
                     std::vector<std::string>& undescribed, int& properties, bool root) {
  if (const auto it = schema.find("properties"); it != schema.end()) {
    for (const auto& [name, property] : it->items()) {
      ++properties;
      if (root && name == "metadata") {
        continue;
      }
      const std::string child = path + "." + name;
      const auto description = property.find("description");
      if (description == property.end() || !description->is_string() ||
          description->get<std::string>().empty()) {
        undescribed.push_back(child);
      }
      findUndescribed(property, child, undescribed, properties, false);
    }
  }
  if (const auto it = schema.find("items"); it != schema.end() && it->is_object()) {
    findUndescribed(*it, path + "[]", undescribed, properties, false);
  }
  if (const auto it = schema.find("additionalProperties"); it != schema.end() && it->is_object()) {
    findUndescribed(*it, path + "{}", undescribed, properties, false);
  }
}

}  // namespace

TEST_CASE("every property of both CRDs has a description for kubectl explain") {
  // The chart's crds/ are copies of these (chart_tests checks they are equal).
  struct Crd {
    const char* file;
    int atLeast;  // properties today, so that a walk that finds nothing fails
  };
  for (const Crd crd : {Crd{"gpuplacement.io_gpuworkloads.yaml", 114},
                        Crd{"gpuplacement.io_placementpolicies.yaml", 82}}) {
    const std::string path = testing::repoRoot() + "/crds/" + crd.file;
    CAPTURE(path);
    auto text = base::readTextFile(path);
    REQUIRE_MESSAGE(text.ok(), testing::whyNot(text));
    auto parsed = base::parseYaml(*text, path);
    REQUIRE_MESSAGE(parsed.ok(), testing::whyNot(parsed));
    for (const auto& version : parsed->at("spec").at("versions")) {
      const auto& schema = version.at("schema").at("openAPIV3Schema");
      std::vector<std::string> undescribed;
      int properties = 0;
      findUndescribed(schema, version.at("name").get<std::string>(), undescribed, properties, true);
      CHECK(properties >= crd.atLeast);
      std::string list;
      for (const auto& field : undescribed) {
        list += "\n  " + field;
      }
      CHECK_MESSAGE(undescribed.empty(), undescribed.size()
                                             << " of " << properties
                                             << " properties have no description:" << list);
    }
  }
}

}  // namespace gpuplacement
