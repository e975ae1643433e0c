#include "core/kinds/pod_scheduling.h"

#include <algorithm>

#include "base/json_access.h"

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;
using base::memberOf;

json ungate() {
  return json::array({{{"$patch", "delete"}, {"name", kSchedulingGate}}});
}

bool tolerates(const json& list, const Toleration& toleration) {
  return std::any_of(list.begin(), list.end(), [&toleration](const json& item) {
    return item.is_object() && tolerationFromJson(item) == toleration;
  });
}

bool hasGate(const json& gates) {
  if (!gates.is_array()) {
    return false;
  }
  return std::any_of(gates.begin(), gates.end(), [](const json& gate) {
    return base::stringMember(gate, "name") == kSchedulingGate;
  });
}

}  // namespace

std::string serializePodScheduling(const PodScheduling& scheduling) {
  json document = json::object();
  if (!scheduling.nodeSelector.empty()) {
    document["nodeSelector"] = scheduling.nodeSelector;
  }
  if (!scheduling.tolerations.empty()) {
    json list = json::array();
    for (const auto& toleration : scheduling.tolerations) {
      list.push_back(tolerationToJson(toleration));
    }
    document["tolerations"] = std::move(list);
  }
  return document.dump();
}

std::optional<PodScheduling> parsePodScheduling(const json& document) {
  if (!document.is_object()) {
    return std::nullopt;
  }
  PodScheduling scheduling;
  if (const auto& selector = memberOf(document, "nodeSelector"); !selector.is_null()) {
    if (!selector.is_object()) {
      return std::nullopt;
    }
    for (const auto& [key, value] : selector.items()) {
      if (!value.is_string()) {
        return std::nullopt;
      }
      scheduling.nodeSelector[key] = value.get<std::string>();
    }
  }
  if (const auto& tolerations = memberOf(document, "tolerations"); !tolerations.is_null()) {
    if (!tolerations.is_array()) {
      return std::nullopt;
    }
    for (const auto& item : tolerations) {
      if (!item.is_object()) {
        return std::nullopt;
      }
      scheduling.tolerations.push_back(tolerationFromJson(item));
    }
  }
  return scheduling;
}

std::optional<GatedPod> gatedPodFromJson(const json& object) {
  const auto& spec = memberOf(object, "spec");
  if (!hasGate(memberOf(spec, "schedulingGates"))) {
    return std::nullopt;
  }
  GatedPod pod;
  const auto& metadata = memberOf(object, "metadata");
  pod.resourceVersion = base::stringMember(metadata, "resourceVersion");
  if (const auto& selector = memberOf(spec, "nodeSelector"); selector.is_object()) {
    for (const auto& [key, value] : selector.items()) {
      pod.nodeSelector[key] = base::stringOf(value);
    }
  }
  if (const auto& tolerations = memberOf(spec, "tolerations"); tolerations.is_array()) {
    pod.tolerations = tolerations;
  }
  if (const auto& text = memberOf(memberOf(metadata, "annotations"), kPodSchedulingAnnotation);
      text.is_string()) {
    pod.scheduling = text.get<std::string>();
  }
  return pod;
}

PodRelease planPodRelease(const GatedPod& pod) {
  PodRelease release;
  json spec = {{"schedulingGates", ungate()}};
  std::optional<PodScheduling> scheduling;
  if (pod.scheduling) {
    scheduling = parsePodScheduling(json::parse(*pod.scheduling, nullptr, false));
    if (!scheduling) {
      release.skipped.push_back(std::string("metadata.annotations[") + kPodSchedulingAnnotation +
                                "] is not the operator's: nothing added");
    }
  }
  if (scheduling) {
    json selector = json::object();
    for (const auto& [key, value] : scheduling->nodeSelector) {
      const auto current = pod.nodeSelector.find(key);
      if (current == pod.nodeSelector.end()) {
        selector[key] = value;
      } else if (current->second != value) {
        release.skipped.push_back("nodeSelector " + key + "=" + current->second +
                                  " is set on the pod; the placement needs " + value);
      }
    }
    if (!selector.empty()) {
      spec["nodeSelector"] = std::move(selector);
    }
    // An atomic list: the patch carries the pod's own entries as they are,
    // then ours.
    json next = pod.tolerations;
    for (const auto& toleration : scheduling->tolerations) {
      if (!tolerates(next, toleration)) {
        next.push_back(tolerationToJson(toleration));
      }
    }
    if (next != pod.tolerations) {
      spec["tolerations"] = std::move(next);
    }
  }
  release.patch = {{"metadata", {{"resourceVersion", pod.resourceVersion}}},
                   {"spec", std::move(spec)}};
  return release;
}

json gateOnlyRelease(const GatedPod& pod) {
  return {{"metadata", {{"resourceVersion", pod.resourceVersion}}},
          {"spec", {{"schedulingGates", ungate()}}}};
}

}  // namespace gpuplacement::core
