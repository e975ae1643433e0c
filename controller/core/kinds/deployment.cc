#include <algorithm>
#include <charconv>

#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// apps/v1 Deployment: one pod set, rolled out over running pods within
// its strategy's bounds.
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

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

class DeploymentAdapter final : public KindAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    readMainPodSet(spec, countOf(memberOf(spec, "replicas"), 1), state);
    const auto& strategy = memberOf(spec, "strategy");
    state.surge = rollingBoundOf(strategy, "maxSurge", state.replicas, true);
    state.unavailable = rollingBoundOf(strategy, "maxUnavailable", state.replicas, false);
    state.recreate = stringMember(strategy, "type") == "Recreate";
    // The Deployment controller's fencepost: both resolved to zero, one
    // pod may be unavailable (deployment/util ResolveFenceposts).
    if (!state.recreate && state.surge == 0 && state.unavailable == 0 && state.replicas > 0) {
      state.unavailable = 1;
    }
    const auto& status = memberOf(object, "status");
    readRolloutCounts(status, state);
    state.availableReplicas = countOf(memberOf(status, "availableReplicas"));
    const auto& conditions = memberOf(status, "conditions");
    if (conditions.is_array()) {
      for (const auto& condition : conditions) {
        if (stringMember(condition, "type") == "Progressing" &&
            stringMember(condition, "status") == "False" &&
            stringMember(condition, "reason") == "ProgressDeadlineExceeded") {
          state.progressDeadlineExceeded = true;
        }
      }
    }
  }

  bool rolledOut(const TargetState& state) const override {
    // Every replica updated and available, as `kubectl rollout status`
    // waits for, and no old pod left.
    return state.observedGeneration >= state.generation &&
           state.updatedReplicas >= state.replicas && state.availableReplicas >= state.replicas &&
           state.statusReplicas <= state.updatedReplicas;
  }

  std::optional<PodOwner> ownerOf(const json& pod) const override {
    // The Deployment: the ReplicaSet's name less the pod-template hash
    // ("chat-7d9f8b6c5" -> "chat").
    const auto replicaSet = ownerNamed(pod, "ReplicaSet");
    const auto dash = replicaSet.rfind('-');
    if (dash == std::string::npos) {
      return std::nullopt;
    }
    return PodOwner{replicaSet.substr(0, dash), "main"};
  }
};

}  // namespace

void readMainPodSet(const json& spec, std::int32_t replicas, TargetState& state) {
  state.replicas = replicas;
  state.podSets = {{"main", "main", true, replicas, "/spec/template"}};
  readPodTemplate(memberOf(spec, "template"), state, false);
  if (const auto& matchLabels = memberOf(memberOf(spec, "selector"), "matchLabels");
      matchLabels.is_object() && !matchLabels.empty()) {
    state.podLabels.clear();
    for (const auto& [key, value] : matchLabels.items()) {
      if (value.is_string()) {
        state.podLabels[key] = value.get<std::string>();
      }
    }
  }
}

const KindAdapter& deploymentAdapter() {
  static const DeploymentAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
