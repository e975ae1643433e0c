#pragma once

// The samples of config/samples/ (of this tree, or of the previous
// release's: e2e_Samples, e2e_Upgrade) applied to a simulated cluster as a
// team would, and what it takes for one to count as placed and Running.
#include <string>
#include <vector>

#include "support/cluster.h"

namespace gpuplacement::testing {

// One target the samples place: a GpuWorkload's, or with no GpuWorkload a
// team's Deployment that takes a share of a node by itself (mig-tenant.yaml).
struct SampleTarget {
  std::string ns;
  std::string name;
  std::string kind;         // Deployment, StatefulSet or Job
  bool placed = true;       // a GpuWorkload of mode Apply places it
  std::string runsOn = "";  // without a GpuWorkload: the instance type it selects
};

// The manifests, in the order a team applies them: the policy, the
// targets, then their GpuWorkloads; `samples` is a config/samples directory.
std::vector<std::string> sampleManifests(const std::string& samples);

// Every target of those manifests.
std::vector<SampleTarget> sampleTargets(const std::string& samples);

// Creates the namespaces and every document of the manifests.
void applySamples(Cluster& cluster, const std::string& samples);

// Why the target is not yet placed and Running, in words; empty once it is:
// a GpuWorkload of mode Apply says Placed and Applied, and Ready unless a
// finished Job; Recommend mode says Ready/Recommended; the target's pods,
// as many as its replicas (a Job: at least one), none terminating, Running
// (a Job's: Running or Succeeded) on nodes of the type its status names.
std::string notRunning(Cluster& cluster, const SampleTarget& target);

}  // namespace gpuplacement::testing
