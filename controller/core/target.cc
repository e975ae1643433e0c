#include "core/target.h"

#include <algorithm>
#include <charconv>

#include "base/hash.h"
#include "base/json_access.h"
#include "core/pod_scheduling.h"
#include "core/quantity.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::integerOf;
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

// Whether a managedFields entry's fieldsV1 owns anything under
// spec.template.
bool ownsTemplate(const json& entry) {
  return memberOf(memberOf(memberOf(entry, "fieldsV1"), "f:spec"), "f:template").is_object();
}

std::int32_t int32Of(const json& value, std::int64_t fallback = 0) {
  return static_cast<std::int32_t>(
      std::clamp<std::int64_t>(integerOf(value, fallback), 0, INT32_MAX));
}

// A condition of `type` with status True; null when there is none.
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

void readPodTemplate(const json& templ, TargetState& state) {
  state.templateDigest = base::jsonDigest(templ);
  if (const auto& text =
          memberOf(memberOf(memberOf(templ, "metadata"), "annotations"), kPodSchedulingAnnotation);
      text.is_string()) {
    state.podScheduling = text.get<std::string>();
  }
  const auto& podSpec = memberOf(templ, "spec");
  state.gated = hasOurGate(memberOf(podSpec, "schedulingGates"));
  if (const auto& selector = memberOf(podSpec, "nodeSelector"); selector.is_object()) {
    for (const auto& [key, value] : selector.items()) {
      if (value.is_string()) {
        state.nodeSelector[key] = value.get<std::string>();
      }
    }
  }
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
  if (const auto& labels = memberOf(memberOf(templ, "metadata"), "labels"); labels.is_object()) {
    for (const auto& [key, value] : labels.items()) {
      if (value.is_string()) {
        state.podLabels[key] = value.get<std::string>();
      }
    }
  }
  if (const auto& containers = memberOf(podSpec, "containers"); containers.is_array()) {
    for (const auto& item : containers) {
      ContainerResources container;
      container.name = stringMember(item, "name");
      const auto& resources = memberOf(item, "resources");
      container.limits = placementResources(memberOf(resources, "limits"));
      container.requests = placementResources(memberOf(resources, "requests"));
      if (const auto& claims = memberOf(resources, "claims"); claims.is_array()) {
        for (const auto& claim : claims) {
          container.claims.emplace_back(stringMember(claim, "name"),
                                        stringMember(claim, "request"));
        }
      }
      state.containers.push_back(std::move(container));
    }
  }
  if (const auto& claims = memberOf(podSpec, "resourceClaims"); claims.is_array()) {
    for (const auto& claim : claims) {
      state.podClaims[stringMember(claim, "name")] =
          stringMember(claim, "resourceClaimTemplateName");
    }
  }
}

// One of spec.strategy.rollingUpdate's bounds as a count of pods: an
// integer, or a percentage of replicas (25% when unset), rounded up for
// maxSurge and down for maxUnavailable, as the Deployment controller does.
std::int32_t rollingBoundOf(const json& strategy, const char* field, std::int32_t replicas,
                            bool roundUp) {
  if (stringMember(strategy, "type") == "Recreate") {
    return 0;
  }
  const auto& value = memberOf(memberOf(strategy, "rollingUpdate"), field);
  if (value.is_number_integer()) {
    return static_cast<std::int32_t>(
        std::clamp<std::int64_t>(value.get<std::int64_t>(), 0, replicas));
  }
  std::string text = value.is_string() ? value.get<std::string>() : std::string("25%");
  std::int64_t percent = 25;
  if (!text.empty() && text.back() == '%') {
    text.pop_back();
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), percent);
    if (error != std::errc() || end != text.data() + text.size() || percent < 0) {
      percent = 25;
    }
  }
  const std::int64_t scaled = std::int64_t{replicas} * std::min<std::int64_t>(percent, 100);
  return static_cast<std::int32_t>(
      std::min<std::int64_t>(roundUp ? (scaled + 99) / 100 : scaled / 100, replicas));
}

void readDeploymentStatus(const json& status, TargetState& state) {
  state.availableReplicas = int32Of(memberOf(status, "availableReplicas"));
  const auto& conditions = memberOf(status, "conditions");
  if (!conditions.is_array()) {
    return;
  }
  for (const auto& condition : conditions) {
    if (stringMember(condition, "type") == "Progressing" &&
        stringMember(condition, "status") == "False" &&
        stringMember(condition, "reason") == "ProgressDeadlineExceeded") {
      state.progressDeadlineExceeded = true;
    }
  }
}

void readStatefulSet(const json& object, const json& status, TargetState& state) {
  state.availableReplicas = int32Of(memberOf(status, "readyReplicas"));
  const auto update = stringMember(status, "updateRevision");
  const auto& strategy = memberOf(memberOf(object, "spec"), "updateStrategy");
  state.onDelete = stringMember(strategy, "type") == "OnDelete";
  state.partition = int32Of(memberOf(memberOf(strategy, "rollingUpdate"), "partition"));
  state.revisionPending = !update.empty() && stringMember(status, "currentRevision") != update;
}

// The controller that runs a Job by default; any other spec.managedBy
// (MultiKueue, say) runs it elsewhere.
constexpr std::string_view kJobController = "kubernetes.io/job-controller";
constexpr const char* kKueueQueueLabel = "kueue.x-k8s.io/queue-name";

void readJob(const json& object, TargetState& state) {
  const auto& spec = memberOf(object, "spec");
  std::int64_t pods = integerOf(memberOf(spec, "parallelism"), 1);
  if (const auto& completions = memberOf(spec, "completions"); completions.is_number_integer()) {
    pods = std::min(pods, completions.get<std::int64_t>());
  }
  state.replicas = static_cast<std::int32_t>(std::clamp<std::int64_t>(pods, 0, INT32_MAX));
  auto& job = state.job;
  job.suspended = memberOf(spec, "suspend") == json(true);
  const auto managedBy = stringMember(spec, "managedBy");
  const auto& metadata = memberOf(object, "metadata");
  job.queuedElsewhere = (!managedBy.empty() && managedBy != kJobController) ||
                        memberOf(memberOf(metadata, "labels"), kKueueQueueLabel).is_string() ||
                        memberOf(memberOf(metadata, "annotations"), kKueueQueueLabel).is_string();
  job.waitsFor = stringMember(memberOf(metadata, "labels"), kWorkloadLabel);
  const auto& status = memberOf(object, "status");
  job.startTime = stringMember(status, "startTime");
  job.active = int32Of(memberOf(status, "active"));
  if (const auto* complete = trueCondition(status, "Complete")) {
    job.end = JobProgress::End::Complete;
    job.endTime = stringMember(status, "completionTime");
    if (job.endTime.empty()) {
      job.endTime = stringMember(*complete, "lastTransitionTime");
    }
  } else if (const auto* failed = trueCondition(status, "Failed")) {
    job.end = JobProgress::End::Failed;
    job.endTime = stringMember(*failed, "lastTransitionTime");
    job.endReason = stringMember(*failed, "reason");
    if (const auto message = stringMember(*failed, "message"); !message.empty()) {
      job.endReason += (job.endReason.empty() ? "" : ": ") + message;
    }
  }
}

}  // namespace

bool TargetState::rolledOut() const {
  switch (kind) {
    case TargetKind::Job:
      return job.started();
    case TargetKind::StatefulSet:
      // OnDelete: nothing rolls until pods are deleted; a partition keeps
      // the pods below it on the old template, and the revisions apart.
      return observedGeneration >= generation &&
             (onDelete || (updatedReplicas >= replicas - partition &&
                           availableReplicas >= replicas && (partition > 0 || !revisionPending)));
    case TargetKind::Deployment:
      break;
  }
  return observedGeneration >= generation && updatedReplicas >= replicas &&
         availableReplicas >= replicas && statusReplicas <= updatedReplicas;
}

bool TargetState::templateMutable() const {
  return !traitsOf(kind).runsOnce || (job.suspended && !job.started());
}

TargetState targetFromJson(TargetKind kind, const json& object) {
  TargetState state;
  state.kind = kind;
  const auto& metadata = memberOf(object, "metadata");
  state.uid = stringMember(metadata, "uid");
  state.generation = integerOf(memberOf(metadata, "generation"));
  if (const auto& owned = memberOf(memberOf(metadata, "annotations"), kOwnedFieldsAnnotation);
      owned.is_string()) {
    state.ownership = readOwnership(owned.get<std::string>());
  }
  const auto& spec = memberOf(object, "spec");
  readPodTemplate(memberOf(spec, "template"), state);
  if (const auto& matchLabels = memberOf(memberOf(spec, "selector"), "matchLabels");
      matchLabels.is_object() && !matchLabels.empty()) {
    state.podLabels.clear();
    for (const auto& [key, value] : matchLabels.items()) {
      if (value.is_string()) {
        state.podLabels[key] = value.get<std::string>();
      }
    }
  }
  const auto& status = memberOf(object, "status");
  state.observedGeneration = integerOf(memberOf(status, "observedGeneration"));
  state.updatedReplicas = int32Of(memberOf(status, "updatedReplicas"));
  state.statusReplicas = int32Of(memberOf(status, "replicas"));
  switch (kind) {
    case TargetKind::Deployment:
      state.replicas = int32Of(memberOf(spec, "replicas"), 1);
      state.surge = rollingBoundOf(memberOf(spec, "strategy"), "maxSurge", state.replicas, true);
      state.unavailable =
          rollingBoundOf(memberOf(spec, "strategy"), "maxUnavailable", state.replicas, false);
      state.recreate = stringMember(memberOf(spec, "strategy"), "type") == "Recreate";
      // The Deployment controller's fencepost: both resolved to zero, one
      // pod may be unavailable (deployment/util ResolveFenceposts).
      if (!state.recreate && state.surge == 0 && state.unavailable == 0 && state.replicas > 0) {
        state.unavailable = 1;
      }
      readDeploymentStatus(status, state);
      break;
    case TargetKind::StatefulSet:
      state.replicas = int32Of(memberOf(spec, "replicas"), 1);
      readStatefulSet(object, status, state);
      break;
    case TargetKind::Job:
      readJob(object, state);
      break;
  }
  return state;
}

std::string lastTemplateWriter(const json& object, const std::string& self) {
  const auto& entries = memberOf(memberOf(object, "metadata"), "managedFields");
  if (!entries.is_array()) {
    return "";
  }
  const json* latest = nullptr;
  for (const auto& entry : entries) {
    // RFC 3339 times of one server compare as text; the last of equals wins.
    if (stringMember(entry, "manager") != self && stringMember(entry, "subresource").empty() &&
        ownsTemplate(entry) &&
        (!latest || stringMember(entry, "time") >= stringMember(*latest, "time"))) {
      latest = &entry;
    }
  }
  if (!latest) {
    return "";
  }
  return stringMember(*latest, "manager") + " (" + stringMember(*latest, "operation") + ")";
}

PodRequests teamPodRequests(const TargetState& target) {
  PodRequests total;
  const auto& owned = target.ownership.fields.resources;
  for (const auto& container : target.containers) {
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
