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
  if (const auto& pods = field(document, "pods"); !pods.is_null()) {
    owned.pods = parsePodScheduling(pods);
    if (!owned.pods) {
      return std::nullopt;
    }
  }
  return owned;
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
  return field(field(field(entry, "fieldsV1"), "f:spec"), "f:template").is_object();
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
  const auto& templ = field(spec, "template");
  state.templateDigest = base::jsonDigest(templ);
  if (const auto& text =
          field(field(field(templ, "metadata"), "annotations"), kPodSchedulingAnnotation);
      text.is_string()) {
    state.podScheduling = text.get<std::string>();
  }
  const auto& podSpec = field(templ, "spec");
  state.gated = hasOurGate(field(podSpec, "schedulingGates"));
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
  if (owned.pods) {
    document["pods"] = json::parse(serializePodScheduling(*owned.pods));
  }
  return document.dump();
}

std::string lastTemplateWriter(const json& object, const std::string& self) {
  const auto& entries = field(field(object, "metadata"), "managedFields");
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
