#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/types.h"
#include "core/decide/render.h"
#include "core/kinds/target.h"

namespace gpuplacement::core {

// Where the node selector and tolerations go on this target (never Auto).
// A Job's always go in its template (it is placed before any pod exists).
// Under Auto: the pod template, until an entry the operator set in
// either field is taken back, and at the pods from then on. The two fields
// are atomic for server-side apply, and client-side apply replaces the
// tolerations whole, so a GitOps tool re-applying a manifest that sets its
// own takes back every entry the operator added, on every sync; at the pods
// they survive. Targets that no apply touches that way (most) keep their
// placement in the template, and their pods never wait for the operator.
PlaceAt resolvePlaceAt(PlaceAt setting, const TargetState& live);

// What to send to make a target carry `desired` (or, for nullptr, carry
// nothing of ours), touching only what the operator owns.
struct PatchPlan {
  // A strategic merge patch with a resourceVersion precondition; empty when
  // the target already matches.
  std::optional<nlohmann::json> patch;
  OwnedFields owned;  // the ownership record after the patch
  // The pod-template fields the patch sets or removes ("spec.template.spec.
  // tolerations"), to name what was put back when someone took it.
  std::vector<std::string> fields;
  // The patch changes containers' resources: what a suspended Job's
  // template allows only from Kubernetes 1.36 (KEP-5440).
  bool resourcesChanged = false;
  // The patch only resumes the target, its templates and record as they
  // are: the write of its own that resumes a kind resumed apart (a
  // TrainJob), which puts nothing back.
  bool resumesOnly = false;
  // Fields the user set that the placement would overwrite. When any, no
  // patch is planned: nothing is half-applied.
  std::vector<std::string> conflicts;
  std::string error;  // e.g. a named container that does not exist

  bool blocked() const { return !conflicts.empty() || !error.empty(); }
};

struct PatchRequest {
  const Scheduling* desired = nullptr;   // null: take everything of ours back
  std::vector<std::string> containers;   // that get the devices; empty: the first
  std::string workload;                  // the GpuWorkload placing it
  std::string resourceVersion;           // the precondition
  PlaceAt where = PlaceAt::PodTemplate;  // PodTemplate or Pods (resolvePlaceAt)
  // A Job: set spec.suspend false in the same patch, so that its first pod
  // is created from the placed template (the KEP-2926 advice: change the
  // directives and resume in one call).
  bool start = false;
  // The pod sets to place (spec.targetRef.podSets); empty: the kind's
  // default, those that carry the model (core/kinds/pod_sets.h).
  std::vector<std::string> podSets;
  // The size the target's groups are to have, written beside the placement
  // (spec.scaling.groupSize: Set; kinds written by JSON patch: core/plan/
  // group_size_patch.h); 0: the team's, and a size the operator wrote goes.
  std::int32_t groupSize = 0;
};

// Whether another GpuWorkload's record is on the target: an error when
// we would place it, nothing to do when we would clear it.
bool ownedByAnother(const OwnedFields& owned, const std::string& workload);

// The container that gets the devices: the first named, or the template's
// first ("" when it has none).
std::string deviceContainer(const TargetState& live, const std::vector<std::string>& containers);

// A template that can no longer change (a Job that has started) is only
// released: its ownership record goes, the fields stay with the pods that
// run them.
PatchPlan planTemplatePatch(const TargetState& live, const PatchRequest& request);

}  // namespace gpuplacement::core
