// The API paths, built in one place: namespaced and across namespaces.
#include "app/resource_paths.h"

#include <doctest/doctest.h>

namespace gpuplacement::app {
namespace {

TEST_CASE("each kind's path, in a namespace and across them") {
  using core::TargetKind;
  const struct {
    std::string got;
    const char* expected;
  } rows[] = {
      {workloadsPath(""), "/apis/gpuplacement.io/v1alpha1/gpuworkloads"},
      {workloadsPath("ml"), "/apis/gpuplacement.io/v1alpha1/namespaces/ml/gpuworkloads"},
      {workloadPath({"ml", "chat"}),
       "/apis/gpuplacement.io/v1alpha1/namespaces/ml/gpuworkloads/chat"},
      {policiesPath(), "/apis/gpuplacement.io/v1alpha1/placementpolicies"},
      {policyPath("default"), "/apis/gpuplacement.io/v1alpha1/placementpolicies/default"},
      {targetsPath(TargetKind::Deployment, ""), "/apis/apps/v1/deployments"},
      {targetsPath(TargetKind::Job, "ml"), "/apis/batch/v1/namespaces/ml/jobs"},
      {targetPath({TargetKind::StatefulSet, {"ml", "db"}}),
       "/apis/apps/v1/namespaces/ml/statefulsets/db"},
      {podPath({"ml", "chat-0"}), "/api/v1/namespaces/ml/pods/chat-0"},
      {eventsPath("ml"), "/api/v1/namespaces/ml/events"},
      {nodesPath(), "/api/v1/nodes"},
      {nodePoolsPath(), "/apis/karpenter.sh/v1/nodepools"},
  };
  for (const auto& row : rows) {
    CHECK(row.got == row.expected);
  }
  // Finished pods hold no room: the watch leaves them out.
  CHECK(unfinishedPodsPath().find("fieldSelector=status.phase%21%3DSucceeded") !=
        std::string::npos);
}

}  // namespace
}  // namespace gpuplacement::app
