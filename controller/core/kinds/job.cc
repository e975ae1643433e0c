#include <algorithm>

#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// batch/v1 Job: one pod set, run once. Placed while suspended and never
// started; never moved after it starts (KEP-2926).
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::integerOf;
using base::memberOf;
using base::stringMember;

// The controller that runs a Job by default; any other spec.managedBy
// (MultiKueue, say) runs it elsewhere.
constexpr std::string_view kJobController = "kubernetes.io/job-controller";

class JobAdapter final : public RunOnceAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    std::int64_t pods = integerOf(memberOf(spec, "parallelism"), 1);
    if (const auto& completions = memberOf(spec, "completions"); completions.is_number_integer()) {
      pods = std::min(pods, completions.get<std::int64_t>());
    }
    readMainPodSet(spec, static_cast<std::int32_t>(std::clamp<std::int64_t>(pods, 0, INT32_MAX)),
                   state);
    auto& job = state.job;
    readSuspension(object, job, kJobController);
    const auto& status = memberOf(object, "status");
    readRolloutCounts(status, state);
    job.startTime = stringMember(status, "startTime");
    job.active = countOf(memberOf(status, "active"));
    readEnd(status, "Complete", job);
    // Its completionTime where the status has it; the condition's time
    // otherwise.
    if (const auto completed = stringMember(status, "completionTime");
        job.end == JobProgress::End::Complete && !completed.empty()) {
      job.endTime = completed;
    }
  }

  std::optional<PodOwner> ownerOf(const json& pod) const override {
    auto name = ownerNamed(pod, "Job");
    if (name.empty()) {
      return std::nullopt;
    }
    return PodOwner{std::move(name), "main"};
  }
};

}  // namespace

const KindAdapter& jobAdapter() {
  static const JobAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
