#pragma once

// What the suites that talk to a control plane share: the suite's cluster
// (the shared control plane, this project's CRDs installed) and the API
// paths of the kinds they create and read.
#include <string>

#include "support/cluster.h"

namespace gpuplacement::testing {

inline Cluster& cluster() {
  return Cluster::withCrds();
}

// Collections when `name` is empty.
inline std::string workloadPath(const std::string& ns, const std::string& name = "") {
  return Cluster::pathOf("gpuplacement.io/v1alpha1", "GpuWorkload", ns, name);
}
inline std::string deploymentPath(const std::string& ns, const std::string& name = "") {
  return Cluster::pathOf("apps/v1", "Deployment", ns, name);
}
inline std::string statefulSetPath(const std::string& ns, const std::string& name = "") {
  return Cluster::pathOf("apps/v1", "StatefulSet", ns, name);
}
inline std::string jobPath(const std::string& ns, const std::string& name = "") {
  return Cluster::pathOf("batch/v1", "Job", ns, name);
}

// The condition `type` of the object at `path`, as Cluster::conditionOf
// gives it.
inline std::string conditionText(const std::string& path, const std::string& type) {
  return cluster().conditionOf(path, type);
}

}  // namespace gpuplacement::testing
