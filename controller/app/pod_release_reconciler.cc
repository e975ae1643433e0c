#include "app/pod_release_reconciler.h"

#include "core/kinds/pod_scheduling.h"
#include "runtime/controller_builder.h"

namespace gpuplacement::app {
namespace {

using runtime::ReconcileResult;

// Pods are released side by side: each is one small patch, and a
// Deployment's new pods all wait for theirs.
constexpr int kWorkers = 4;

bool gated(const core::PodView*, const core::PodView* current) {
  return current && current->gated;
}

}  // namespace

PodReleaseReconciler::PodReleaseReconciler(runtime::ControllerSet& controllers,
                                           ObjectCaches& caches, ApiWrites& writes, Logger& log,
                                           MetricsRegistry& metrics)
    : caches_(caches),
      writes_(writes),
      log_(log),
      released_(metrics.counter("gpu_placement_pods_released_total",
                                "Pods given their placement and let out of the operator's "
                                "scheduling gate: placed, partial (an entry could not be added) "
                                "or refused (released without the placement)",
                                {"result"})) {
  runtime::ControllerBuilder(controllers, "pod")
      .forKind(caches.pods(), gated)
      .workers(kWorkers)
      .complete([this](const runtime::ObjectKey& key) { return reconcile(key); });
}

asio::awaitable<ReconcileResult> PodReleaseReconciler::reconcile(const runtime::ObjectKey& key) {
  const auto* pod = caches_.pods().get(key.str());
  const core::GatedPod* gated = pod ? pod->gated.get() : nullptr;
  if (!gated) {
    co_return ReconcileResult::done();  // released already, or gone
  }
  const auto release = core::planPodRelease(*gated);
  auto patched = co_await writes_.patchPod(key.ns, key.name, release.patch);
  if (!patched && patched.error().status == 422) {
    // The server refuses the placement on this pod (someone edited it in
    // a way the release cannot add to): let it go unplaced rather than
    // keep it waiting behind our gate for ever.
    log_.warn("the API server refused to place the pod; released without its placement",
              {{"namespace", key.ns}, {"name", key.name}, {"error", patched.error().describe()}});
    auto ungated = co_await writes_.patchPod(key.ns, key.name, core::gateOnlyRelease(*gated));
    if (ungated) {
      released_.inc({"refused"});
      co_return ReconcileResult::done();
    }
    patched = std::move(ungated);
  }
  if (!patched) {
    if (patched.error().notFound()) {
      co_return ReconcileResult::done();
    }
    // 409: the pod changed since the cache saw it; its next event requeues
    // it, and the retry reads the cache again.
    co_return ReconcileResult::error("releasing the pod: " + patched.error().describe());
  }
  if (!release.skipped.empty()) {
    std::string skipped;
    for (const auto& entry : release.skipped) {
      skipped += (skipped.empty() ? "" : "; ") + entry;
    }
    log_.warn("pod released without all of its placement",
              {{"namespace", key.ns}, {"name", key.name}, {"skipped", skipped}});
  }
  released_.inc({release.skipped.empty() ? "placed" : "partial"});
  co_return ReconcileResult::done();
}

}  // namespace gpuplacement::app
