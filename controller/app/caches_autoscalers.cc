// The HorizontalPodAutoscalers, by the target each scales: what a serving
// workload's replicas may grow to (status.throughput).
#include "app/caches.h"
#include "app/resource_paths.h"

namespace gpuplacement::app {

namespace {

std::optional<TargetKey> scaledTarget(const std::string& key, const core::AutoscalerView& view) {
  if (!view.targetKind || view.targetName.empty()) {
    return std::nullopt;
  }
  return TargetKey{*view.targetKind, {namespaceOf(key), view.targetName}};
}

}  // namespace

void ObjectCaches::addAutoscalers() {
  // Optional: without RBAC on them, the status says what spec.replicas carry.
  autoscalers_ = &caches_.add<core::AutoscalerView>(
      {"horizontalpodautoscalers", autoscalersPath, true, false}, core::autoscalerFromJson);
  autoscalersByTarget_ = &autoscalers_->index<TargetKey>(scaledTarget);
  autoscalers_->addHandler([this](const std::string& key, const core::AutoscalerView* previous,
                                  const core::AutoscalerView* current) {
    if (previous && current && *previous == *current) {
      return;  // its status: the replicas it wants now, which nothing here reads
    }
    const auto before = previous ? scaledTarget(key, *previous) : std::nullopt;
    const auto after = current ? scaledTarget(key, *current) : std::nullopt;
    if (before) {
      autoscalersChanged_.notify(*before);
    }
    if (after && after != before) {
      autoscalersChanged_.notify(*after);
    }
  });
}

}  // namespace gpuplacement::app
