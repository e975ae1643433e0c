#include "app/policy_reconciler.h"

#include "runtime/controller_builder.h"

namespace gpuplacement::app {
namespace {

using runtime::ReconcileResult;

constexpr auto kCountInterval = std::chrono::seconds(10);
// How often a policy's status looks at the cluster again (capacity source,
// detected labels, whether nodes can be read).
constexpr auto kClusterRefresh = std::chrono::seconds(60);

// A policy's workload count changes when one is added, removed or moved.
std::vector<std::string> policiesCounting(const std::string&, const CachedWorkload* previous,
                                          const CachedWorkload* current) {
  if (previous && current && previous->policyName == current->policyName) {
    return {};
  }
  std::vector<std::string> policies;
  for (const auto* workload : {previous, current}) {
    if (workload) {
      policies.push_back(workload->policyName);
    }
  }
  return policies;
}

}  // namespace

PolicyReconciler::PolicyReconciler(runtime::ControllerSet& controllers, ObjectCaches& caches,
                                   PolicyEngines& engines, ApiWrites& writes,
                                   WorkloadReconciler& workloads, Logger& log,
                                   const runtime::Clock& clock)
    : caches_(caches),
      engines_(engines),
      writes_(writes),
      workloads_(workloads),
      log_(log),
      clock_(clock),
      controller_(runtime::ControllerBuilder(controllers, "placementpolicy")
                      .forKind(caches.policies())
                      .watches(caches.workloads(), policiesCounting)
                      .complete([this](const runtime::ObjectKey& key) { return reconcile(key); })) {
  caches_.policies().addHandler(
      [this](const std::string& name, const PolicyObject*, const PolicyObject* current) {
        policyChanged(name, current);
      });
}

void PolicyReconciler::enqueueAll() {
  caches_.policies().forEach(
      [this](const std::string& name, const PolicyObject&) { enqueue(name); });
}

void PolicyReconciler::policyChanged(const std::string& name, const PolicyObject* current) {
  if (!current) {
    log_.info("placement policy deleted", {{"name", name}});
  } else if (!current->policy) {
    log_.warn("placement policy rejected", {{"name", name}, {"error", current->error.describe()}});
  }
  std::string problem;
  const bool changed = engines_.update(name, current, problem);
  if (!problem.empty()) {
    log_.error("cannot build the placement engine", {{"name", name}, {"error", problem}});
  }
  if (!changed) {
    return;
  }
  if (current && current->policy) {
    log_.info("placement policy in force",
              {{"name", name}, {"generation", std::to_string(current->generation)}});
  }
  workloads_.enqueueWorkloadsOf(name);
}

asio::awaitable<ReconcileResult> PolicyReconciler::reconcile(const runtime::ObjectKey& key) {
  const std::string name = key.name;
  const auto* object = caches_.policy(name);
  if (!object) {
    co_return ReconcileResult::done();
  }
  core::PolicyStatusInput input;
  input.generation = object->generation;
  input.invalid = object->policy ? nullptr : &object->error;
  input.generationInForce = engines_.generationInForce(name);
  input.workloads = caches_.workloadsOfPolicy(name);
  input.conditions = object->conditions;
  input.now = clock_.systemNow();
  auto status = [&] {
    // Not held past this: a view no one holds is recounted in place.
    const auto cluster = engines_.clusterView(name, engines_.view(name, object), caches_);
    input.cluster = cluster.get();
    auto computed = core::policyStatus(input);
    input.cluster = nullptr;
    return computed;
  }();
  if (core::statusDigest(status) == object->statusHash) {
    // The cluster moves without an event of the policy: look again later
    // (no request unless what the status says changed).
    co_return ReconcileResult::requeue(kClusterRefresh);
  }
  auto storedCount = status;
  storedCount["workloads"] = object->workloadCount;
  const auto now = clock_.monotonicNow();
  if (core::statusDigest(storedCount) == object->statusHash) {
    // Only the count moved: batch it.
    const auto last = countWritten_.find(name);
    if (last != countWritten_.end() && now - last->second < kCountInterval) {
      co_return ReconcileResult::requeue(kCountInterval - (now - last->second));
    }
  }
  countWritten_[name] = now;
  auto written = co_await writes_.replacePolicyStatus(name, std::move(status));
  if (!written && !written.error().notFound()) {
    co_return ReconcileResult::error("writing the policy status: " + written.error().describe());
  }
  co_return ReconcileResult::requeue(kClusterRefresh);
}

}  // namespace gpuplacement::app
