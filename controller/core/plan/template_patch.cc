#include "core/plan/template_patch.h"

#include <algorithm>
#include <set>

#include "core/plan/template_claims.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

bool contains(const std::vector<Toleration>& list, const Toleration& toleration) {
  return std::find(list.begin(), list.end(), toleration) != list.end();
}

const ContainerResources* findContainer(const TargetState& live, const std::string& name) {
  for (const auto& container : live.containers) {
    if (container.name == name) {
      return &container;
    }
  }
  return nullptr;
}

std::string lookup(const std::map<std::string, std::string>& map, const std::string& key) {
  const auto it = map.find(key);
  return it == map.end() ? "" : it->second;
}

// The team's own tolerations: the template's, less those the record says
// the operator added.
std::vector<Toleration> teamTolerations(const TargetState& live, const OwnedFields& owned) {
  std::vector<Toleration> users;
  for (const auto& toleration : live.tolerations) {
    if (!contains(owned.tolerations, toleration)) {
      users.push_back(toleration);
    }
  }
  return users;
}

// Whether a node-selector entry or a toleration the record says the
// operator set in the template is gone from it: taken back.
bool atomicFieldsTakenBack(const TargetState& live, const OwnedFields& owned) {
  const bool selector =
      std::any_of(owned.nodeSelector.begin(), owned.nodeSelector.end(), [&live](const auto& entry) {
        return lookup(live.nodeSelector, entry.first) != entry.second;
      });
  const bool tolerations = std::any_of(
      owned.tolerations.begin(), owned.tolerations.end(),
      [&live](const Toleration& toleration) { return !contains(live.tolerations, toleration); });
  return selector || tolerations;
}

// The node selector: a map merged key by key; null removes a key. With
// `pods`, what the placement adds goes there instead of the template.
json planSelector(const TargetState& live, const Scheduling* desired, const OwnedFields& owned,
                  PatchPlan& plan, PodScheduling* pods) {
  json patch = json::object();
  if (desired) {
    for (const auto& [key, value] : desired->nodeSelector) {
      const auto current = live.nodeSelector.find(key);
      const bool ours = owned.nodeSelector.count(key) > 0;
      if (!ours && current != live.nodeSelector.end()) {
        if (current->second != value) {
          plan.conflicts.push_back("nodeSelector " + key + "=" + current->second +
                                   " is set on the " + std::string(base::nameOf(live.kind)) +
                                   "; the placement needs " + value);
        }
        continue;  // the user's own, identical: leave it theirs
      }
      if (pods) {
        if (ours && current != live.nodeSelector.end() &&
            current->second != owned.nodeSelector.at(key)) {
          // The operator's key, rewritten since by someone else (the same
          // apply that took the field): theirs now, and not the placement's.
          plan.conflicts.push_back("nodeSelector " + key + "=" + current->second +
                                   " is set on the " + std::string(base::nameOf(live.kind)) +
                                   "; the placement needs " + value);
          continue;
        }
        pods->nodeSelector[key] = value;
        continue;
      }
      if (current == live.nodeSelector.end() || current->second != value) {
        patch[key] = value;
      }
      plan.owned.nodeSelector[key] = value;
    }
  }
  for (const auto& [key, value] : owned.nodeSelector) {
    // Remove what we set and no longer want, unless someone has changed it.
    if (!plan.owned.nodeSelector.count(key) && lookup(live.nodeSelector, key) == value) {
      patch[key] = nullptr;
    }
  }
  return patch;
}

// The tolerations: an atomic list, replaced whole; the user's entries are
// carried over untouched and in order. nullopt when unchanged; null when
// nothing is left.
std::optional<json> planTolerations(const TargetState& live, const Scheduling* desired,
                                    const OwnedFields& owned, PatchPlan& plan,
                                    PodScheduling* pods) {
  const std::vector<Toleration> users = teamTolerations(live, owned);
  std::vector<Toleration> next = users;
  if (desired) {
    for (const auto& toleration : desired->tolerations) {
      if (contains(users, toleration)) {
        continue;  // the user tolerates it already
      }
      if (pods) {
        pods->tolerations.push_back(toleration);
      } else {
        next.push_back(toleration);
        plan.owned.tolerations.push_back(toleration);
      }
    }
  }
  if (next == live.tolerations) {
    return std::nullopt;
  }
  if (next.empty()) {
    return json(nullptr);
  }
  json list = json::array();
  for (const auto& toleration : next) {
    list.push_back(tolerationToJson(toleration));
  }
  return list;
}

// The even spread over capacity types of a Mixed placement: one entry of
// a list the API server merges by topologyKey, so the team's own entries
// stand. A team's own entry over the same key stands too: it already
// spreads the replicas over capacity types, and is theirs to tune.
std::optional<json> planSpread(const TargetState& live, const Scheduling* desired,
                               const OwnedFields& owned, PatchPlan& plan) {
  const auto present = [&live](const std::string& key) {
    return std::find(live.spreadKeys.begin(), live.spreadKeys.end(), key) != live.spreadKeys.end();
  };
  json list = json::array();
  const std::string want = desired ? desired->spreadKey : "";
  if (!want.empty() && live.podLabels.empty()) {
    // An empty selector would count every pod of the namespace.
    plan.error = "the " + std::string(base::nameOf(live.kind)) +
                 "'s pods carry no labels for a spread over capacity types to count them by";
    return std::nullopt;
  }
  if (!want.empty() && (owned.spreadKey == want || !present(want))) {
    plan.owned.spreadKey = want;
    if (!present(want)) {
      json entry = {{"maxSkew", 1},
                    {"topologyKey", want},
                    {"whenUnsatisfiable", "DoNotSchedule"},
                    // Counted as 0 while only one capacity type has nodes,
                    // so the first nodes of one do not take every replica.
                    {"minDomains", 2},
                    {"labelSelector", {{"matchLabels", live.podLabels}}}};
      if (const auto label = traitsOf(live.kind).podRevisionLabel; !label.empty()) {
        entry["matchLabelKeys"] = json::array({label});  // this rollout's pods only
      }
      list.push_back(std::move(entry));
    }
  }
  if (!owned.spreadKey.empty() && owned.spreadKey != plan.owned.spreadKey &&
      present(owned.spreadKey)) {
    list.push_back({{"$patch", "delete"}, {"topologyKey", owned.spreadKey}});
  }
  return list.empty() ? std::nullopt : std::optional<json>(std::move(list));
}

// The required pod affinity that keeps a group's pods in one zone, or
// (`topologyKey` another) the term of a preferred one. The API server
// adds each pod's value of the group label to its selector when the pod
// is made; the first pod of a group matches its own term, so it may go
// anywhere.
json groupAffinityTerm(const GroupLabels& labels, const std::string& topologyKey) {
  return {{"labelSelector",
           {{"matchExpressions", json::array({{{"key", labels.member}, {"operator", "Exists"}}})}}},
          {"matchLabelKeys", json::array({labels.group})},
          {"topologyKey", topologyKey}};
}

json nearAffinityTerm(const GroupLabels& labels, const std::string& topologyKey) {
  return {{"weight", 100}, {"podAffinityTerm", groupAffinityTerm(labels, topologyKey)}};
}

// The template's spec.affinity.podAffinity list `name`, or null.
const json* podAffinityList(const TargetState& live, const char* name) {
  const json& raw = live.raw;
  if (!raw.is_object()) {
    return nullptr;
  }
  const auto spec = raw.find("spec");
  if (spec == raw.end() || !spec->is_object()) {
    return nullptr;
  }
  const auto affinity = spec->find("affinity");
  if (affinity == spec->end() || !affinity->is_object()) {
    return nullptr;
  }
  const auto pod = affinity->find("podAffinity");
  if (pod == affinity->end() || !pod->is_object()) {
    return nullptr;
  }
  const auto list = pod->find(name);
  return list != pod->end() && list->is_array() ? &*list : nullptr;
}

// A pod affinity list with our term replaced: `ours` (null: none) taken
// out unless it is `wanted`, `wanted` (null: none) added where it is not
// there, the team's terms carried over untouched and in order. A team's
// own term identical to ours stays theirs, as a spread over the same key
// does: taking ours back later must not take it, so `claimed` is whether
// the wanted term is ours after this.
struct TermsChange {
  json next = json::array();
  bool present = false;  // the wanted term was there already
  bool claimed = false;
};

TermsChange replaceOurTerm(const json* terms, const json& ours, const json& wanted,
                           bool wantedIsOurs) {
  TermsChange change;
  for (const auto& term : terms ? *terms : json::array()) {
    if (!ours.is_null() && term == ours && term != wanted) {
      continue;  // ours, no longer wanted
    }
    change.present = change.present || (!wanted.is_null() && term == wanted);
    change.next.push_back(term);
  }
  change.claimed = !wanted.is_null() && (wantedIsOurs || !change.present);
  return change;
}

// nullopt when `next` is what the template has; null when nothing is left.
std::optional<json> listPatch(const json* terms, json next) {
  if (terms ? next == *terms : next.empty()) {
    return std::nullopt;
  }
  return next.empty() ? json(nullptr) : std::move(next);
}

// A group across nodes kept in one zone: the required pod affinity terms,
// an atomic list replaced whole. Only in the template (a pod's affinity
// cannot be added once it is made), and only for kinds written by JSON
// patch, whose template is kept as stored (the kinds that form groups).
std::optional<json> planZoneAffinity(const TargetState& live, const Scheduling* desired,
                                     const OwnedFields& owned, PatchPlan& plan, bool atPods) {
  const GroupLabels want = desired && !atPods ? desired->zoneGroup : GroupLabels{};
  if (want.empty() && owned.zoneGroup.empty()) {
    return std::nullopt;
  }
  const auto* terms = podAffinityList(live, "requiredDuringSchedulingIgnoredDuringExecution");
  const json ours =
      owned.zoneGroup.empty() ? json() : groupAffinityTerm(owned.zoneGroup, kZoneLabel);
  const json wanted = want.empty() ? json() : groupAffinityTerm(want, kZoneLabel);
  auto change = replaceOurTerm(terms, ours, wanted, owned.zoneGroup == want);
  if (change.claimed) {
    plan.owned.zoneGroup = want;
    if (!change.present) {
      change.next.push_back(wanted);
    }
  }
  return listPatch(terms, std::move(change.next));
}

// ... and, where the cluster's nodes say where they sit in the network,
// the preferred term that asks its pods to share the nearest domain.
// Added only beside other changes (`writing`): a preference is not worth
// rolling every group over when a node's label first shows it.
std::optional<json> planNearAffinity(const TargetState& live, const Scheduling* desired,
                                     const OwnedFields& owned, PatchPlan& plan, bool atPods,
                                     bool writing) {
  const bool wants =
      desired && !atPods && !desired->zoneGroup.empty() && !desired->networkDomainKey.empty();
  const GroupLabels labels = wants ? desired->zoneGroup : GroupLabels{};
  const std::string key = wants ? desired->networkDomainKey : "";
  const bool ownsOne = !owned.networkDomainKey.empty() && !owned.zoneGroup.empty();
  if (!wants && !ownsOne) {
    return std::nullopt;
  }
  const auto* terms = podAffinityList(live, "preferredDuringSchedulingIgnoredDuringExecution");
  const json ours = ownsOne ? nearAffinityTerm(owned.zoneGroup, owned.networkDomainKey) : json();
  const json wanted = wants ? nearAffinityTerm(labels, key) : json();
  auto change = replaceOurTerm(terms, ours, wanted, ownsOne && ours == wanted && ours.is_object());
  if (change.claimed && (change.present || writing)) {
    plan.owned.networkDomainKey = key;
    if (!change.present) {
      change.next.push_back(wanted);
    }
  }
  return listPatch(terms, std::move(change.next));
}

using ContainerPatches = std::map<std::string, json>;

void setRequestAndLimit(ContainerPatches& patches, const std::string& container,
                        const std::string& name, const json& value) {
  auto& patch = patches[container];
  patch["limits"][name] = value;
  patch["requests"][name] = value;
}

bool nvidiaDevice(const std::string& resource) {
  return resource == "nvidia.com/gpu" || resource == "nvidia.com/gpu.shared" ||
         !migProfileOf(resource).empty();
}

// A team's own NVIDIA device of another kind than the placement's (whole
// GPUs beside a MIG slice, or a slice beside whole GPUs): the pod would
// ask for both, and no node gives both.
void conflictingGpus(const TargetState& live, const Scheduling& desired,
                     const ContainerResources& container,
                     const std::map<std::string, std::string>* owned, PatchPlan& plan) {
  const bool placesGpus = std::any_of(desired.resources.begin(), desired.resources.end(),
                                      [](const auto& entry) { return nvidiaDevice(entry.first); });
  if (!placesGpus) {
    return;
  }
  std::set<std::string> teams;
  for (const auto* asked : {&container.limits, &container.requests}) {
    for (const auto& [resource, value] : *asked) {
      if (nvidiaDevice(resource) && !desired.resources.count(resource) &&
          !(owned && owned->count(resource))) {
        teams.insert(resource + "=" + value);
      }
    }
  }
  for (const auto& team : teams) {
    std::string wanted;
    for (const auto& [resource, value] : desired.resources) {
      if (nvidiaDevice(resource)) {
        wanted = resource + "=" + value;
      }
    }
    plan.conflicts.push_back("containers[" + container.name + "].resources " + team +
                             " is set on the " + std::string(base::nameOf(live.kind)) +
                             "; the placement needs " + wanted + " instead");
  }
}

// The resources we want, per container: requests and limits alike, and
// the requests that go unlimited (a GPU replica's host memory).
void planWantedResources(const TargetState& live, const Scheduling& desired,
                         const std::vector<std::string>& targets, const OwnedFields& owned,
                         ContainerPatches& patches, PatchPlan& plan) {
  for (const auto& name : targets) {
    const auto* container = findContainer(live, name);
    if (!container) {
      plan.error =
          "the " + std::string(base::nameOf(live.kind)) + " has no container named " + name;
      return;
    }
    const auto ownedHere = owned.resources.find(name);
    const auto want = [&](const std::string& resource, const std::string& value, bool limited) {
      const std::string* ours = nullptr;  // the value we wrote, when we did
      if (ownedHere != owned.resources.end()) {
        if (const auto it = ownedHere->second.find(resource); it != ownedHere->second.end()) {
          ours = &it->second;
        }
      }
      const std::string limit = lookup(container->limits, resource);
      const std::string request = lookup(container->requests, resource);
      if (!ours && (!limit.empty() || !request.empty())) {
        // A team's own cpu or memory sizing stands: the placement's is
        // only a default for containers that set none.
        const bool sizing = resource == "cpu" || resource == "memory";
        // A device given as a limit alone is requested at the limit (the
        // API server defaults a pod's request to it): the same device.
        const std::string& asked = limit.empty() ? request : limit;
        if (!sizing && (asked != value || (!request.empty() && request != value))) {
          plan.conflicts.push_back("containers[" + name + "].resources " + resource + "=" +
                                   (limit.empty() ? request : limit) + " is set on the " +
                                   std::string(base::nameOf(live.kind)) + "; the placement needs " +
                                   value);
        }
        return;
      }
      if (limited && (limit != value || request != value)) {
        setRequestAndLimit(patches, name, resource, value);
      } else if (!limited) {
        auto& patch = patches[name];
        if (request != value) {
          patch["requests"][resource] = value;
        }
        // A limit we wrote before (the same resource, placed on CPU) goes:
        // it would sit below the new request.
        if (ours && !limit.empty() && limit == *ours) {
          patch["limits"][resource] = nullptr;
        }
        if (patch.is_null()) {
          patches.erase(name);
        }
      }
      plan.owned.resources[name][resource] = value;
    };
    for (const auto& [resource, value] : desired.resources) {
      want(resource, value, true);
    }
    for (const auto& [resource, value] : desired.requestsOnly) {
      want(resource, value, false);
    }
    conflictingGpus(live, desired, *container,
                    ownedHere == owned.resources.end() ? nullptr : &ownedHere->second, plan);
  }
}

// Device resources we set and no longer want, unless someone changed them.
void planReleasedResources(const TargetState& live, const OwnedFields& owned,
                           ContainerPatches& patches, const PatchPlan& plan) {
  for (const auto& [name, resources] : owned.resources) {
    const auto* container = findContainer(live, name);
    const auto kept = plan.owned.resources.find(name);
    for (const auto& [resource, value] : resources) {
      if (kept != plan.owned.resources.end() && kept->second.count(resource)) {
        continue;
      }
      if (container && (lookup(container->limits, resource) == value ||
                        lookup(container->requests, resource) == value)) {
        setRequestAndLimit(patches, name, resource, nullptr);
      }
    }
  }
}

std::optional<json> planResources(const TargetState& live, const Scheduling* desired,
                                  const std::vector<std::string>& containers,
                                  const OwnedFields& owned, PatchPlan& plan) {
  std::vector<std::string> targets = containers;
  if (targets.empty() && desired && !live.containers.empty()) {
    targets.push_back(live.containers.front().name);
  }
  ContainerPatches patches;
  if (desired) {
    planWantedResources(live, *desired, targets, owned, patches, plan);
  }
  planReleasedResources(live, owned, patches, plan);
  if (patches.empty()) {
    return std::nullopt;
  }
  json list = json::array();
  for (auto& [name, resources] : patches) {
    list.push_back({{"name", name}, {"resources", std::move(resources)}});
  }
  return list;
}

// Puts a container's resources.claims list into the containers the patch
// carries, beside the resources planned for it.
void addContainerClaims(json& podSpec, const std::string& container, json claims) {
  auto& list = podSpec["containers"];
  if (list.is_null()) {
    list = json::array();
  }
  for (auto& item : list) {
    if (item["name"] == container) {
      item["resources"]["claims"] = std::move(claims);
      return;
    }
  }
  list.push_back({{"name", container}, {"resources", {{"claims", std::move(claims)}}}});
}

// The gate and the annotation that place the pods: present while the
// placement is at the pods, gone otherwise. Adds to `podSpec` and `annotations`.
void planPodGate(const TargetState& live, const OwnedFields& owned,
                 const std::optional<PodScheduling>& pods, PatchPlan& plan, json& podSpec,
                 json& annotations) {
  if (pods) {
    plan.owned.pods = pods;
    if (!live.gated) {
      podSpec["schedulingGates"] = json::array({{{"name", kSchedulingGate}}});
    }
    const std::string text = serializePodScheduling(*pods);
    if (live.podScheduling != text) {
      annotations[kPodSchedulingAnnotation] = text;
    }
    return;
  }
  if (!owned.pods) {
    return;
  }
  if (live.gated) {
    podSpec["schedulingGates"] = json::array({{{"$patch", "delete"}, {"name", kSchedulingGate}}});
  }
  if (live.podScheduling) {
    annotations[kPodSchedulingAnnotation] = nullptr;
  }
}

}  // namespace

std::string deviceContainer(const TargetState& live, const std::vector<std::string>& containers) {
  if (!containers.empty()) {
    return containers.front();
  }
  return live.containers.empty() ? std::string() : live.containers.front().name;
}

bool ownedByAnother(const OwnedFields& owned, const std::string& workload) {
  return !owned.workload.empty() && owned.workload != workload && !owned.empty();
}

PlaceAt resolvePlaceAt(PlaceAt setting, const TargetState& live) {
  if (traitsOf(live.kind).runsOnce) {
    return PlaceAt::PodTemplate;  // placed before its first pod, resumed in the same write
  }
  if (setting != PlaceAt::Auto) {
    return setting;
  }
  if (live.ownership.form != OwnershipRecord::Form::Readable) {
    return PlaceAt::PodTemplate;
  }
  const OwnedFields& owned = live.ownership.fields;
  return owned.pods || atomicFieldsTakenBack(live, owned) ? PlaceAt::Pods : PlaceAt::PodTemplate;
}

PatchPlan planTemplatePatch(const TargetState& live, const PatchRequest& request) {
  PatchPlan plan;
  const std::string kind(base::nameOf(live.kind));
  if (live.ownership.form == OwnershipRecord::Form::Unreadable) {
    plan.error = std::string("metadata.annotations[") + kOwnedFieldsAnnotation +
                 "]: is not the operator's ownership record; remove it to let the operator "
                 "start over";
    return plan;
  }
  const OwnedFields& owned = live.ownership.fields;
  const Scheduling* desired = request.desired;
  if (ownedByAnother(owned, request.workload)) {
    if (desired) {
      plan.error = "the " + kind + " is already placed by GpuWorkload " + owned.workload;
    }
    return plan;
  }
  plan.owned.workload = request.workload;
  json podSpec = json::object();
  json annotations = json::object();
  if (live.templateMutable()) {
    std::optional<PodScheduling> pods;
    if (desired && request.where == PlaceAt::Pods) {
      pods.emplace();
    }
    PodScheduling* atPods = pods ? &*pods : nullptr;
    if (auto selector = planSelector(live, desired, owned, plan, atPods); !selector.empty()) {
      podSpec["nodeSelector"] = std::move(selector);
    }
    if (auto tolerations = planTolerations(live, desired, owned, plan, atPods)) {
      podSpec["tolerations"] = std::move(*tolerations);
    }
    if (auto spread = planSpread(live, desired, owned, plan)) {
      podSpec["topologySpreadConstraints"] = std::move(*spread);
    }
    if (auto terms = planZoneAffinity(live, desired, owned, plan, atPods != nullptr)) {
      podSpec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] =
          std::move(*terms);
    }
    if (auto resources = planResources(live, desired, request.containers, owned, plan)) {
      podSpec["containers"] = std::move(*resources);
      plan.resourcesChanged = true;
    }
    const DeviceClaim* claim = desired && desired->claim ? &*desired->claim : nullptr;
    auto claims = planClaims(live, claim, deviceContainer(live, request.containers),
                             request.workload, owned, plan);
    if (claims.podClaims) {
      podSpec["resourceClaims"] = std::move(*claims.podClaims);
    }
    if (claims.containerClaims) {
      addContainerClaims(podSpec, claims.container, std::move(*claims.containerClaims));
      plan.resourcesChanged = true;
    }
    if (auto terms =
            planNearAffinity(live, desired, owned, plan, atPods != nullptr, !podSpec.empty())) {
      podSpec["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] =
          std::move(*terms);
    }
    if (pods && *pods == PodScheduling{}) {
      pods.reset();  // the team's template already has all of it: no gate
    }
    planPodGate(live, owned, pods, plan, podSpec, annotations);
  } else if (desired) {
    plan.error = "the " + kind +
                 " has started, or is no longer suspended: its pod template can no longer change";
  } else {
    plan.owned = OwnedFields{};  // released: the record goes, the pods keep what they run
  }
  if (plan.blocked()) {
    return plan;  // nothing half-applied
  }
  const bool start = request.start && desired && !traitsOf(live.kind).suspendPointer.empty() &&
                     live.job.suspended && !live.job.started();
  const bool recorded = live.ownership.form != OwnershipRecord::Form::Absent;
  const bool ownershipChanged = plan.owned.empty() ? recorded : !(plan.owned == owned) || !recorded;
  if (podSpec.empty() && annotations.empty() && !ownershipChanged && !start) {
    return plan;  // already as desired: no write
  }
  json patch = {
      {"metadata",
       {{"resourceVersion", request.resourceVersion},
        {"annotations",
         {{kOwnedFieldsAnnotation,
           plan.owned.empty() ? json(nullptr) : json(serializeOwnedFields(plan.owned))}}}}}};
  for (const auto& [name, value] : podSpec.items()) {
    plan.fields.push_back("spec.template.spec." + name);
  }
  if (!annotations.empty()) {
    plan.fields.push_back(std::string("spec.template.metadata.annotations[") +
                          kPodSchedulingAnnotation + "]");
    patch["spec"]["template"]["metadata"]["annotations"] = std::move(annotations);
  }
  if (!podSpec.empty()) {
    patch["spec"]["template"]["spec"] = std::move(podSpec);
  }
  if (start) {
    patch["spec"]["suspend"] = false;
  }
  plan.patch = std::move(patch);
  return plan;
}

}  // namespace gpuplacement::core
