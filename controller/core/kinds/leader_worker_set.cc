#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): replicas groups of `size`
// pods, a leader and size-1 workers, which serve one model together
// (sharded across nodes). The leader runs leaderTemplate where it is set,
// else workerTemplate. The group size is the team's, unless its
// GpuWorkload's spec.scaling.groupSize is Set.
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

constexpr const char* kNameLabel = "leaderworkerset.sigs.k8s.io/name";
constexpr const char* kWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index";
constexpr const char* kTemplates = "/spec/leaderWorkerTemplate";

class LeaderWorkerSetAdapter final : public KindAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    const auto& templates = memberOf(spec, "leaderWorkerTemplate");
    const std::int64_t groups = countOf(memberOf(spec, "replicas"), 1);
    const std::int64_t size = std::max<std::int64_t>(countOf(memberOf(templates, "size"), 1), 1);
    const auto pods = [](std::int64_t count) {
      return static_cast<std::int32_t>(std::min<std::int64_t>(count, INT32_MAX));
    };
    const std::string pointer = kTemplates;
    if (const auto& leader = memberOf(templates, "leaderTemplate"); leader.is_object()) {
      state.podSets.push_back(
          {"leader", "leader", true, pods(groups), pointer + "/leaderTemplate"});
      state.podSetTemplates.push_back(podTemplateFrom(leader, true));
      state.podSets.push_back(
          {"worker", "worker", true, pods(groups * (size - 1)), pointer + "/workerTemplate"});
    } else {
      // One template for leaders and workers alike.
      state.podSets.push_back(
          {"worker", "leader and worker", true, pods(groups * size), pointer + "/workerTemplate"});
    }
    state.podSetTemplates.push_back(podTemplateFrom(memberOf(templates, "workerTemplate"), true));
    static_cast<PodTemplateState&>(state) = state.podSetTemplates.front();
    state.replicas = pods(groups * size);
    // Its pod webhook gives a group's leader a group key, and the
    // controller its workers the same.
    state.groups = {pods(groups),
                    pods(size),
                    "spec.leaderWorkerTemplate.size",
                    {kNameLabel, "leaderworkerset.sigs.k8s.io/group-key"}};
    // Its webhook lets the size change (a new revision, rolled out group by
    // group); only subGroupSize is immutable.
    state.groups.sizePointer = pointer + "/size";
    // Its status counts groups: read as pods, as the other kinds count.
    const auto& status = memberOf(object, "status");
    state.statusReplicas = pods(countOf(memberOf(status, "replicas")) * size);
    state.updatedReplicas = pods(countOf(memberOf(status, "updatedReplicas")) * size);
    state.availableReplicas = pods(countOf(memberOf(status, "readyReplicas")) * size);
    state.revisionPending = trueCondition(status, "UpdateInProgress") != nullptr;
  }

  // Every group updated and ready, and no update in progress (the
  // controller rolls groups over as a StatefulSet rolls pods).
  bool rolledOut(const TargetState& state) const override {
    return !state.revisionPending && state.updatedReplicas >= state.replicas &&
           state.availableReplicas >= state.replicas;
  }

  std::optional<PodOwner> ownerOf(const json& pod) const override {
    auto name = podLabel(pod, kNameLabel);
    if (!name || name->empty()) {
      return std::nullopt;
    }
    // Index 0 is the leader; with no leaderTemplate it runs the workers'
    // template, which the placement reads as "worker" too.
    const bool leader = podLabel(pod, kWorkerIndexLabel) == "0";
    return PodOwner{std::move(*name), leader ? "leader" : "worker"};
  }
};

}  // namespace

const KindAdapter& leaderWorkerSetAdapter() {
  static const LeaderWorkerSetAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
