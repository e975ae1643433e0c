#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/catalog/catalog.h"
#include "core/cluster/what_if_cluster.h"
#include "core/intent/workload.h"

namespace gpuplacement::app {

// The workload as flags; values as in the CRD, case-insensitive.
struct WorkloadFlags {
  std::string kind;
  std::string parameters;
  std::string precision = "fp16";
  std::string framework = "PyTorch";
  std::string architecture;     // empty: the family's, else Transformer
  std::string family;           // a model family of the catalog: its shape (and parameters)
  int contextTokens = 0;        // a serving load: tokens per sequence, prompt and output
  int concurrentSequences = 1;  // ... and sequences in flight per replica
  std::string kvPrecision = "fp16";
  double tokensPerSecond = 0;    // a throughput target across replicas
  double requestsPerSecond = 0;  // ... or one in requests, of these mean lengths
  int meanPromptTokens = 0;
  int meanOutputTokens = 0;
  std::optional<double> latencyMs;
  std::string objective = "Balanced";
  std::vector<std::string> tiers;
  std::optional<double> maxHourlyCost;
  std::string capacity = "OnDemand";
  std::string sharing = "Auto";
  int replicas = 1;
  // The target's pods form groups of this many, each running one replica
  // across nodes (a LeaderWorkerSet, JobSet or Ray cluster); 0: groups whose
  // size the placement says. Unset: each pod is a replica.
  std::optional<int> groupSize;
  std::vector<std::string> instanceTypes;
  std::vector<std::string> excludedInstanceTypes;

  // Errors name the flag: "--objective: \"fast\" is not a valid objective ...".
  base::Result<core::WorkloadIntent> toIntent(const core::Catalog& catalog) const;
  base::Result<core::ServingLoad> servingLoad() const;
};

// The shared nodes `recommend --mig TYPE=PROFILE:N[+PROFILE:N]` and
// `--time-sliced TYPE=WAYS` say stand (core/cluster/what_if_cluster.h); errors
// name the flag and the form it takes.
base::Result<std::vector<core::SharedNodeSpec>> sharedNodesFromFlags(
    const std::vector<std::string>& mig, const std::vector<std::string>& timeSliced);

// A flag's value as one of the CRD's enum values; errors name the flag.
template <typename E>
base::Result<E> enumFlag(const std::string& flag, const std::string& value) {
  auto parsed = core::parseEnum<E>(value);
  if (!parsed) {
    return base::Error{flag, parsed.error().message};
  }
  return parsed;
}

}  // namespace gpuplacement::app
