#include "app/resource_paths.h"

namespace gpuplacement::app {
namespace {

constexpr const char* kGroupVersion = "/apis/gpuplacement.io/v1alpha1";

std::string scope(const std::string& ns) {
  return ns.empty() ? std::string() : "/namespaces/" + ns;
}

}  // namespace

std::string workloadsPath(const std::string& ns) {
  return kGroupVersion + scope(ns) + "/gpuworkloads";
}

std::string workloadPath(const runtime::ObjectKey& workload) {
  return workloadsPath(workload.ns) + "/" + workload.name;
}

std::string policiesPath() {
  return std::string(kGroupVersion) + "/placementpolicies";
}

std::string policyPath(const std::string& name) {
  return policiesPath() + "/" + name;
}

std::string targetsPath(core::TargetKind kind, const std::string& ns) {
  return "/apis/" + std::string(core::apiVersionOf(kind)) + scope(ns) + "/" +
         std::string(core::resourceOf(kind));
}

std::string targetPath(const TargetKey& target) {
  return targetsPath(target.kind, target.object.ns) + "/" + target.object.name;
}

std::string podPath(const runtime::ObjectKey& pod) {
  return "/api/v1" + scope(pod.ns) + "/pods/" + pod.name;
}

std::string eventsPath(const std::string& ns) {
  return "/api/v1" + scope(ns) + "/events";
}

std::string unfinishedPodsPath() {
  return "/api/v1/pods?fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed";
}

std::string nodesPath() {
  return "/api/v1/nodes";
}

std::string nodePoolsPath() {
  return "/apis/karpenter.sh/v1/nodepools";
}

}  // namespace gpuplacement::app
