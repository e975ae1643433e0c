#include "app/resource_paths.h"

#include <initializer_list>
#include <string_view>

namespace gpuplacement::app {
namespace {

constexpr std::string_view kGroupVersion = "/apis/gpuplacement.io/v1alpha1";

// Appended piece by piece: g++ 12 at -O2 takes `std::string(a) + b` for an
// out-of-bounds copy (-Warray-bounds, GCC bug 105329).
std::string joined(std::initializer_list<std::string_view> parts) {
  std::string path;
  for (const auto part : parts) {
    path += part;
  }
  return path;
}

std::string scope(const std::string& ns) {
  return ns.empty() ? std::string() : joined({"/namespaces/", ns});
}

}  // namespace

std::string workloadsPath(const std::string& ns) {
  return joined({kGroupVersion, scope(ns), "/gpuworkloads"});
}

std::string workloadPath(const runtime::ObjectKey& workload) {
  return joined({workloadsPath(workload.ns), "/", workload.name});
}

std::string policiesPath() {
  return joined({kGroupVersion, "/placementpolicies"});
}

std::string policyPath(const std::string& name) {
  return joined({policiesPath(), "/", name});
}

std::string targetsPath(core::TargetKind kind, const std::string& ns) {
  return joined({"/apis/", core::apiVersionOf(kind), scope(ns), "/", core::resourceOf(kind)});
}

std::string targetPath(const TargetKey& target) {
  return joined({targetsPath(target.kind, target.object.ns), "/", target.object.name});
}

std::string autoscalersPath(const std::string& ns) {
  return joined({"/apis/autoscaling/v2", scope(ns), "/horizontalpodautoscalers"});
}

std::string podPath(const runtime::ObjectKey& pod) {
  return joined({"/api/v1", scope(pod.ns), "/pods/", pod.name});
}

std::string eventsPath(const std::string& ns) {
  return joined({"/api/v1", scope(ns), "/events"});
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

std::string ec2NodeClassesPath() {
  return "/apis/karpenter.k8s.aws/v1/ec2nodeclasses";
}

std::string nodeOverlaysPath() {
  return "/apis/karpenter.sh/v1alpha1/nodeoverlays";
}

std::string nodeOverlayPath(const std::string& name) {
  return joined({nodeOverlaysPath(), "/", name});
}

std::string resourceSlicesPath() {
  return "/apis/resource.k8s.io/v1/resourceslices";
}

std::string resourceClaimsPath() {
  return "/apis/resource.k8s.io/v1/resourceclaims";
}

std::string claimTemplatesPath(const std::string& ns) {
  return "/apis/resource.k8s.io/v1/namespaces/" + ns + "/resourceclaimtemplates";
}

std::string claimTemplatePath(const std::string& ns, const std::string& name) {
  return claimTemplatesPath(ns) + "/" + name;
}

constexpr std::string_view kKueue = "/apis/kueue.x-k8s.io/v1beta2";

std::string kueueWorkloadsPath(const std::string& ns) {
  return joined({kKueue, scope(ns), "/workloads"});
}

std::string kueueWorkloadStatusPath(const runtime::ObjectKey& workload) {
  return joined({kueueWorkloadsPath(workload.ns), "/", workload.name, "/status"});
}

std::string resourceFlavorsPath() {
  return joined({kKueue, "/resourceflavors"});
}

std::string admissionChecksPath() {
  return joined({kKueue, "/admissionchecks"});
}

std::string admissionCheckStatusPath(const std::string& name) {
  return joined({admissionChecksPath(), "/", name, "/status"});
}

}  // namespace gpuplacement::app
