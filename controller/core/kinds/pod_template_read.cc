#include "core/kinds/pod_template_read.h"

#include <algorithm>

#include "base/hash.h"
#include "base/json_access.h"
#include "core/catalog/quantity.h"
#include "core/kinds/pod_scheduling.h"

namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// The resources a placement may set: extended resources (names with a
// '/') and, for CPU placements, cpu and memory.
std::map<std::string, std::string> placementResources(const json& list) {
  std::map<std::string, std::string> resources;
  if (!list.is_object()) {
    return resources;
  }
  for (const auto& [name, value] : list.items()) {
    if (name.find('/') != std::string::npos || name == "cpu" || name == "memory") {
      resources[name] = quantityTextOf(value);
    }
  }
  return resources;
}

bool hasOurGate(const json& gates) {
  if (!gates.is_array()) {
    return false;
  }
  return std::any_of(gates.begin(), gates.end(), [](const json& gate) {
    return stringMember(gate, "name") == kSchedulingGate;
  });
}

std::map<std::string, std::string> stringsOf(const json& map) {
  std::map<std::string, std::string> strings;
  if (map.is_object()) {
    for (const auto& [key, value] : map.items()) {
      if (value.is_string()) {
        strings[key] = value.get<std::string>();
      }
    }
  }
  return strings;
}

ContainerResources containerFrom(const json& item) {
  ContainerResources container;
  container.name = stringMember(item, "name");
  const auto& resources = memberOf(item, "resources");
  container.limits = placementResources(memberOf(resources, "limits"));
  container.requests = placementResources(memberOf(resources, "requests"));
  if (const auto& claims = memberOf(resources, "claims"); claims.is_array()) {
    for (const auto& claim : claims) {
      container.claims.emplace_back(stringMember(claim, "name"), stringMember(claim, "request"));
    }
  }
  return container;
}

}  // namespace

void readPodTemplate(const json& templ, PodTemplateState& state, bool keepRaw) {
  state.templateDigest = base::jsonDigest(templ);
  if (keepRaw && templ.is_object()) {
    state.raw = templ;
  }
  const auto& metadata = memberOf(templ, "metadata");
  if (const auto& text = memberOf(memberOf(metadata, "annotations"), kPodSchedulingAnnotation);
      text.is_string()) {
    state.podScheduling = text.get<std::string>();
  }
  const auto& podSpec = memberOf(templ, "spec");
  state.gated = hasOurGate(memberOf(podSpec, "schedulingGates"));
  state.nodeSelector = stringsOf(memberOf(podSpec, "nodeSelector"));
  if (const auto& tolerations = memberOf(podSpec, "tolerations"); tolerations.is_array()) {
    for (const auto& item : tolerations) {
      if (item.is_object()) {
        state.tolerations.push_back(tolerationFromJson(item));
      }
    }
  }
  if (const auto& spreads = memberOf(podSpec, "topologySpreadConstraints"); spreads.is_array()) {
    for (const auto& item : spreads) {
      if (const auto& key = memberOf(item, "topologyKey"); key.is_string()) {
        state.spreadKeys.push_back(key.get<std::string>());
      }
    }
  }
  state.podLabels = stringsOf(memberOf(metadata, "labels"));
  if (const auto& containers = memberOf(podSpec, "containers"); containers.is_array()) {
    for (const auto& item : containers) {
      state.containers.push_back(containerFrom(item));
    }
  }
  if (const auto& claims = memberOf(podSpec, "resourceClaims"); claims.is_array()) {
    for (const auto& claim : claims) {
      state.podClaims[stringMember(claim, "name")] =
          stringMember(claim, "resourceClaimTemplateName");
    }
  }
}

PodTemplateState podTemplateFrom(const json& templ, bool keepRaw) {
  PodTemplateState state;
  readPodTemplate(templ, state, keepRaw);
  return state;
}

std::int32_t countOf(const json& value, std::int64_t fallback) {
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>(base::integerOf(value, fallback), 0, INT32_MAX));
}

const json* trueCondition(const json& status, std::string_view type) {
  const auto& conditions = memberOf(status, "conditions");
  if (!conditions.is_array()) {
    return nullptr;
  }
  for (const auto& condition : conditions) {
    if (stringMember(condition, "type") == type && stringMember(condition, "status") == "True") {
      return &condition;
    }
  }
  return nullptr;
}

std::string ownerNamed(const json& pod, std::string_view kind) {
  const auto& owners = memberOf(memberOf(pod, "metadata"), "ownerReferences");
  if (owners.is_array()) {
    for (const auto& owner : owners) {
      if (stringMember(owner, "kind") == kind) {
        return stringMember(owner, "name");
      }
    }
  }
  return "";
}

std::optional<std::string> podLabel(const json& pod, std::string_view key) {
  const std::string name(key);
  const auto& value = memberOf(memberOf(memberOf(pod, "metadata"), "labels"), name.c_str());
  if (!value.is_string()) {
    return std::nullopt;
  }
  return value.get<std::string>();
}

void readSuspension(const json& object, JobProgress& progress, std::string_view controller) {
  constexpr const char* kKueueQueueLabel = "kueue.x-k8s.io/queue-name";
  const auto& metadata = memberOf(object, "metadata");
  const auto& spec = memberOf(object, "spec");
  progress.suspended = memberOf(spec, "suspend") == json(true);
  const auto managedBy = controller.empty() ? std::string() : stringMember(spec, "managedBy");
  progress.queuedByKueue =
      memberOf(memberOf(metadata, "labels"), kKueueQueueLabel).is_string() ||
      memberOf(memberOf(metadata, "annotations"), kKueueQueueLabel).is_string();
  progress.queuedElsewhere =
      progress.queuedByKueue || (!managedBy.empty() && managedBy != controller);
  progress.waitsFor = stringMember(memberOf(metadata, "labels"), kWorkloadLabel);
}

void readEnd(const json& status, std::string_view completeType, JobProgress& progress) {
  if (const auto* complete = trueCondition(status, completeType)) {
    progress.end = JobProgress::End::Complete;
    progress.endTime = stringMember(*complete, "lastTransitionTime");
  } else if (const auto* failed = trueCondition(status, "Failed")) {
    progress.end = JobProgress::End::Failed;
    progress.endTime = stringMember(*failed, "lastTransitionTime");
    progress.endReason = stringMember(*failed, "reason");
    if (const auto message = stringMember(*failed, "message"); !message.empty()) {
      progress.endReason += (progress.endReason.empty() ? "" : ": ") + message;
    }
  }
}

void readRolloutCounts(const json& status, TargetState& state) {
  state.observedGeneration = base::integerOf(memberOf(status, "observedGeneration"));
  state.updatedReplicas = countOf(memberOf(status, "updatedReplicas"));
  state.statusReplicas = countOf(memberOf(status, "replicas"));
}

}  // namespace gpuplacement::core::kinds
