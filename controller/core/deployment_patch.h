#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/deployment.h"
#include "core/render.h"
#include "core/types.h"

namespace gpuplacement::core {

// Where the node selector and tolerations go on this Deployment (never
// Auto). Under Auto: the pod template, until an entry the operator set in
// either field is taken back, and at the pods from then on. The two fields
// are atomic for server-side apply, and client-side apply replaces the
// tolerations whole, so a GitOps tool re-applying a manifest that sets its
// own takes back every entry the operator added, on every sync; at the pods
// they survive. Deployments that no apply touches that way (most) keep
// their placement in the template, and their pods never wait for the
// operator.
PlaceAt resolvePlaceAt(PlaceAt setting, const DeploymentState& live);

// What to send to make a Deployment carry `desired` (or, for nullptr,
// carry nothing of ours), touching only what the operator owns.
struct PatchPlan {
  // A strategic merge patch with a resourceVersion precondition; empty when
  // the Deployment already matches.
  std::optional<nlohmann::json> patch;
  OwnedFields owned;  // the ownership record after the patch
  // The pod-template fields the patch sets or removes ("spec.template.spec.
  // tolerations"), to name what was put back when someone took it.
  std::vector<std::string> fields;
  // Fields the user set that the placement would overwrite. When any, no
  // patch is planned: nothing is half-applied.
  std::vector<std::string> conflicts;
  std::string error;  // e.g. a named container that does not exist

  bool blocked() const { return !conflicts.empty() || !error.empty(); }
};

// `where` is PodTemplate or Pods (resolvePlaceAt), ignored when releasing.
PatchPlan planDeploymentPatch(const DeploymentState& live, const Scheduling* desired,
                              const std::vector<std::string>& containers,
                              const std::string& workload, const std::string& resourceVersion,
                              PlaceAt where = PlaceAt::PodTemplate);

}  // namespace gpuplacement::core
