#include "core/kinds/strategic_merge.h"

#include <algorithm>
#include <string_view>

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

// The merge key of each list of a pod template that a strategic merge
// patch merges (k8s.io/api/core/v1's patchMergeKey tags); "" for a list
// replaced whole.
std::string_view mergeKeyOf(std::string_view field) {
  if (field == "containers" || field == "initContainers" || field == "schedulingGates" ||
      field == "resourceClaims" || field == "volumes" || field == "env") {
    return "name";
  }
  if (field == "topologySpreadConstraints") {
    return "topologyKey";
  }
  return "";
}

void mergeObject(json& target, const json& patch);

// A patch that only removes (every leaf null): what it empties goes with
// it, as a built-in object's empty map is not stored (omitempty), so that
// taking back what was added leaves the template as it was.
bool onlyRemoves(const json& patch) {
  if (patch.is_null()) {
    return true;
  }
  return patch.is_object() && std::all_of(patch.begin(), patch.end(), onlyRemoves);
}

void mergeList(json& target, const json& patch, std::string_view key) {
  if (!target.is_array()) {
    target = json::array();
  }
  for (const auto& item : patch) {
    const auto name = item.is_object() ? item.value(std::string(key), json()) : json();
    auto found = target.end();
    for (auto it = target.begin(); it != target.end(); ++it) {
      if (it->is_object() && it->value(std::string(key), json()) == name && !name.is_null()) {
        found = it;
        break;
      }
    }
    if (item.is_object() && item.value("$patch", "") == "delete") {
      if (found != target.end()) {
        target.erase(found);
      }
      continue;
    }
    if (found != target.end()) {
      mergeObject(*found, item);
    } else {
      target.push_back(item);
    }
  }
  if (target.empty()) {
    target = nullptr;  // the API server drops an emptied list
  }
}

void mergeObject(json& target, const json& patch) {
  if (!patch.is_object()) {
    target = patch;
    return;
  }
  if (!target.is_object()) {
    target = json::object();
  }
  for (const auto& [name, value] : patch.items()) {
    if (value.is_null()) {
      target.erase(name);
      continue;
    }
    auto& slot = target[name];
    if (value.is_object()) {
      mergeObject(slot, value);
      if (slot.empty() && onlyRemoves(value)) {
        target.erase(name);
      }
    } else if (const auto key = mergeKeyOf(name); value.is_array() && !key.empty()) {
      mergeList(slot, value, key);
      if (slot.is_null()) {
        target.erase(name);
      }
    } else {
      slot = value;
    }
  }
}

}  // namespace

json mergePodTemplate(json templ, const json& patch) {
  mergeObject(templ, patch);
  return templ;
}

}  // namespace gpuplacement::core
