#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cluster/kueue_flavors.h"
#include "core/decide/render.h"
#include "core/intent/workload.h"
#include "core/kinds/kueue_workload.h"

// The operator's part in Kueue's admission, as an admission check
// controller: Kueue decides when and against which quota (the flavor it
// reserved), the operator where within that flavor. It never writes the
// template of a target Kueue queues: its answer is the check's state on
// the Workload, whose podSetUpdates Kueue merges into the template when it
// starts the target and takes back when it evicts it. So nothing is
// undone behind the operator's back, and no key of the answer may differ
// from the flavor's nodeLabels (Kueue would fail the Workload).
namespace gpuplacement::core {

// The controllerName of the AdmissionChecks this operator answers for.
inline constexpr const char* kKueueCheckController = "gpuplacement.io/placement";

// What Kueue merges into one pod set's template at admission.
struct KueuePodSetUpdate {
  std::string podSet;
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;

  bool operator==(const KueuePodSetUpdate&) const = default;
};

struct AdmissionAnswer {
  std::string state;  // Ready or Retry
  std::string message;
  std::vector<KueuePodSetUpdate> updates;  // Ready only
  int requeueAfterSeconds = 0;             // Retry: how long Kueue waits before trying again

  bool operator==(const AdmissionAnswer&) const = default;
};

// What the placement needs of one Workload: the scheduling rendered for
// it and the pod sets it places (Kueue's pod set names).
struct AdmissionRequest {
  const KueueWorkload* workload = nullptr;
  std::string check;                       // the AdmissionCheck's name this operator answers for
  const Scheduling* scheduling = nullptr;  // null: no placement (unplaced says why)
  std::vector<std::string> podSets;
  std::string unplaced;  // why there is no placement, for Retry
  const std::map<std::string, ResourceFlavorView>* flavors = nullptr;
};

// The intent narrowed to what the flavor Kueue reserved reaches: its
// instance types (within the workload's own, where it names some) at the
// capacity type the flavor gives, so that the decision is made within
// it. Where nothing is left, nullopt and `why`, for the check's Retry.
std::optional<WorkloadIntent> intentWithinFlavor(WorkloadIntent intent, const FlavorReach& reach,
                                                 const std::string& flavor, std::string& why);

// The answer to give, or nullopt when there is none to give now: no quota
// reserved yet, the check already answered (Kueue sets it Pending again
// when it requeues the Workload), evicted or finished, or a flavor not
// known yet.
std::optional<AdmissionAnswer> answerAdmission(const AdmissionRequest& request);

// The server-side apply of the check's state onto the Workload's status
// (its admissionChecks list is keyed by name: only this check's entry is
// the operator's), at `now` (RFC 3339).
nlohmann::json admissionCheckApply(const KueueWorkload& workload, const std::string& namespace_,
                                   const std::string& check, const AdmissionAnswer& answer,
                                   const std::string& now);

// An AdmissionCheck (cluster-scoped): whose it is, and whether it says it
// is Active. Kueue keeps a ClusterQueue inactive while one of its checks
// is not.
struct AdmissionCheckView {
  std::string controllerName;
  bool active = false;  // condition Active=True

  bool operator==(const AdmissionCheckView&) const = default;
};

AdmissionCheckView admissionCheckFromJson(const nlohmann::json& object);

// The server-side apply that sets an AdmissionCheck of this operator's
// Active (its conditions list is keyed by type), at `now` (RFC 3339).
nlohmann::json admissionCheckActiveApply(const std::string& name, const std::string& now);

}  // namespace gpuplacement::core
