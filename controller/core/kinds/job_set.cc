#include <algorithm>

#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// JobSet (jobset.x-k8s.io/v1alpha2): replicated jobs, each `replicas` Jobs
// of one template, run once together (a trainer's workers, a driver beside
// them). The JobSet controller makes the child Jobs, and while the JobSet
// is suspended its webhook lets a template change only its labels,
// annotations, nodeSelector, tolerations and schedulingGates: placed while
// it waits suspended, its resources as its manifest asks.
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// The labels the JobSet controller puts on every pod of its Jobs.
constexpr const char* kJobSetNameLabel = "jobset.sigs.k8s.io/jobset-name";
constexpr const char* kReplicatedJobLabel = "jobset.sigs.k8s.io/replicatedjob-name";
// The controller that runs a JobSet by default; any other spec.managedBy
// (MultiKueue, say) runs it elsewhere.
constexpr std::string_view kJobSetController = "jobset.sigs.k8s.io/jobset-controller";

// The pods one replicated job runs at once: its Jobs times each Job's
// parallelism (no more than its completions).
std::int64_t podsOf(const json& replicatedJob) {
  const auto& jobSpec = memberOf(memberOf(replicatedJob, "template"), "spec");
  // Each factor a count (0 to INT32_MAX): their product cannot overflow.
  std::int64_t perJob = countOf(memberOf(jobSpec, "parallelism"), 1);
  if (const auto& completions = memberOf(jobSpec, "completions"); completions.is_number_integer()) {
    perJob = std::min<std::int64_t>(perJob, countOf(completions));
  }
  return std::int64_t{countOf(memberOf(replicatedJob, "replicas"), 1)} * perJob;
}

// Its run: started once it was resumed (the Suspended condition turned
// False) or, created running, once a Job of it is active; ended by its
// Completed or Failed condition.
void readRun(const json& object, JobProgress& job) {
  const auto& status = memberOf(object, "status");
  std::int64_t jobs = 0;
  for (const auto& replicated : memberOf(status, "replicatedJobsStatus")) {
    jobs += std::int64_t{countOf(memberOf(replicated, "active"))} +
            countOf(memberOf(replicated, "ready")) + countOf(memberOf(replicated, "succeeded")) +
            countOf(memberOf(replicated, "failed"));
  }
  job.active = static_cast<std::int32_t>(std::min<std::int64_t>(jobs, INT32_MAX));
  for (const auto& condition : memberOf(status, "conditions")) {
    if (stringMember(condition, "type") == "Suspended" &&
        stringMember(condition, "status") == "False") {
      job.startTime = stringMember(condition, "lastTransitionTime");
    }
  }
  if (job.startTime.empty() && !job.suspended && jobs > 0) {
    job.startTime = stringMember(memberOf(object, "metadata"), "creationTimestamp");
  }
  readEnd(status, "Completed", job);
}

// A JobSet a TrainJob made (its controlling owner) is placed through the
// TrainJob: the Trainer applies it again from the TrainJob and its
// runtime, and takes any other change of its templates back.
void readMaker(const json& object, TargetState& state) {
  const auto maker = ownerNamed(object, "TrainJob");
  if (maker.empty()) {
    return;
  }
  state.placedThrough = "the Trainer made JobSet " +
                        stringMember(memberOf(object, "metadata"), "name") + " for TrainJob " +
                        maker +
                        " (its ownerReference), and applies it again from the TrainJob: place "
                        "the TrainJob (spec.targetRef kind: TrainJob, name: " +
                        maker + ")";
}

class JobSetAdapter final : public RunOnceAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    const auto& spec = memberOf(object, "spec");
    const auto& replicatedJobs = memberOf(spec, "replicatedJobs");
    std::int64_t pods = 0;
    if (replicatedJobs.is_array()) {
      for (std::size_t i = 0; i < replicatedJobs.size(); ++i) {
        const auto& replicated = replicatedJobs[i];
        const auto count =
            static_cast<std::int32_t>(std::min<std::int64_t>(podsOf(replicated), INT32_MAX));
        state.podSets.push_back(
            {stringMember(replicated, "name"), "job", true, count,
             "/spec/replicatedJobs/" + std::to_string(i) + "/template/spec/template"});
        state.podSetTemplates.push_back(podTemplateFrom(
            memberOf(memberOf(memberOf(replicated, "template"), "spec"), "template"), true));
        pods += count;
        // The group a model spans nodes in: the replicated job of the most
        // pods (its workers, beside a driver or a launcher).
        if (!state.groups.formed() || count > state.groups.size) {
          state.groups = {
              1,  count, "spec.replicatedJobs[" + std::to_string(i) + "].template.spec.parallelism",
              {}, true,  true};
        }
      }
    }
    if (!state.podSetTemplates.empty()) {
      static_cast<PodTemplateState&>(state) = state.podSetTemplates.front();
    }
    state.replicas = static_cast<std::int32_t>(std::min<std::int64_t>(pods, INT32_MAX));
    auto& job = state.job;
    readSuspension(object, job, kJobSetController);
    readRun(object, job);
    readMaker(object, state);
  }

  // Its pods are its Jobs' (whose adapter claims them first): the labels
  // name the JobSet and the replicated job.
  std::optional<PodOwner> ownerOf(const json& pod) const override {
    auto name = podLabel(pod, kJobSetNameLabel);
    if (!name || name->empty()) {
      return std::nullopt;
    }
    return PodOwner{std::move(*name), podLabel(pod, kReplicatedJobLabel).value_or("")};
  }
};

}  // namespace

const KindAdapter& jobSetAdapter() {
  static const JobSetAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
