#include "app/target_reads.h"

namespace gpuplacement::app {

core::PendingPods pendingPodsOf(const PodCache& pods, const std::vector<std::string>& keys) {
  core::PendingPods pending;
  for (const auto& key : keys) {
    const auto* pod = pods.get(key);
    if (!pod) {
      continue;
    }
    ++pending.count;
    const auto since = base::parseRfc3339(pod->unschedulableSince);
    if (pending.message.empty() || (since && pending.since && *since < *pending.since)) {
      pending.message = pod->unschedulable;
      pending.since = since ? std::optional<base::Timestamp>(*since) : std::nullopt;
    }
  }
  return pending;
}

std::vector<core::OwnPod> boundPodsOf(const PodCache& pods, const NodeCache& nodes,
                                      const std::vector<std::string>& keys) {
  std::vector<core::OwnPod> bound;
  for (const auto& key : keys) {
    const auto* pod = pods.get(key);
    const auto* node = pod ? nodes.get(pod->node) : nullptr;
    if (node) {
      const auto& devices = pod->devices;
      const auto& mig = devices.mig;  // a replica holds one profile's instances
      const bool shared = mig.empty() && devices.sharedGpus > 0;
      bound.push_back({pod->node, node->instanceType, node->capacityType,
                       !mig.empty() ? mig.front().second
                       : shared     ? devices.sharedGpus
                                    : devices.gpus + devices.neuronDevices,
                       pod->milliCpu, pod->memoryBytes, mig.empty() ? "" : mig.front().first,
                       shared});
    }
  }
  return bound;
}

std::optional<core::Autoscaler> autoscalerOf(const AutoscalerCache& autoscalers,
                                             const std::vector<std::string>& keys) {
  std::optional<core::Autoscaler> first;
  for (const auto& key : keys) {
    const auto* view = autoscalers.get(key);
    if (view && (!first || view->bounds.name < first->name)) {
      first = view->bounds;
    }
  }
  return first;
}

TargetKey podsKeyOf(const TargetKey& target, const core::TargetState& state) {
  if (target.kind == core::TargetKind::RayJob && !state.job.runsOn.empty()) {
    return TargetKey{core::TargetKind::RayCluster, {target.object.ns, state.job.runsOn}};
  }
  if (target.kind == core::TargetKind::TrainJob && !state.job.runsOn.empty()) {
    return TargetKey{core::TargetKind::JobSet, {target.object.ns, state.job.runsOn}};
  }
  return target;
}

std::optional<TargetKey> runOfPods(const ObjectCaches& caches, const TargetKey& podsOwner) {
  const auto& name = podsOwner.object.name;
  if (podsOwner.kind == core::TargetKind::JobSet) {
    // The Trainer names a TrainJob's JobSet as the TrainJob.
    const TargetKey job{core::TargetKind::TrainJob, podsOwner.object};
    const auto* cached = caches.targets(job.kind).get(job.object.str());
    if (!cached || cached->unpack().job.runsOn != name) {
      return std::nullopt;
    }
    return job;
  }
  // utils.GenerateRayClusterName: the RayJob's name, "-" and five characters.
  if (podsOwner.kind != core::TargetKind::RayCluster || name.size() < 7 ||
      name[name.size() - 6] != '-') {
    return std::nullopt;
  }
  const TargetKey job{core::TargetKind::RayJob,
                      {podsOwner.object.ns, name.substr(0, name.size() - 6)}};
  const auto* cached = caches.targets(job.kind).get(job.object.str());
  if (!cached || cached->unpack().job.runsOn != name) {
    return std::nullopt;
  }
  return job;
}

std::vector<core::TargetRef> targetsOwnedBy(const ObjectCaches& caches,
                                            const std::string& workloadKey) {
  std::vector<core::TargetRef> owned;
  for (const auto kind : core::kTargetKinds) {
    for (const auto& target : caches.targetsByOwner(kind).of(workloadKey)) {
      owned.push_back({kind, runtime::ObjectKey::parse(target).name});
    }
  }
  return owned;
}

std::string targetsUnreadable(const TargetCache& targets, core::TargetKind kind) {
  const auto problem = targets.unreadable();
  if (problem.empty()) {
    return "";
  }
  bool forbidden = false;
  bool absent = false;
  for (const auto& informer : targets.informers()) {
    forbidden = forbidden || (!informer.synced && informer.lastFailure == 403u);
    absent = absent || (!informer.synced && informer.lastFailure == 404u);
  }
  if (const auto crd = core::traitsOf(kind).crd; absent && !crd.empty()) {
    return "the CustomResourceDefinition " + std::string(crd) +
           " is not installed (the API server does not serve " +
           std::string(core::resourceOf(kind)) + "); the operator waits for it and places the " +
           std::string(base::nameOf(kind)) + " once it is";
  }
  return "the operator " + problem +
         (forbidden ? ": give its ClusterRole get, list, watch and patch on " +
                          std::string(core::resourceOf(kind)) + " (the chart's has them)"
                    : std::string());
}

}  // namespace gpuplacement::app
