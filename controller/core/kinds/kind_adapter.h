#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/kinds/pod_set.h"
#include "core/kinds/target.h"
#include "core/kinds/target_kind.h"

// What the operator needs to know of a kind of target, in one place per
// kind (Kueue's jobframework.GenericJob): its pod sets and their
// templates, how far it has got running them, whether its templates may
// still change, and which pods are its own. How it is written (strategic
// merge or JSON patch) and suspended is its row in kTargetKindTraits. The
// plan, the template patch, the cluster view's pod ownership, the rollout
// check and the cache read kinds through this, never by their names.
namespace gpuplacement::core {

class KindAdapter {
 public:
  virtual ~KindAdapter() = default;

  // Reads the object's pod sets, their templates and its progress into
  // `state` (targetFromJson has read the metadata and ownership record).
  // Tolerant of anything missing or malformed: what is absent stays at its
  // default.
  virtual void read(const nlohmann::json& object, TargetState& state) const = 0;
  // The current templates run everywhere they should: a finished rollout,
  // or a run that has started.
  virtual bool rolledOut(const TargetState& state) const = 0;
  // The templates may still change (a Job's only until it starts).
  virtual bool templateMutable(const TargetState& state) const {
    (void)state;
    return true;
  }
  // The target and pod set a pod was made for, when a target of this kind
  // made it (read from its ownerReferences and labels).
  virtual std::optional<PodOwner> ownerOf(const nlohmann::json& pod) const = 0;
  // The JSON patch operations (RFC 6902) that turn pod set `index`'s
  // template from `before` (its PodTemplateState::raw) into `after`,
  // appended to `ops`: by default their diff, each under the pod set's
  // templatePointer. A kind whose object holds no pod template (a TrainJob
  // overrides its runtime's) writes its own fields instead; the error
  // names a change it cannot carry, and nothing is appended then.
  virtual std::string templateOps(const TargetState& live, std::size_t index,
                                  const nlohmann::json& before, const nlohmann::json& after,
                                  nlohmann::json& ops) const;
  // The object's field that holds `field` of pod set `index`'s template
  // ("spec.template.spec.tolerations", as the template patch names it), for
  // messages: by default under the pod set's templatePointer.
  virtual std::string fieldOf(const TargetState& live, std::size_t index,
                              std::string_view field) const;
};

// A kind that runs once (a Job, a JobSet, a RayJob, a TrainJob): rolled
// out once its run has started, its templates open to change only while
// it waits suspended and has not started.
class RunOnceAdapter : public KindAdapter {
 public:
  bool rolledOut(const TargetState& state) const override { return state.job.started(); }
  bool templateMutable(const TargetState& state) const override {
    return state.job.suspended && !state.job.started();
  }
};

const KindAdapter& adapterOf(TargetKind kind);

}  // namespace gpuplacement::core
