#pragma once

#include <nlohmann/json.hpp>

namespace gpuplacement::core {

// A pod template with a strategic merge patch of the form the template
// patch writes applied to it, as the API server applies one: maps merged
// key by key (null removes a key), the lists Kubernetes merges (containers
// and initContainers by name, topologySpreadConstraints by topologyKey,
// schedulingGates and resourceClaims by name, with `$patch: delete`
// entries) merged by their key, every other list replaced whole. Custom
// resources refuse a strategic merge patch: their pod templates are
// written by a JSON patch made from the template before and after this.
nlohmann::json mergePodTemplate(nlohmann::json templ, const nlohmann::json& patch);

}  // namespace gpuplacement::core
