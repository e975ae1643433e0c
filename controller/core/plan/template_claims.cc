#include "core/plan/template_claims.h"

#include <algorithm>

namespace gpuplacement::core {
namespace {

using json = nlohmann::json;

const ContainerResources* containerNamed(const TargetState& live, const std::string& name) {
  for (const auto& container : live.containers) {
    if (container.name == name) {
      return &container;
    }
  }
  return nullptr;
}

bool listsOurs(const ContainerResources& container) {
  return std::any_of(container.claims.begin(), container.claims.end(),
                     [](const auto& claim) { return claim.first == kPodClaimName; });
}

// A container's resources.claims with ours added or taken out.
json claimsList(const ContainerResources& container, bool ours) {
  json list = json::array();
  for (const auto& [name, request] : container.claims) {
    if (name == kPodClaimName) {
      continue;
    }
    json item = {{"name", name}};
    if (!request.empty()) {
      item["request"] = request;
    }
    list.push_back(std::move(item));
  }
  if (ours) {
    list.push_back({{"name", kPodClaimName}});
  }
  return list.empty() ? json(nullptr) : list;
}

}  // namespace

ClaimsPatch planClaims(const TargetState& live, const DeviceClaim* claim,
                       const std::string& container, const std::string& workload,
                       const OwnedFields& owned, PatchPlan& plan) {
  ClaimsPatch patch;
  const auto present = live.podClaims.find(kPodClaimName);
  const bool ours = !owned.claimTemplate.empty();
  const std::string kind(base::nameOf(live.kind));
  if (claim) {
    const std::string wanted = claimTemplateName(workload, *claim);
    if (present != live.podClaims.end() && !ours) {
      // Appended, not chained: g++ 12 at -O2 warns on the chain (array-bounds).
      std::string conflict = "spec.resourceClaims[";
      conflict += kPodClaimName;
      conflict += "] is set on the ";
      conflict += kind;
      conflict += "; the placement needs it for ";
      conflict += wanted;
      plan.conflicts.push_back(std::move(conflict));
      return patch;
    }
    if (present == live.podClaims.end() || present->second != wanted) {
      patch.podClaims =
          json::array({{{"name", kPodClaimName}, {"resourceClaimTemplateName", wanted}}});
    }
    const auto* target = containerNamed(live, container);
    if (target && !listsOurs(*target)) {
      patch.container = container;
      patch.containerClaims = claimsList(*target, true);
    }
    plan.owned.claimTemplate = wanted;
    plan.owned.claimContainer = container;
    return patch;
  }
  if (!ours) {
    return patch;
  }
  // Ours goes, unless someone has changed it since.
  if (present != live.podClaims.end() && present->second == owned.claimTemplate) {
    patch.podClaims = json::array({{{"$patch", "delete"}, {"name", kPodClaimName}}});
  }
  if (const auto* target = containerNamed(live, owned.claimContainer);
      target && listsOurs(*target)) {
    patch.container = owned.claimContainer;
    patch.containerClaims = claimsList(*target, false);
  }
  return patch;
}

}  // namespace gpuplacement::core
