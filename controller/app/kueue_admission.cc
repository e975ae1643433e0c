#include "app/kueue_admission.h"

#include <map>

#include "app/resource_paths.h"
#include "base/time_format.h"
#include "runtime/controller_builder.h"

namespace gpuplacement::app {
namespace {

using runtime::ReconcileResult;

bool ours(const core::AdmissionCheckView* check) {
  return check && check->controllerName == core::kKueueCheckController;
}

// An AdmissionCheck of ours that does not say it is Active yet.
bool inactive(const core::AdmissionCheckView*, const core::AdmissionCheckView* current) {
  return ours(current) && !current->active;
}

// A Workload whose check state, reservation or flavors may want an answer.
bool mayWantAnswer(const core::KueueWorkload* previous, const core::KueueWorkload* current) {
  return current && (!previous || *previous != *current);
}

}  // namespace

void KueueHandOffs::set(const TargetKey& target, core::KueueHandOff handOff) {
  auto [entry, added] = handOffs_.try_emplace(target, handOff);
  if (!added) {
    if (entry->second == handOff) {
      return;
    }
    entry->second = std::move(handOff);
  }
  changed_.notify(target);
}

void KueueHandOffs::erase(const TargetKey& target) {
  if (handOffs_.erase(target) > 0) {
    changed_.notify(target);
  }
}

const core::KueueHandOff* KueueHandOffs::of(const TargetKey& target) const {
  const auto found = handOffs_.find(target);
  return found == handOffs_.end() ? nullptr : &found->second;
}

std::string ourCheckOn(const ObjectCaches& caches, const core::KueueWorkload& workload) {
  for (const auto& state : workload.checks) {
    if (ours(caches.admissionChecks().get(state.name))) {
      return state.name;
    }
  }
  return "";
}

KueueAdmissionReconciler::KueueAdmissionReconciler(runtime::ControllerSet& controllers,
                                                   ObjectCaches& caches, KueueHandOffs& handOffs,
                                                   ApiWrites& writes, Logger& log,
                                                   MetricsRegistry& metrics,
                                                   const runtime::Clock& clock)
    : caches_(caches),
      handOffs_(handOffs),
      writes_(writes),
      log_(log),
      clock_(clock),
      answers_(metrics.counter("gpu_placement_kueue_admission_answers_total",
                               "Answers given to Kueue's admission check on its Workloads: Ready "
                               "(with the placement's node selector and tolerations) or Retry",
                               {"state"})) {
  runtime::ControllerBuilder(controllers, "kueue-admissioncheck")
      .forKind(caches.admissionChecks(), inactive)
      .complete([this](const runtime::ObjectKey& key) { return reconcileCheck(key); });
  runtime::ControllerBuilder(controllers, "kueue-workload")
      .forKind(caches.kueueWorkloads(), mayWantAnswer)
      // What the GpuWorkload of the Workload's Job hands over changed.
      .watches(
          handOffs.changed(),
          [this](const TargetKey& target) { return caches_.kueueWorkloadsByTarget().of(target); })
      // A GpuWorkload came or went: a Workload of its Job may wait on it.
      .watches(caches.workloads(),
               [this](const std::string& key, const CachedWorkload* previous,
                      const CachedWorkload* current) {
                 std::vector<std::string> keys;
                 if (previous && current) {
                   return keys;
                 }
                 const auto& workload = current ? *current : *previous;
                 if (workload.targetKind == core::TargetKind::Job) {
                   keys = caches_.kueueWorkloadsByTarget().of(
                       {core::TargetKind::Job, {namespaceOf(key), workload.targetName}});
                 }
                 return keys;
               })
      // A check of ours or a flavor arrived or changed: the Workloads
      // waiting on it are answered now.
      .watches(caches.admissionChecks(),
               [this](const std::string&, const core::AdmissionCheckView* previous,
                      const core::AdmissionCheckView* current) {
                 return ours(previous) || ours(current) ? allWorkloads()
                                                        : std::vector<std::string>{};
               })
      .watches(caches.flavors(), [this](const std::string&, const core::ResourceFlavorView*,
                                        const core::ResourceFlavorView*) { return allWorkloads(); })
      .complete([this](const runtime::ObjectKey& key) { return reconcileWorkload(key); });
}

std::vector<std::string> KueueAdmissionReconciler::allWorkloads() const {
  std::vector<std::string> keys;
  caches_.kueueWorkloads().forEach(
      [&keys](const std::string& key, const core::KueueWorkload&) { keys.push_back(key); });
  return keys;
}

std::vector<std::string> KueueAdmissionReconciler::ourChecks() const {
  std::vector<std::string> names;
  caches_.admissionChecks().forEach(
      [&names](const std::string& key, const core::AdmissionCheckView& check) {
        if (ours(&check)) {
          names.push_back(key);
        }
      });
  return names;
}

asio::awaitable<ReconcileResult> KueueAdmissionReconciler::reconcileCheck(
    const runtime::ObjectKey& key) {
  const auto* check = caches_.admissionChecks().get(key.str());
  if (!inactive(nullptr, check)) {
    co_return ReconcileResult::done();
  }
  const auto body =
      core::admissionCheckActiveApply(key.name, base::formatRfc3339(clock_.systemNow()));
  auto applied = co_await writes_.applyKueueStatus(
      admissionCheckStatusPath(key.name), body, "patch admissionchecks/status.kueue.x-k8s.io", "");
  if (!applied) {
    if (applied.error().notFound()) {
      co_return ReconcileResult::done();
    }
    co_return ReconcileResult::error("setting AdmissionCheck " + key.name +
                                     " Active: " + applied.error().describe());
  }
  log_.info("Kueue admission check active", {{"admissionCheck", key.name}});
  co_return ReconcileResult::done();
}

asio::awaitable<ReconcileResult> KueueAdmissionReconciler::reconcileWorkload(
    const runtime::ObjectKey& key) {
  const auto* cached = caches_.kueueWorkloads().get(key.str());
  if (!cached) {
    co_return ReconcileResult::done();
  }
  const core::KueueWorkload workload = *cached;  // the cache may change while the write waits
  std::map<std::string, core::ResourceFlavorView> flavors;
  caches_.flavors().forEach(
      [&flavors](const std::string& name, const core::ResourceFlavorView& view) {
        flavors.emplace(name, view);
      });
  const core::Scheduling nothing;
  for (const auto& check : ourChecks()) {
    core::AdmissionRequest request;
    request.workload = &workload;
    request.check = check;
    request.flavors = &flavors;
    request.scheduling = &nothing;  // unless a GpuWorkload places it
    std::string leftToKueue;
    const bool job = workload.ownerKind == "Job" && !workload.ownerName.empty();
    const TargetKey target{core::TargetKind::Job, {key.ns, workload.ownerName}};
    if (!job) {
      leftToKueue =
          "the operator places only batch/v1 Jobs through Kueue's admission so far: "
          "admitted where its flavor says";
    } else if (caches_.workloadsByTarget().of(target).empty()) {
      leftToKueue =
          "no GpuWorkload targets Job " + workload.ownerName + ": admitted where its flavor says";
    } else {
      const auto* handOff = handOffs_.of(target);
      if (!handOff || handOff->flavor != workload.reservedFlavor("main")) {
        // Its GpuWorkload has not decided within this reservation yet: it
        // hands over when it has.
        co_return ReconcileResult::done();
      }
      request.scheduling = handOff->scheduling ? &*handOff->scheduling : nullptr;
      request.podSets = handOff->podSets;
      request.unplaced = handOff->unplaced;
    }
    auto answer = core::answerAdmission(request);
    if (!answer) {
      continue;
    }
    if (!leftToKueue.empty()) {
      answer->message = leftToKueue;
      answer->updates.clear();
    }
    const auto body = core::admissionCheckApply(workload, key.ns, check, *answer,
                                                base::formatRfc3339(clock_.systemNow()));
    auto applied = co_await writes_.applyKueueStatus(
        kueueWorkloadStatusPath(key), body, "patch workloads/status.kueue.x-k8s.io", key.ns);
    if (!applied) {
      if (applied.error().notFound()) {
        co_return ReconcileResult::done();
      }
      co_return ReconcileResult::error("answering admission check " + check + " on Workload " +
                                       key.str() + ": " + applied.error().describe());
    }
    answers_.inc({answer->state});
    log_.info("answered Kueue's admission check", {{"workload", key.str()},
                                                   {"admissionCheck", check},
                                                   {"state", answer->state},
                                                   {"message", answer->message}});
  }
  co_return ReconcileResult::done();
}

}  // namespace gpuplacement::app
