#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// apps/v1 StatefulSet: one pod set, rolled out pod by pod (or, under
// OnDelete, only as its pods are deleted).
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

class StatefulSetAdapter final : public KindAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    readMainPodSet(spec, countOf(memberOf(spec, "replicas"), 1), state);
    const auto& status = memberOf(object, "status");
    readRolloutCounts(status, state);
    // readyReplicas: what `kubectl rollout status` waits for.
    state.availableReplicas = countOf(memberOf(status, "readyReplicas"));
    const auto& strategy = memberOf(spec, "updateStrategy");
    state.onDelete = stringMember(strategy, "type") == "OnDelete";
    state.partition = countOf(memberOf(memberOf(strategy, "rollingUpdate"), "partition"));
    const auto update = stringMember(status, "updateRevision");
    state.revisionPending = !update.empty() && stringMember(status, "currentRevision") != update;
  }

  bool rolledOut(const TargetState& state) const override {
    // OnDelete: nothing rolls until pods are deleted; a partition keeps
    // the pods below it on the old template, and the revisions apart.
    return state.observedGeneration >= state.generation &&
           (state.onDelete || (state.updatedReplicas >= state.replicas - state.partition &&
                               state.availableReplicas >= state.replicas &&
                               (state.partition > 0 || !state.revisionPending)));
  }

  std::optional<PodOwner> ownerOf(const json& pod) const override {
    auto name = ownerNamed(pod, "StatefulSet");
    if (name.empty()) {
      return std::nullopt;
    }
    return PodOwner{std::move(name), "main"};
  }
};

}  // namespace

const KindAdapter& statefulSetAdapter() {
  static const StatefulSetAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
