#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/catalog/catalog.h"
#include "core/intent/workload.h"

namespace gpuplacement::app {

struct NamedIntent {
  std::string name;  // namespace/name from a manifest; empty for flags
  core::WorkloadIntent intent;
  std::string rationale;  // the manifest's gpuplacement.io/rationale annotation, if any
};

// Manifest annotations the command line reads (the operator ignores them):
// replicas for a what-if (over the target's, when the file holds it), and a
// line on why the answer is right, printed by -o markdown (docs/decisions.md).
inline constexpr const char* kReplicasAnnotation = "gpuplacement.io/replicas";
inline constexpr const char* kRationaleAnnotation = "gpuplacement.io/rationale";

// GpuWorkload manifests from a file (several documents allowed). Where the
// file also holds a GpuWorkload's target (a Deployment, StatefulSet or Job
// of that name and namespace), its replicas (a Job's parallelism) and its
// pod template's own cpu and memory requests count, as the operator counts
// them; other documents (Services, ConfigMaps) are not read. Errors name
// the document and the field.
// Replicas: a GpuWorkload's gpuplacement.io/replicas annotation, else
// `replicas` (--replicas, when given), else its target's, else 1.
base::Result<std::vector<NamedIntent>> intentsFromManifests(const std::string& path,
                                                            const core::Catalog& catalog,
                                                            std::optional<int> replicas);

}  // namespace gpuplacement::app
