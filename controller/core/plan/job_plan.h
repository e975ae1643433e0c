#pragma once

#include <optional>
#include <string>

#include "base/time_format.h"
#include "core/decide/engine.h"
#include "core/decide/render.h"
#include "core/kinds/target.h"
#include "core/plan/status.h"

// What is particular to placing a Job: it runs its pod template once, so it
// is placed before its first pod exists (created suspended, then placed and
// resumed in one write) and never moved once it has started; when it ends,
// its run is priced.
namespace gpuplacement::core {

enum class JobStep {
  Place,            // suspended and never started: place it, and resume it in the same write
  Hold,             // started on the placement in force: never moved mid-run
  StartedUnplaced,  // started before the operator placed it: its template can no longer change
};

// `placedHere`: status.applied names this Job (the operator placed it).
JobStep jobStep(const TargetState& job, bool placedHere);

// The recommendation note of a Job held on its placement.
std::string heldJobNote(const TargetState& job, const std::string& name);

// Applied=False, reason JobStartedUnplaced. `queued`: its queue (Kueue,
// spec.managedBy) started it.
std::string startedUnplacedMessage(TargetKind kind, const std::string& job,
                                   const std::string& workload, bool queued);

// Applied=False, reason JobResourcesImmutable: the server will not take
// the resources the placement needs; names the server version, the field,
// and what the user can do. `container`: the one that gets the devices;
// `serverWords`: the server's refusal, when it was tried.
std::string resourcesImmutableMessage(const std::string& job, const std::string& serverVersion,
                                      const std::string& container, const Scheduling& scheduling,
                                      const std::string& serverWords);

// Applied=False, reason ResourcesFixed: the kind's controller keeps its
// pods' resources as created (a JobSet's webhook), and the placement needs
// others in the pod sets it places (`podSets`, by name); names the field
// and what the user can do.
std::string resourcesFixedMessage(TargetKind kind, const std::string& name,
                                  const std::vector<std::string>& podSets,
                                  const std::string& container, const Scheduling& scheduling);

// Ready for a Job: pending, running, complete (True) or failed. `pending`:
// its pods the scheduler cannot place, and the scheduler's message;
// `workload`: the GpuWorkload placing it.
struct Readiness {
  std::string status;  // True or False
  std::string reason;
  std::string message;
};
Readiness jobReadiness(const TargetState& job, const std::string& name, const std::string& workload,
                       const std::string& instanceType, int pendingPods,
                       const std::string& pendingMessage);

// The run of a Job that has ended, priced at the placement it ran on;
// nullopt while it runs, or when its times cannot be read.
std::optional<JobRunRecord> jobRun(const TargetState& job, const std::string& name,
                                   const Placement& inForce);

}  // namespace gpuplacement::core
