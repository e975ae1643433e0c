#include "core/kinds/pod_sets.h"

#include <algorithm>

namespace gpuplacement::core {

PlacedPodSets placedPodSets(const TargetState& target, const std::vector<std::string>& names) {
  PlacedPodSets placed;
  for (const auto& name : names) {
    const bool known = std::any_of(target.podSets.begin(), target.podSets.end(),
                                   [&name](const PodSet& podSet) { return podSet.name == name; });
    if (!known) {
      std::string have;
      for (const auto& podSet : target.podSets) {
        have += (have.empty() ? "" : ", ") + podSet.name;
      }
      placed.error = "spec.targetRef.podSets: the " + std::string(base::nameOf(target.kind)) +
                     " has no pod set named " + name + " (it has " +
                     (have.empty() ? std::string("none") : have) + ")";
      return placed;
    }
  }
  for (std::size_t i = 0; i < target.podSets.size(); ++i) {
    const auto& podSet = target.podSets[i];
    if (names.empty() ? podSet.placedByDefault
                      : std::find(names.begin(), names.end(), podSet.name) != names.end()) {
      placed.indexes.push_back(i);
    }
  }
  return placed;
}

std::vector<std::string> placedPodSetNames(const TargetState& target,
                                           const std::vector<std::string>& names) {
  std::vector<std::string> placed;
  for (const auto index : placedPodSets(target, names).indexes) {
    placed.push_back(target.podSets[index].name);
  }
  return placed;
}

std::int32_t placedReplicas(const TargetState& target, const PlacedPodSets& placed) {
  std::int64_t pods = 0;
  for (const auto index : placed.indexes) {
    pods += target.podSets[index].replicas;
  }
  return static_cast<std::int32_t>(std::min<std::int64_t>(pods, INT32_MAX));
}

TargetState podSetView(const TargetState& target, std::size_t index) {
  if (target.podSetTemplates.size() != target.podSets.size() ||
      index >= target.podSetTemplates.size()) {
    return target;
  }
  TargetState view = target;
  static_cast<PodTemplateState&>(view) = target.podSetTemplates[index];
  return view;
}

}  // namespace gpuplacement::core
