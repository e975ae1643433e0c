// A catalog file (`--catalog`, or the chart's ConfigMap): YAML, then the
// catalog's own checks.
#include "base/io/yaml_json.h"
#include "core/catalog/catalog.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const auto document = base::parseYaml(fuzz::text(data, size), "catalog.yaml");
  if (document) {
    (void)core::parseCatalog(*document);
  }
  return 0;
}
