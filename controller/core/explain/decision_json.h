#pragma once

#include <nlohmann/json.hpp>

#include "core/decide/engine.h"
#include "core/decide/render.h"
#include "core/explain/placement_json.h"

namespace gpuplacement::core {

// Money to 1/100 of a cent and GiB to 1/100: enough for people, and free
// of floating-point noise in JSON.
double roundMoney(double dollars);
double roundGiB(double gib);

nlohmann::json toJson(const MemoryEstimate& memory);
nlohmann::json toJson(const Scheduling& scheduling);

// The command line's and the status's shape: {"placement", "scheduling",
// "rule", "reason", "alternatives", ...}; "placement" is null when nothing
// fits, and "cannotPlace" says why.
nlohmann::json toJson(const Decision& decision, const Scheduling* scheduling);

}  // namespace gpuplacement::core
