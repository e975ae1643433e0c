#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/decide/engine.h"

namespace gpuplacement::app {

// What the prices of an answer are: the catalog's region and date (its own
// `region` and `pricesAsOf`, never assumed here), and the instance types a
// PlacementPolicy prices itself. The command line states it wherever it
// prints a price.

// One line of text: "us-east-1 prices of 2026-02-09 (the catalog's);
// the PlacementPolicy's own for inf2.xlarge".
std::string priceBasisText(const core::PlacementEngine& engine);

// {"region", "asOf", "source", "policyPricedTypes": [...]} for -o json/yaml.
nlohmann::json priceBasisJson(const core::PlacementEngine& engine);

}  // namespace gpuplacement::app
