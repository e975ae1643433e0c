#include "core/deployment.h"

#include <algorithm>

#include "base/hash.h"
#include "base/json_access.h"
#include "core/quantity.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;
using base::stringOf;

const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) {
    return kNull;
  }
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

std::int64_t integer(const json& value, std::int64_t fallback = 0) {
  return value.is_number_integer() ? value.get<std::int64_t>() : fallback;
}

std::string quantityText(const json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_number_integer()) {
    return std::to_string(value.get<std::int64_t>());
  }
  return value.dump();
}

// The resources a placement may set: extended resources (names with a
// '/') and, for CPU placements, cpu and memory.
std::map<std::string, std::string> placementResources(const json& list) {
  std::map<std::string, std::string> resources;
  if (!list.is_object()) {
    return resources;
  }
  for (const auto& [name, value] : list.items()) {
    if (name.find('/') != std::string::npos || name == "cpu" || name == "memory") {
      resources[name] = quantityText(value);
    }
  }
  return resources;
}

bool contains(const std::vector<Toleration>& list, const Toleration& toleration) {
  return std::find(list.begin(), list.end(), toleration) != list.end();
}

const ContainerResources* findContainer(const DeploymentState& live, const std::string& name) {
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

std::optional<OwnedFields> ownedFieldsFromJson(const json& document) {
  OwnedFields owned;
  if (!document.is_object()) {
    return std::nullopt;
  }
  owned.workload = stringMember(document, "workload");
  if (const auto& selector = field(document, "nodeSelector"); selector.is_object()) {
    for (const auto& [key, value] : selector.items()) {
      if (!value.is_string()) {
        return std::nullopt;
      }
      owned.nodeSelector[key] = value.get<std::string>();
    }
  }
  if (const auto& tolerations = field(document, "tolerations"); tolerations.is_array()) {
    for (const auto& item : tolerations) {
      if (!item.is_object()) {
        return std::nullopt;
      }
      owned.tolerations.push_back(tolerationFromJson(item));
    }
  }
  if (const auto& resources = field(document, "resources"); resources.is_object()) {
    for (const auto& [container, names] : resources.items()) {
      if (!names.is_object()) {
        return std::nullopt;
      }
      for (const auto& [name, value] : names.items()) {
        owned.resources[container][name] = quantityText(value);
      }
    }
  }
  return owned;
}

}  // namespace

DeploymentState deploymentFromJson(const json& object) {
  DeploymentState state;
  const auto& metadata = field(object, "metadata");
  state.uid = field(metadata, "uid").is_string() ? field(metadata, "uid").get<std::string>() : "";
  state.generation = integer(field(metadata, "generation"));
  const auto& annotations = field(metadata, "annotations");
  if (const auto& owned = field(annotations, kOwnedFieldsAnnotation); owned.is_string()) {
    state.ownership = readOwnership(owned.get<std::string>());
  }
  const auto& spec = field(object, "spec");
  state.replicas = static_cast<std::int32_t>(integer(field(spec, "replicas"), 1));
  const auto& podSpec = field(field(spec, "template"), "spec");
  if (const auto& selector = field(podSpec, "nodeSelector"); selector.is_object()) {
    for (const auto& [key, value] : selector.items()) {
      if (value.is_string()) {
        state.nodeSelector[key] = value.get<std::string>();
      }
    }
  }
  if (const auto& tolerations = field(podSpec, "tolerations"); tolerations.is_array()) {
    for (const auto& item : tolerations) {
      if (item.is_object()) {
        state.tolerations.push_back(tolerationFromJson(item));
      }
    }
  }
  if (const auto& containers = field(podSpec, "containers"); containers.is_array()) {
    for (const auto& item : containers) {
      ContainerResources container;
      container.name = stringMember(item, "name");
      const auto& resources = field(item, "resources");
      container.limits = placementResources(field(resources, "limits"));
      container.requests = placementResources(field(resources, "requests"));
      state.containers.push_back(std::move(container));
    }
  }
  const auto& status = field(object, "status");
  state.observedGeneration = integer(field(status, "observedGeneration"));
  state.updatedReplicas = static_cast<std::int32_t>(integer(field(status, "updatedReplicas")));
  state.availableReplicas = static_cast<std::int32_t>(integer(field(status, "availableReplicas")));
  state.statusReplicas = static_cast<std::int32_t>(integer(field(status, "replicas")));
  if (const auto& conditions = field(status, "conditions"); conditions.is_array()) {
    for (const auto& condition : conditions) {
      if (stringMember(condition, "type") == "Progressing" &&
          stringMember(condition, "status") == "False" &&
          stringMember(condition, "reason") == "ProgressDeadlineExceeded") {
        state.progressDeadlineExceeded = true;
      }
    }
  }
  return state;
}

OwnershipRecord readOwnership(const std::optional<std::string>& annotation) {
  OwnershipRecord record;
  if (!annotation || annotation->empty()) {
    return record;  // an empty annotation records nothing
  }
  record.digest = base::stableHash(*annotation);
  auto fields = ownedFieldsFromJson(json::parse(*annotation, nullptr, /*allow_exceptions=*/false));
  record.form = fields ? OwnershipRecord::Form::Readable : OwnershipRecord::Form::Unreadable;
  if (fields) {
    record.fields = std::move(fields).value();
  }
  return record;
}

std::string serializeOwnedFields(const OwnedFields& owned) {
  json document = {{"workload", owned.workload}};
  if (!owned.nodeSelector.empty()) {
    document["nodeSelector"] = owned.nodeSelector;
  }
  if (!owned.tolerations.empty()) {
    json list = json::array();
    for (const auto& toleration : owned.tolerations) {
      list.push_back(tolerationToJson(toleration));
    }
    document["tolerations"] = std::move(list);
  }
  if (!owned.resources.empty()) {
    document["resources"] = owned.resources;
  }
  return document.dump();
}

namespace {

// The node selector: a map merged key by key; null removes a key.
json planSelector(const DeploymentState& live, const Scheduling* desired, const OwnedFields& owned,
                  PatchPlan& plan) {
  json patch = json::object();
  if (desired) {
    for (const auto& [key, value] : desired->nodeSelector) {
      const auto current = live.nodeSelector.find(key);
      const bool ours = owned.nodeSelector.count(key) > 0;
      if (!ours && current != live.nodeSelector.end()) {
        if (current->second != value) {
          plan.conflicts.push_back("nodeSelector " + key + "=" + current->second +
                                   " is set on the Deployment; the placement needs " + value);
        }
        continue;  // the user's own, identical: leave it theirs
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
std::optional<json> planTolerations(const DeploymentState& live, const Scheduling* desired,
                                    const OwnedFields& owned, PatchPlan& plan) {
  std::vector<Toleration> users;
  for (const auto& toleration : live.tolerations) {
    if (!contains(owned.tolerations, toleration)) {
      users.push_back(toleration);
    }
  }
  std::vector<Toleration> next = users;
  if (desired) {
    for (const auto& toleration : desired->tolerations) {
      if (!contains(users, toleration)) {  // else: the user tolerates it already
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

using ContainerPatches = std::map<std::string, json>;

void setRequestAndLimit(ContainerPatches& patches, const std::string& container,
                        const std::string& name, const json& value) {
  auto& patch = patches[container];
  patch["limits"][name] = value;
  patch["requests"][name] = value;
}

// The device resources we want: requests and limits alike, per container.
void planWantedResources(const DeploymentState& live, const Scheduling& desired,
                         const std::vector<std::string>& targets, const OwnedFields& owned,
                         ContainerPatches& patches, PatchPlan& plan) {
  for (const auto& name : targets) {
    const auto* container = findContainer(live, name);
    if (!container) {
      plan.error = "the Deployment has no container named " + name;
      return;
    }
    const auto ownedHere = owned.resources.find(name);
    for (const auto& [resource, value] : desired.resources) {
      const bool ours = ownedHere != owned.resources.end() && ownedHere->second.count(resource);
      const std::string limit = lookup(container->limits, resource);
      const std::string request = lookup(container->requests, resource);
      if (!ours && (!limit.empty() || !request.empty())) {
        // A team's own cpu or memory sizing stands: the placement's is
        // only a default for containers that set none.
        const bool sizing = resource == "cpu" || resource == "memory";
        if (!sizing && (limit != value || request != value)) {
          plan.conflicts.push_back("containers[" + name + "].resources " + resource + "=" +
                                   (limit.empty() ? request : limit) +
                                   " is set on the Deployment; the placement needs " + value);
        }
        continue;
      }
      if (limit != value || request != value) {
        setRequestAndLimit(patches, name, resource, value);
      }
      plan.owned.resources[name][resource] = value;
    }
  }
}

// Device resources we set and no longer want, unless someone changed them.
void planReleasedResources(const DeploymentState& live, const OwnedFields& owned,
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

std::optional<json> planResources(const DeploymentState& live, const Scheduling* desired,
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

// Whether another GpuWorkload's record is on the Deployment: an error
// when we would place it, nothing to do when we would clear it.
bool ownedByAnother(const OwnedFields& owned, const std::string& workload) {
  return !owned.workload.empty() && owned.workload != workload && !owned.empty();
}

}  // namespace

PatchPlan planDeploymentPatch(const DeploymentState& live, const Scheduling* desired,
                              const std::vector<std::string>& containers,
                              const std::string& workload, const std::string& resourceVersion) {
  PatchPlan plan;
  if (live.ownership.form == OwnershipRecord::Form::Unreadable) {
    plan.error = std::string("metadata.annotations[") + kOwnedFieldsAnnotation +
                 "]: is not the operator's ownership record; remove it to let the operator "
                 "start over";
    return plan;
  }
  const OwnedFields& owned = live.ownership.fields;
  if (ownedByAnother(owned, workload)) {
    if (desired) {
      plan.error = "the Deployment is already placed by GpuWorkload " + owned.workload;
    }
    return plan;
  }
  plan.owned.workload = workload;
  json podSpec = json::object();
  if (auto selector = planSelector(live, desired, owned, plan); !selector.empty()) {
    podSpec["nodeSelector"] = std::move(selector);
  }
  if (auto tolerations = planTolerations(live, desired, owned, plan)) {
    podSpec["tolerations"] = std::move(*tolerations);
  }
  if (auto resources = planResources(live, desired, containers, owned, plan)) {
    podSpec["containers"] = std::move(*resources);
  }
  if (plan.blocked()) {
    return plan;  // nothing half-applied
  }
  const bool recorded = live.ownership.form != OwnershipRecord::Form::Absent;
  const bool ownershipChanged = plan.owned.empty() ? recorded : !(plan.owned == owned) || !recorded;
  if (podSpec.empty() && !ownershipChanged) {
    return plan;  // already as desired: no write
  }
  json patch = {
      {"metadata",
       {{"resourceVersion", resourceVersion},
        {"annotations",
         {{kOwnedFieldsAnnotation,
           plan.owned.empty() ? json(nullptr) : json(serializeOwnedFields(plan.owned))}}}}}};
  if (!podSpec.empty()) {
    patch["spec"]["template"]["spec"] = std::move(podSpec);
  }
  plan.patch = std::move(patch);
  return plan;
}

PodRequests teamPodRequests(const DeploymentState& deployment) {
  PodRequests total;
  const auto& owned = deployment.ownership.fields.resources;
  for (const auto& container : deployment.containers) {
    const auto ours = owned.find(container.name);
    for (const char* resource : {"cpu", "memory"}) {
      if (ours != owned.end() && ours->second.count(resource)) {
        continue;
      }
      auto value = container.requests.find(resource);
      if (value == container.requests.end()) {
        value = container.limits.find(resource);
        if (value == container.limits.end()) {
          continue;
        }
      }
      const auto milli = parseResourceMilli(value->second);
      if (!milli) {
        continue;  // the API server refuses such a quantity; nothing to count
      }
      if (resource == std::string_view("cpu")) {
        total.cpu += static_cast<double>(*milli) / 1000;
      } else {
        total.memoryGiB += static_cast<double>(*milli) / 1000 / (1024.0 * 1024 * 1024);
      }
    }
  }
  return total;
}

}  // namespace gpuplacement::core
