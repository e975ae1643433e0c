#pragma once

#include <string>

#include "app/target_key.h"

namespace gpuplacement::app {

// Where each kind the operator reads or writes lives in the API: the one
// place that builds these paths. A collection's namespace empty means all
// namespaces (or a cluster-scoped kind).
std::string workloadsPath(const std::string& ns);
std::string workloadPath(const runtime::ObjectKey& workload);
std::string policiesPath();
std::string policyPath(const std::string& name);
std::string targetsPath(core::TargetKind kind, const std::string& ns);
std::string targetPath(const TargetKey& target);
// autoscaling/v2 HorizontalPodAutoscalers in one namespace ("": all).
std::string autoscalersPath(const std::string& ns);
std::string podPath(const runtime::ObjectKey& pod);
std::string eventsPath(const std::string& ns);
// Pods of every namespace: any pod on a node holds its room. Finished pods
// hold none, and no decision reads them: the server leaves them out (a pod
// that finishes arrives as a deletion), which in a cluster that runs Jobs
// is most of the pods there are.
std::string unfinishedPodsPath();
std::string nodesPath();
// Karpenter's NodePools (karpenter.sh/v1).
std::string nodePoolsPath();
std::string nodeOverlaysPath();
std::string ec2NodeClassesPath();
std::string nodeOverlayPath(const std::string& name);
// Dynamic Resource Allocation (resource.k8s.io/v1): ResourceSlices,
// ResourceClaims of every namespace, and one namespace's
// ResourceClaimTemplates.
std::string resourceSlicesPath();
std::string resourceClaimsPath();
std::string claimTemplatesPath(const std::string& ns);
std::string claimTemplatePath(const std::string& ns, const std::string& name);

// Kueue's (kueue.x-k8s.io/v1beta2): Workloads of one namespace ("": all),
// one Workload's status, ResourceFlavors, AdmissionChecks and one
// AdmissionCheck's status.
std::string kueueWorkloadsPath(const std::string& ns);
std::string kueueWorkloadStatusPath(const runtime::ObjectKey& workload);
std::string resourceFlavorsPath();
std::string admissionChecksPath();
std::string admissionCheckStatusPath(const std::string& name);

}  // namespace gpuplacement::app
