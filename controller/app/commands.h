#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "app/command_output.h"
#include "app/manifest_intents.h"
#include "app/placement_config.h"
#include "app/scenarios.h"
#include "app/workload_flags.h"
#include "base/result.h"
#include "core/cluster/what_if_cluster.h"
#include "core/explain/analysis.h"
#include "core/intent/workload.h"

namespace gpuplacement::app {

// The command line's commands, each given its parsed input (the flags in
// workload_flags.h, manifests in manifest_intents.h, scenario files in
// scenarios.h) and printing as command_output.h does. Each returns the
// process exit code (0 placed, 1 cannot place, 2 bad input).
// `cluster`: the shared nodes a what-if assumes (recommend --mig,
// --time-sliced); null: no cluster, every type of the catalog a candidate.
int runRecommend(const core::PlacementEngine& engine, const std::vector<NamedIntent>& intents,
                 const core::WhatIfCluster* cluster, OutputFormat format, std::ostream& out);
int runAnalyze(const core::PlacementEngine& engine, const core::WorkloadIntent& intent,
               const core::CurrentSetup& current, double hours, OutputFormat format,
               std::ostream& out, std::ostream& err);
int runCatalog(const core::PlacementEngine& engine, std::optional<core::Tier> tier,
               OutputFormat format, std::ostream& out);

}  // namespace gpuplacement::app
