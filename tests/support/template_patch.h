#pragma once

#include <algorithm>

#include <nlohmann/json.hpp>

#include "base/hash.h"
#include "core/kinds/ownership.h"
#include "core/kinds/pod_scheduling.h"
#include "core/kinds/pod_template_read.h"
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

// The TrainJob a TrainJob's state was read from, as far as the operator
// writes it (core/kinds/train_job.cc): its override entries (the one for
// its pod set with the fields read, the others targeting other jobs) and
// spec.trainer.
inline nlohmann::json trainJobSpecOf(const core::TargetState& state) {
  using json = nlohmann::json;
  const auto& raw = state.podSetTemplates.at(0).raw;
  const auto& facts = raw.at("trainJob");
  json spec = json::object();
  if (const int count = facts.at("overrides"); count >= 0) {
    spec["podSpecOverrides"] = json::array();
    for (int i = 0; i < count; ++i) {
      json entry = {{"targetJobs", {{{"name", "other-" + std::to_string(i)}}}}};
      if (i == facts.at("override").get<int>()) {
        entry["targetJobs"] = {{{"name", state.podSets.at(0).name}}};
        if (facts.at("shared") == true) {
          entry["targetJobs"].push_back({{"name", "launcher"}});
        }
        for (const auto& [field, value] : raw.at("spec").items()) {
          if (field != "containers") {
            entry[field] = value;
          }
        }
      }
      spec["podSpecOverrides"].push_back(std::move(entry));
    }
  }
  if (facts.at("trainer") == true) {
    spec["trainer"] = {{"numNodes", state.podSets.at(0).replicas}};
    const auto& container = raw.at("spec").at("containers").at(0);
    if (container.contains("resources")) {
      spec["trainer"]["resourcesPerNode"] = container.at("resources");
    }
  }
  return spec;
}

// What the API server does with a JSON patch (a custom kind's write): the
// ops applied to the pod sets' templates as stored, spec.suspend and the
// annotations, each template read again.
inline core::TargetState applyJsonPatch(core::TargetState state, const nlohmann::json& patch) {
  using json = nlohmann::json;
  json object = {{"metadata", {{"resourceVersion", ""}}}};
  if (state.kind == core::TargetKind::TrainJob) {
    // No pod template in the object: its fields, patched and read again.
    object["metadata"]["name"] = state.job.runsOn;
    if (state.annotated) {
      object["metadata"]["annotations"] = json::object();
      if (state.ownership.form == core::OwnershipRecord::Form::Readable) {
        object["metadata"]["annotations"][core::kOwnedFieldsAnnotation] =
            core::serializeOwnedFields(state.ownership.fields);
      }
    }
    object["spec"] = trainJobSpecOf(state);
    object["spec"]["suspend"] = state.job.suspended;
    object = object.patch(patch);
    auto read = core::targetFromJson(core::TargetKind::TrainJob, object);
    read.job = state.job;
    read.job.suspended = object["spec"]["suspend"] == true;
    read.uid = state.uid;
    read.generation = state.generation + 1;
    return read;
  }
  if (state.annotated) {
    object["metadata"]["annotations"] = json::object();
    if (state.ownership.form == core::OwnershipRecord::Form::Readable) {
      object["metadata"]["annotations"][core::kOwnedFieldsAnnotation] =
          core::serializeOwnedFields(state.ownership.fields);
    }
  }
  const auto suspend = core::traitsOf(state.kind).suspendPointer;
  if (!suspend.empty()) {
    object[json::json_pointer(std::string(suspend))] = state.job.suspended;
  }
  for (std::size_t i = 0; i < state.podSets.size(); ++i) {
    object[json::json_pointer(state.podSets[i].templatePointer)] = state.podSetTemplates[i].raw;
  }
  // The groups' size and its bounds, where the kind lets them be written.
  auto& groups = state.groups;
  const std::pair<const std::string*, std::int32_t*> sizes[] = {
      {&groups.sizePointer, &groups.size},
      {&groups.bounds.minPointer, &groups.bounds.min},
      {&groups.bounds.maxPointer, &groups.bounds.max}};
  for (const auto& [pointer, value] : sizes) {
    if (!pointer->empty()) {
      object[json::json_pointer(*pointer)] = *value;
    }
  }
  object = object.patch(patch);
  for (const auto& [pointer, value] : sizes) {
    if (!pointer->empty()) {
      *value = object.at(json::json_pointer(*pointer)).get<std::int32_t>();
    }
  }
  bool own = false;
  for (std::size_t i = 0; i < state.podSets.size(); ++i) {
    state.podSetTemplates[i] = core::kinds::podTemplateFrom(
        object.at(json::json_pointer(state.podSets[i].templatePointer)), true);
    if (state.podSets[i].placedByDefault && !own) {
      static_cast<core::PodTemplateState&>(state) = state.podSetTemplates[i];
      own = true;
    }
  }
  if (!suspend.empty()) {
    state.job.suspended = object.at(json::json_pointer(std::string(suspend))) == true;
  }
  const auto& annotations = object["metadata"].value("annotations", json::object());
  state.annotated = object["metadata"].contains("annotations");
  const auto record = annotations.value(core::kOwnedFieldsAnnotation, json());
  state.ownership = core::readOwnership(
      record.is_string() ? std::optional<std::string>(record.get<std::string>()) : std::nullopt);
  ++state.generation;
  return state;
}

// What the API server does with our patch, for the fields we patch.
inline core::TargetState applyPatch(core::TargetState state, const nlohmann::json& patch) {
  using json = nlohmann::json;
  using core::Toleration;
  if (patch.is_array()) {
    return applyJsonPatch(std::move(state), patch);
  }
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
