#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "core/decide/decision.h"

namespace gpuplacement::core {

// Who reads a placement. The status carries the placement in force (or
// recommended) and what it costs, its figures as decimal strings, as the
// API carries money (exact to the digit, no floating-point noise), and
// leaves out what is absent. The command line's what-if answer adds how
// the option compared (the memory it fills, the objective's figure, the
// packing), its figures as JSON numbers rounded to the same digits, and
// keeps a key that may be absent as null, so that scripts find it.
enum class PlacementView : std::uint8_t { Status, WhatIf };

// The one writer of a placement as JSON: each field once, at one
// precision, in the view's spelling.
nlohmann::json placementToJson(const Placement& placement, PlacementView view);
// An option that lost, and why.
nlohmann::json alternativeToJson(const Alternative& alternative, PlacementView view);

}  // namespace gpuplacement::core
