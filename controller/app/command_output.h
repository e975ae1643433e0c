#pragma once

#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "core/decide/decision.h"
#include "core/decide/engine.h"
#include "core/decide/render.h"
#include "core/intent/workload.h"

namespace gpuplacement::app {

// How the command line prints (-o): the shared pieces of every command's
// output.
enum class OutputFormat { Table, Json, Yaml, Markdown };
base::Result<OutputFormat> parseOutputFormat(const std::string& text);

// "2x A100", or "CPU".
std::string shapeOf(const std::string& accelerator, int count);
// "on-demand", "spot" or "half spot, half on-demand".
std::string capacityText(core::CapacityType capacity);
// A decision as recommend and analyze print it: the placement, its
// scheduling and the alternatives, or why nothing fits.
void printDecision(const std::string& name, const core::WorkloadIntent& intent,
                   const core::Decision& decision, const core::Scheduling* scheduling,
                   double hoursPerMonth, std::ostream& out);
// One decision as a row of docs/decisions.md.
std::vector<std::string> markdownRow(const std::string& name, const core::WorkloadIntent& intent,
                                     const core::Decision& decision, const std::string& rationale);
// Where every table of prices ends: their region, date and overrides.
void printPriceBasis(const core::PlacementEngine& engine, std::ostream& out);
void printJsonOrYaml(const nlohmann::json& value, OutputFormat format, std::ostream& out);

}  // namespace gpuplacement::app
