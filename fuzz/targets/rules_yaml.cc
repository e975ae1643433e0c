// A rules file (`--rules`): YAML, then the rules checked against the
// built-in catalog.
#include "base/io/yaml_json.h"
#include "core/catalog/rules.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const auto document = base::parseYaml(fuzz::text(data, size), "rules.yaml");
  if (document) {
    (void)core::parseRuleSet(*document, fuzz::catalog());
  }
  return 0;
}
