#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace gpuplacement::base {

// YAML documents as JSON values, the way the API server reads manifests:
// plain scalars become null, booleans and numbers where they look like one;
// quoted scalars stay strings. `source` names the file in errors.
base::Result<std::vector<nlohmann::json>> parseYamlDocuments(const std::string& text,
                                                             const std::string& source);
base::Result<nlohmann::json> parseYaml(const std::string& text, const std::string& source);

// Emits a JSON value as block-style YAML (for -o yaml).
std::string toYaml(const nlohmann::json& value);

// Reads a whole file; the error names the path.
base::Result<std::string> readTextFile(const std::string& path);

}  // namespace gpuplacement::base
