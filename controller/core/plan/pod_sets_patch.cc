#include "core/plan/pod_sets_patch.h"

#include <algorithm>

#include "core/kinds/kind_adapter.h"
#include "core/kinds/ownership.h"
#include "core/kinds/pod_sets.h"
#include "core/kinds/strategic_merge.h"
#include "core/plan/group_size_patch.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

bool contains(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

// RFC 6901: '~' and '/' in a member name.
std::string escapePointer(const std::string& name) {
  std::string escaped;
  for (const char c : name) {
    if (c == '~') {
      escaped += "~0";
    } else if (c == '/') {
      escaped += "~1";
    } else {
      escaped += c;
    }
  }
  return escaped;
}

// The owned fields of one pod set's plan folded into the record of all:
// the placement is the same in each, so the record is their union.
void fold(OwnedFields& into, const OwnedFields& from) {
  into.workload = from.workload;
  into.nodeSelector.insert(from.nodeSelector.begin(), from.nodeSelector.end());
  for (const auto& toleration : from.tolerations) {
    if (std::find(into.tolerations.begin(), into.tolerations.end(), toleration) ==
        into.tolerations.end()) {
      into.tolerations.push_back(toleration);
    }
  }
  for (const auto& [container, resources] : from.resources) {
    into.resources[container].insert(resources.begin(), resources.end());
  }
  if (into.spreadKey.empty()) {
    into.spreadKey = from.spreadKey;
  }
  if (into.zoneGroup.empty()) {
    into.zoneGroup = from.zoneGroup;
  }
  if (into.networkDomainKey.empty()) {
    into.networkDomainKey = from.networkDomainKey;
  }
  if (!into.pods) {
    into.pods = from.pods;
  }
  if (into.claimTemplate.empty()) {
    into.claimTemplate = from.claimTemplate;
    into.claimContainer = from.claimContainer;
  }
}

// The JSON patch operations that turn one pod set's template into what its
// strategic merge patch would make of it, as its kind writes them; an
// error when the kind cannot carry the change.
std::string addTemplateOps(const TargetState& live, std::size_t index, const json& patch,
                           json& ops) {
  const auto& fragment = patch.contains("spec") ? patch["spec"].value("template", json()) : json();
  if (!fragment.is_object() || fragment.empty()) {
    return "";
  }
  const auto& raw = live.podSetTemplates.size() == live.podSets.size()
                        ? live.podSetTemplates[index].raw
                        : live.raw;
  const json before = raw.is_object() ? raw : json::object();
  return adapterOf(live.kind).templateOps(live, index, before, mergePodTemplate(before, fragment),
                                          ops);
}

// The ownership record's operation, when it changes.
void addRecordOp(const TargetState& live, const OwnedFields& owned, json& ops) {
  const std::string key = escapePointer(kOwnedFieldsAnnotation);
  if (owned.empty()) {
    if (live.ownership.form != OwnershipRecord::Form::Absent) {
      ops.push_back({{"op", "remove"}, {"path", "/metadata/annotations/" + key}});
    }
    return;
  }
  const auto text = serializeOwnedFields(owned);
  if (live.annotated) {
    ops.push_back({{"op", "add"}, {"path", "/metadata/annotations/" + key}, {"value", text}});
  } else {
    ops.push_back({{"op", "add"},
                   {"path", "/metadata/annotations"},
                   {"value", {{kOwnedFieldsAnnotation, text}}}});
  }
}

}  // namespace

PatchPlan planPodSetsPatch(const TargetState& live, const PatchRequest& request) {
  if (traitsOf(live.kind).write == WriteMethod::StrategicMerge) {
    if (!request.podSets.empty()) {
      if (auto placed = placedPodSets(live, request.podSets); !placed.error.empty()) {
        PatchPlan plan;
        plan.error = std::move(placed.error);
        return plan;
      }
    }
    return planTemplatePatch(live, request);
  }
  PatchPlan plan;
  if (ownedByAnother(live.ownership.fields, request.workload)) {
    if (request.desired) {
      plan.error = "the " + std::string(base::nameOf(live.kind)) +
                   " is already placed by GpuWorkload " + live.ownership.fields.workload;
    }
    return plan;  // another's record stays as it is
  }
  const auto placed = placedPodSets(live, request.podSets);
  if (!placed.error.empty()) {
    plan.error = placed.error;
    return plan;
  }
  const OwnedFields& before = live.ownership.fields;
  json ops = json::array();
  bool anyPlaced = false;
  for (std::size_t i = 0; i < live.podSets.size(); ++i) {
    const auto& podSet = live.podSets[i];
    const bool place = request.desired && std::find(placed.indexes.begin(), placed.indexes.end(),
                                                    i) != placed.indexes.end();
    if (!place && !contains(before.podSets, podSet.name)) {
      continue;  // never ours: not touched
    }
    PatchRequest one = request;
    one.desired = place ? request.desired : nullptr;
    one.start = false;
    const TargetState view = podSetView(live, i);
    PatchPlan part = planTemplatePatch(view, one);
    for (auto& conflict : part.conflicts) {
      plan.conflicts.push_back("pod set " + podSet.name + ": " + conflict);
    }
    if (!part.error.empty() && plan.error.empty()) {
      plan.error = "pod set " + podSet.name + ": " + part.error;
    }
    for (const auto& field : part.fields) {
      plan.fields.push_back(adapterOf(live.kind).fieldOf(live, i, field));
    }
    plan.resourcesChanged = plan.resourcesChanged || part.resourcesChanged;
    if (place) {
      fold(plan.owned, part.owned);
      anyPlaced = anyPlaced || !part.owned.empty();
      plan.owned.podSets.push_back(podSet.name);
    }
    if (part.patch && !part.blocked()) {
      if (auto error = addTemplateOps(live, i, *part.patch, ops);
          !error.empty() && plan.error.empty()) {
        plan.error = "pod set " + podSet.name + ": " + error;
      }
    }
  }
  if (plan.blocked()) {
    plan.owned = OwnedFields{};
    return plan;
  }
  if (!anyPlaced) {
    plan.owned = OwnedFields{};  // nothing of ours left: the record goes
  }
  if (live.templateMutable()) {
    // A run that has started keeps the size it runs with, as it keeps its
    // templates.
    auto size = planGroupSize(live, request.desired ? request.groupSize : 0);
    for (auto& op : size.ops) {
      ops.push_back(std::move(op));
    }
    plan.fields.insert(plan.fields.end(), size.fields.begin(), size.fields.end());
    plan.owned.groupSize = std::move(size.owned);
  }
  plan.owned.workload = request.workload;
  const bool recorded = live.ownership.form != OwnershipRecord::Form::Absent;
  const bool recordChanged = plan.owned.empty() ? recorded : !(plan.owned == before) || !recorded;
  // Resumed in the same write that places it, as a Job is: its first pods
  // are made from the placed templates. A kind resumed apart is resumed by
  // the next write, once its templates carry the placement.
  const auto& traits = traitsOf(live.kind);
  const auto suspend = traits.suspendPointer;
  const bool start = request.start && request.desired && !suspend.empty() && live.job.suspended &&
                     !plan.blocked() && (!traits.resumedApart || ops.empty());
  if (start) {
    plan.resumesOnly = ops.empty() && !recordChanged;
    ops.push_back({{"op", "replace"}, {"path", std::string(suspend)}, {"value", false}});
  }
  if (ops.empty() && !recordChanged) {
    return plan;
  }
  json patch = json::array();
  // The object as read, or a 409 Conflict: the precondition a strategic
  // merge patch states with metadata.resourceVersion.
  patch.push_back({{"op", "replace"},
                   {"path", "/metadata/resourceVersion"},
                   {"value", request.resourceVersion}});
  if (recordChanged) {
    addRecordOp(live, plan.owned, patch);
  }
  for (auto& op : ops) {
    patch.push_back(std::move(op));
  }
  plan.patch = std::move(patch);
  return plan;
}

}  // namespace gpuplacement::core
