#pragma once

#include <memory>
#include <string>

#include "base/result.h"
#include "core/catalog/catalog.h"
#include "core/catalog/rules.h"
#include "core/decide/engine.h"
#include "core/intent/policy.h"

namespace gpuplacement::app {

// The catalog and rules compiled into the binary (config/catalog.yaml and
// config/rules.yaml at build time), so the command line works anywhere.
extern const char* const kBuiltinCatalogYaml;
extern const char* const kBuiltinRulesYaml;

// An empty path means the built-in copy. Errors name the file and field.
// `priceList` (a file `gpu-placement prices import` wrote; empty: none)
// replaces the on-demand prices and the region they are for.
base::Result<std::shared_ptr<const core::Catalog>> loadCatalog(const std::string& path,
                                                               const std::string& priceList = "");
base::Result<std::shared_ptr<const core::RuleSet>> loadRules(const std::string& path,
                                                             const core::Catalog& catalog);

// A PlacementPolicy manifest (the same YAML users apply); empty path: the
// default policy.
base::Result<core::Policy> loadPolicyFile(const std::string& path, const core::Catalog& catalog,
                                          const core::RuleSet& rules);

// Checks a PlacementPolicy object (from a file or the API) and reads its spec.
base::Result<core::Policy> policyFromManifest(const nlohmann::json& manifest,
                                              const core::Catalog& catalog,
                                              const core::RuleSet& rules);

struct EngineFiles {
  std::string catalog;
  std::string priceList;
  std::string rules;
  std::string policy;
};

base::Result<std::shared_ptr<const core::PlacementEngine>> loadEngine(const EngineFiles& files);

}  // namespace gpuplacement::app
