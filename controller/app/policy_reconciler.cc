#include "app/policy_reconciler.h"

#include "base/json_access.h"
#include "core/plan/price_sharing.h"
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

asio::awaitable<std::vector<std::string>> PolicyReconciler::shareWithKarpenter(
    const std::string& name, const std::string& uid, const core::Policy* policy,
    std::string& failed) {
  const auto& cluster = caches_.clusterView();
  if (!cluster.nodeOverlaysKnown()) {
    co_return std::vector<std::string>{};
  }
  auto writes = core::overlayWrites(name, uid, policy, cluster.nodeOverlays());
  const auto note = [&](const char* verb, const std::string& overlay, const auto& result) {
    if (!result) {
      log_.warn("cannot write a NodeOverlay sharing a policy's prices",
                {{"policy", name},
                 {"nodeOverlay", overlay},
                 {"verb", verb},
                 {"error", result.error().describe()}});
      if (failed.empty()) {
        failed = std::string(verb) + " NodeOverlay " + overlay + ": " + result.error().describe();
      }
    } else {
      log_.info("NodeOverlay sharing a policy's prices",
                {{"policy", name}, {"nodeOverlay", overlay}, {"verb", verb}});
    }
  };
  for (auto& object : writes.create) {
    const auto overlay = base::stringMember(base::memberOf(object, "metadata"), "name");
    note("create", overlay, co_await writes_.createNodeOverlay(std::move(object)));
  }
  for (auto& [overlay, spec] : writes.update) {
    note("update", overlay, co_await writes_.patchNodeOverlaySpec(overlay, std::move(spec)));
  }
  for (const auto& overlay : writes.remove) {
    note("delete", overlay, co_await writes_.deleteNodeOverlay(overlay));
  }
  co_return std::move(writes.taken);
}

asio::awaitable<ReconcileResult> PolicyReconciler::reconcile(const runtime::ObjectKey& key) {
  const std::string name = key.name;
  const auto* object = caches_.policies().get(name);
  if (!object) {
    // Its NodeOverlays go with it (their owner reference would have the
    // garbage collector delete them too, later).
    std::string failed;
    co_await shareWithKarpenter(name, "", nullptr, failed);
    co_return failed.empty() ? ReconcileResult::done() : ReconcileResult::error(failed);
  }
  // The version in force shares its prices, or stops sharing them; an
  // invalid edit changes nothing.
  const auto engine = engines_.generationInForce(name) ? engines_.engine(name) : nullptr;
  const core::Policy* inForce = engine ? &engine->policy() : nullptr;
  std::string failed;
  const std::string uid = object->uid;
  auto taken = co_await shareWithKarpenter(name, uid, inForce, failed);
  object = caches_.policies().get(name);  // the cache may have moved while writing
  if (!object || object->uid != uid) {
    co_return ReconcileResult::requeue(std::chrono::seconds(0));
  }
  core::PolicyStatusInput input;
  input.generation = object->generation;
  input.invalid = object->policy ? nullptr : &object->error;
  input.generationInForce = engines_.generationInForce(name);
  input.workloads = caches_.workloadsByPolicy().of(name);
  input.conditions = object->conditions;
  input.now = clock_.systemNow();
  core::PriceSharingInput sharing;
  sharing.policy = inForce;
  sharing.karpenter = engines_.catalog().get();
  const auto& cluster = caches_.clusterView();
  sharing.nodeOverlaysServed = cluster.nodeOverlaysKnown();
  sharing.karpenterInstalled = cluster.stamp().nodePoolsInstalled;
  for (auto& overlay : cluster.nodeOverlays()) {
    if (overlay.pricesOf == name) {
      sharing.shared.push_back(std::move(overlay));
    }
  }
  sharing.taken = std::move(taken);
  sharing.generation = object->generation;
  input.pricesShared = core::pricesSharedCondition(sharing);
  auto status = [&] {
    // Not held past this: a view no one holds is recounted in place.
    const auto clusterView = engines_.clusterView(name, engines_.view(name, object), cluster);
    input.cluster = clusterView.get();
    auto computed = core::policyStatus(input);
    input.cluster = nullptr;
    return computed;
  }();
  if (core::statusDigest(status) == object->statusHash) {
    // The cluster moves without an event of the policy: look again later
    // (no request unless what the status says changed).
    co_return failed.empty() ? ReconcileResult::requeue(kClusterRefresh)
                             : ReconcileResult::error(failed);
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
  if (!failed.empty()) {
    co_return ReconcileResult::error(failed);
  }
  co_return ReconcileResult::requeue(kClusterRefresh);
}

}  // namespace gpuplacement::app
