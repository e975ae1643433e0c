#pragma once

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/hash.h"
#include "core/kinds/pod_scheduling.h"
#include "core/kinds/target.h"
#include "core/plan/template_patch.h"

namespace gpuplacement::testing {

// planTemplatePatch with its request spelled out, as the tables write it.
inline core::PatchPlan planPatch(const core::TargetState& live, const core::Scheduling* desired,
                                 std::vector<std::string> containers, std::string workload,
                                 std::string resourceVersion,
                                 core::PlaceAt where = core::PlaceAt::PodTemplate,
                                 bool start = false) {
  core::PatchRequest request;
  request.desired = desired;
  request.containers = std::move(containers);
  request.workload = std::move(workload);
  request.resourceVersion = std::move(resourceVersion);
  request.where = where;
  request.start = start;
  return core::planTemplatePatch(live, request);
}

// What the API server does with our patch, for the fields we patch.
inline core::TargetState applyPatch(core::TargetState state, const nlohmann::json& patch) {
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
        if (container.name != item["name"].get<std::string>()) {
          continue;
        }
        for (const char* list : {"limits", "requests"}) {
          auto& target = std::string(list) == "limits" ? container.limits : container.requests;
          if (!item.contains("resources") || !item["resources"].contains(list)) {
            continue;  // a request without a limit (host memory), or the reverse
          }
          for (const auto& [name, value] : item["resources"][list].items()) {
            if (value.is_null()) {
              target.erase(name);
            } else {
              target[name] = value;
            }
          }
        }
        // resources.claims: a list a strategic merge patch replaces whole.
        if (item.contains("resources") && item["resources"].contains("claims")) {
          container.claims.clear();
          for (const auto& claim : item["resources"]["claims"]) {
            container.claims.emplace_back(claim["name"], claim.value("request", ""));
          }
        }
      }
    }
  }
  if (podSpec.contains("resourceClaims")) {
    // A list merged by name; {"$patch": "delete"} removes an entry.
    for (const auto& entry : podSpec["resourceClaims"]) {
      if (entry.contains("$patch")) {
        state.podClaims.erase(entry["name"].get<std::string>());
      } else {
        state.podClaims[entry["name"]] = entry.value("resourceClaimTemplateName", "");
      }
    }
  }
  if (podSpec.contains("topologySpreadConstraints")) {
    // A list merged by topologyKey; {"$patch": "delete"} removes an entry.
    auto& keys = state.spreadKeys;
    for (const auto& entry : podSpec["topologySpreadConstraints"]) {
      const std::string key = entry["topologyKey"];
      keys.erase(std::remove(keys.begin(), keys.end(), key), keys.end());
      if (!entry.contains("$patch")) {
        keys.push_back(key);
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
  if (spec.contains("suspend")) {
    state.job.suspended = spec["suspend"].get<bool>();
  }
  const auto& annotation = patch["metadata"]["annotations"][core::kOwnedFieldsAnnotation];
  state.ownership = core::readOwnership(
      annotation.is_null() ? std::nullopt
                           : std::optional<std::string>(annotation.get<std::string>()));
  ++state.generation;
  return state;
}

}  // namespace gpuplacement::testing
