#include "app/placement_config.h"

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"

namespace gpuplacement::app {

TEST_CASE("catalog files: bad YAML and missing files are errors naming the file") {
  auto missing = loadCatalog("/nonexistent/catalog.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().field == "/nonexistent/catalog.yaml");
  auto yaml = base::parseYaml("instances: [\n", "broken.yaml");
  REQUIRE_FALSE(yaml.ok());
  CHECK(yaml.error().field == "broken.yaml");
}

}  // namespace gpuplacement::app
