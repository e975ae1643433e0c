#include "app/placement_config.h"

#include <algorithm>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "core/catalog/price_list.h"

namespace gpuplacement::app {
namespace {

using base::parseYaml;
using base::readTextFile;

base::Error inFile(const std::string& source, const base::Error& error) {
  return base::Error{source + (error.field.empty() ? "" : ": " + error.field), error.message};
}

base::Result<nlohmann::json> loadDocument(const std::string& path, const char* builtin,
                                          const std::string& builtinName) {
  if (path.empty()) {
    return parseYaml(builtin, builtinName);
  }
  auto text = readTextFile(path);
  if (!text) {
    return text.error();
  }
  return parseYaml(*text, path);
}

}  // namespace

base::Result<std::shared_ptr<const core::Catalog>> loadCatalog(const std::string& path,
                                                               const std::string& priceList) {
  const std::string source = path.empty() ? "built-in catalog" : path;
  auto document = loadDocument(path, kBuiltinCatalogYaml, source);
  if (!document) {
    return document.error();
  }
  auto catalog = core::parseCatalog(*document);
  if (!catalog) {
    return inFile(source, catalog.error());
  }
  if (priceList.empty()) {
    return std::make_shared<const core::Catalog>(std::move(catalog).value());
  }
  auto listDocument = loadDocument(priceList, nullptr, priceList);
  if (!listDocument) {
    return listDocument.error();
  }
  auto list = core::parsePriceList(*listDocument);
  if (!list) {
    return inFile(priceList, list.error());
  }
  auto priced = core::withPriceList(std::move(catalog).value(), *list);
  if (std::none_of(priced.instances.begin(), priced.instances.end(),
                   [](const core::InstanceType& instance) { return instance.onDemand; })) {
    return base::Error{priceList + ": prices",
                       "price none of the catalog's instance types (is it an EC2 price list?)"};
  }
  return std::make_shared<const core::Catalog>(std::move(priced));
}

base::Result<std::shared_ptr<const core::RuleSet>> loadRules(const std::string& path,
                                                             const core::Catalog& catalog) {
  const std::string source = path.empty() ? "built-in rules" : path;
  auto document = loadDocument(path, kBuiltinRulesYaml, source);
  if (!document) {
    return document.error();
  }
  auto rules = core::parseRuleSet(*document, catalog);
  if (!rules) {
    return inFile(source, rules.error());
  }
  return std::make_shared<const core::RuleSet>(std::move(rules).value());
}

base::Result<core::Policy> policyFromManifest(const nlohmann::json& manifest,
                                              const core::Catalog& catalog,
                                              const core::RuleSet& rules) {
  if (!manifest.is_object()) {
    return base::Error{"", "a PlacementPolicy must be an object"};
  }
  if (base::stringMember(manifest, "kind") != "PlacementPolicy") {
    return base::Error{
        "kind", "expected PlacementPolicy, found \"" + base::stringMember(manifest, "kind") + "\""};
  }
  if (base::stringMember(manifest, "apiVersion") != "gpuplacement.io/v1alpha1") {
    return base::Error{"apiVersion", "expected gpuplacement.io/v1alpha1"};
  }
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const auto spec = manifest.find("spec");
  return core::parsePolicySpec(spec == manifest.end() ? kEmpty : *spec, catalog, rules);
}

base::Result<core::Policy> loadPolicyFile(const std::string& path, const core::Catalog& catalog,
                                          const core::RuleSet& rules) {
  if (path.empty()) {
    return core::Policy{};
  }
  auto text = readTextFile(path);
  if (!text) {
    return text.error();
  }
  auto document = parseYaml(*text, path);
  if (!document) {
    return document.error();
  }
  auto policy = policyFromManifest(*document, catalog, rules);
  if (!policy) {
    return inFile(path, policy.error());
  }
  return policy;
}

base::Result<std::shared_ptr<const core::PlacementEngine>> loadEngine(const EngineFiles& files) {
  auto catalog = loadCatalog(files.catalog, files.priceList);
  if (!catalog) {
    return catalog.error();
  }
  auto rules = loadRules(files.rules, **catalog);
  if (!rules) {
    return rules.error();
  }
  auto policy = loadPolicyFile(files.policy, **catalog, **rules);
  if (!policy) {
    return policy.error();
  }
  return core::PlacementEngine::create(*catalog, *rules, std::move(policy).value());
}

}  // namespace gpuplacement::app
