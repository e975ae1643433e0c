#pragma once

// Kept apart from core/plan/job_plan.h, which tests include beside their own
// reconcile(): these need the plan's status draft.
#include <optional>

#include "core/plan/job_plan.h"
#include "core/plan/status_draft.h"

namespace gpuplacement::core {

// The steps planWorkload (core/plan/workload_plan.cc) takes for a target whose
// kind runs once (traitsOf(kind).runsOnce): a Job.
// A Job that started on the placement in force keeps it: what it carries,
// its progress, the run once it has ended, and a better placement only as
// a recommendation for its next run.
void holdJob(const WorkloadInput& input, const WorkloadIntent& intent,
             const PlacementEngine& engine, const std::optional<Assessment>& current,
             reconcile::StatusDraft& draft, WorkloadPlan& plan);
// Whether the target runs once and cannot take a placement now: held on the
// one it started with, or started before any.
bool jobCannotMove(const WorkloadInput& input, const WorkloadIntent& intent,
                   const PlacementEngine& engine, const std::optional<Assessment>& current,
                   reconcile::StatusDraft& draft, WorkloadPlan& plan);
// A Job of this name that is not the one placed (deleted and created
// again): the record of the other one is dropped, and this one is placed
// afresh while it can be.
void forgetAnotherJob(const WorkloadInput& input, WorkloadPlan& plan);
// The Job placed is gone (its ttlSecondsAfterFinished, or by hand): its run
// stays recorded, and nothing is wrong.
void recordJobGone(const TargetRef& target, reconcile::StatusDraft& draft, WorkloadPlan& plan);

}  // namespace gpuplacement::core
