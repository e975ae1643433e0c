#pragma once

#include <nlohmann/json.hpp>

#include "base/hash.h"
#include "core/deployment.h"
#include "core/pod_scheduling.h"

namespace gpuplacement::testing {

// What the API server does with our patch, for the fields we patch.
inline core::DeploymentState applyPatch(core::DeploymentState state, const nlohmann::json& patch) {
  using json = nlohmann::json;
  using core::Toleration;
  const auto& spec = patch.value("spec", json::object());
  const auto podSpec =
      spec.contains("template") ? spec["template"].value("spec", json::object()) : json::object();
  if (podSpec.contains("nodeSelector")) {
    for (const auto& [key, value] : podSpec["nodeSelector"].items()) {
      if (value.is_null()) {
        state.nodeSelector.erase(key);
      } else {
        state.nodeSelector[key] = value;
      }
    }
  }
  if (podSpec.contains("tolerations")) {
    state.tolerations.clear();
    for (const auto& item : podSpec["tolerations"]) {
      state.tolerations.push_back(core::tolerationFromJson(item));
    }
  }
  if (podSpec.contains("containers")) {
    for (const auto& item : podSpec["containers"]) {
      for (auto& container : state.containers) {
        if (container.name != item["name"]) {
          continue;
        }
        for (const char* list : {"limits", "requests"}) {
          auto& target = std::string(list) == "limits" ? container.limits : container.requests;
          for (const auto& [name, value] : item["resources"][list].items()) {
            if (value.is_null()) {
              target.erase(name);
            } else {
              target[name] = value;
            }
          }
        }
      }
    }
  }
  if (podSpec.contains("schedulingGates")) {
    // A list merged by name; {"$patch": "delete"} removes an entry.
    for (const auto& gate : podSpec["schedulingGates"]) {
      if (gate["name"] == core::kSchedulingGate) {
        state.gated = !gate.contains("$patch");
      }
    }
  }
  if (spec.contains("template") && spec["template"].contains("metadata")) {
    const auto text = spec["template"]["metadata"]
                          .value("annotations", json::object())
                          .value(core::kPodSchedulingAnnotation, json());
    state.podScheduling =
        text.is_null() ? std::nullopt : std::optional<std::string>(text.get<std::string>());
  }
  if (spec.contains("template")) {
    state.templateDigest = base::fnvAppend(state.templateDigest, spec["template"].dump());
  }
  const auto& annotation = patch["metadata"]["annotations"][core::kOwnedFieldsAnnotation];
  state.ownership = core::readOwnership(
      annotation.is_null() ? std::nullopt
                           : std::optional<std::string>(annotation.get<std::string>()));
  ++state.generation;
  return state;
}

}  // namespace gpuplacement::testing
