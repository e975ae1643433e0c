#include <algorithm>

#include "base/json_access.h"
#include "core/kinds/adapters.h"
#include "core/kinds/pod_template_read.h"

// KubeRay's RayCluster and RayService (ray.io/v1): a head group, which
// runs Ray's control processes, and worker groups, which run the model.
// A RayService holds a RayCluster's spec at spec.rayClusterConfig and
// makes the clusters itself.
namespace gpuplacement::core::kinds {
namespace {

using json = nlohmann::json;
using base::memberOf;
using base::stringMember;

// The labels KubeRay puts on every pod it makes.
constexpr const char* kGroupLabel = "ray.io/group";
constexpr const char* kNodeTypeLabel = "ray.io/node-type";
// KubeRay puts it only on the pods of a RayService's clusters (common/pod.go
// BuildPod), whose names are the RayService's and five random characters
// (utils.GenerateRayClusterName); pods carry nothing else that names it.
constexpr const char* kServeLabel = "ray.io/serve";
constexpr const char* kHeadPodSet = "head";
// The labels on a RayCluster that a RayJob or RayService made from its own
// spec (constructRayClusterForRayJob, constructRayClusterForRayService):
// the maker's kind and name. KubeRay copies the maker's labels and
// annotations onto it, the operator's ownership record among them.
constexpr const char* kOriginatedFromCrd = "ray.io/originated-from-crd";
constexpr const char* kOriginatedFromName = "ray.io/originated-from-cr-name";

// A RayCluster made by a RayJob or RayService is placed through its maker:
// the record it carries is the maker's, copied, not one the operator wrote
// here, so it is dropped (else deleting the GpuWorkload would take the
// maker's placement off the running cluster).
void readMaker(const json& object, TargetState& state) {
  const auto& labels = memberOf(memberOf(object, "metadata"), "labels");
  const auto maker = stringMember(labels, kOriginatedFromCrd);
  if (maker.empty()) {
    return;
  }
  const auto name = stringMember(labels, kOriginatedFromName);
  state.ownership = {};
  state.placedThrough = "KubeRay made RayCluster " +
                        stringMember(memberOf(object, "metadata"), "name") + " from the spec of " +
                        maker + " " + name + " (its label " + kOriginatedFromCrd + ": " + maker +
                        "), and makes it again from there: " + "place the " + maker +
                        " (spec.targetRef kind: " + maker + ", name: " + name + ")";
}

// "spec.rayClusterConfig" of "/spec/rayClusterConfig".
std::string fieldOf(const std::string& pointer) {
  std::string field = pointer.substr(1);
  std::replace(field.begin(), field.end(), '/', '.');
  return field;
}

std::optional<PodOwner> podOf(const json& pod, std::string target) {
  auto group = podLabel(pod, kGroupLabel).value_or("");
  if (podLabel(pod, kNodeTypeLabel) == "head") {
    group = kHeadPodSet;
  }
  return PodOwner{std::move(target), std::move(group)};
}

class RayClusterAdapter final : public KindAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    readRayClusterSpec(memberOf(object, "spec"), "/spec", state);
    readSuspension(object, state.job);
    readMaker(object, state);
    const auto& status = memberOf(object, "status");
    state.observedGeneration = base::integerOf(memberOf(status, "observedGeneration"));
    state.availableReplicas = countOf(memberOf(status, "readyWorkerReplicas"));
    state.statusReplicas = countOf(memberOf(status, "desiredWorkerReplicas"));
  }

  // KubeRay makes new pods from a changed template but leaves running ones
  // as they are: rolled out once the cluster has seen the change and its
  // workers are ready (a suspended one has nothing to roll out).
  bool rolledOut(const TargetState& state) const override {
    return state.job.suspended || (state.observedGeneration >= state.generation &&
                                   state.availableReplicas >= state.statusReplicas);
  }

  std::optional<PodOwner> ownerOf(const json& pod) const override {
    auto cluster = ownerNamed(pod, "RayCluster");
    if (cluster.empty() || podLabel(pod, kServeLabel)) {
      return std::nullopt;  // a RayService's: placed through it
    }
    return podOf(pod, std::move(cluster));
  }
};

class RayServiceAdapter final : public KindAdapter {
 public:
  void read(const json& object, TargetState& state) const override {
    readRayClusterSpec(memberOf(memberOf(object, "spec"), "rayClusterConfig"),
                       "/spec/rayClusterConfig", state);
    const auto& status = memberOf(object, "status");
    state.observedGeneration = base::integerOf(memberOf(status, "observedGeneration"));
    // An upgrade runs a second cluster until its applications serve.
    state.revisionPending =
        !stringMember(memberOf(status, "pendingServiceStatus"), "rayClusterName").empty();
    state.availableReplicas =
        stringMember(memberOf(status, "activeServiceStatus"), "rayClusterName").empty()
            ? 0
            : state.replicas;
  }

  // A new cluster spec makes a new RayCluster, which takes the traffic
  // once its applications serve: rolled out when no upgrade is pending.
  bool rolledOut(const TargetState& state) const override {
    return state.observedGeneration >= state.generation && !state.revisionPending &&
           state.availableReplicas >= state.replicas;
  }

  std::optional<PodOwner> ownerOf(const json& pod) const override {
    const auto cluster = ownerNamed(pod, "RayCluster");
    const auto dash = cluster.rfind('-');
    if (!podLabel(pod, kServeLabel) || dash == std::string::npos || dash == 0 ||
        cluster.size() - dash != 6) {
      return std::nullopt;
    }
    return podOf(pod, cluster.substr(0, dash));
  }
};

}  // namespace

// The pod sets of a RayCluster spec found at `pointer`: the head group,
// placed only when there are no worker groups (a Ray cluster of one
// node runs the model on its head), and each worker group by its name.
void readRayClusterSpec(const json& clusterSpec, const std::string& pointer, TargetState& state) {
  const auto& workers = memberOf(clusterSpec, "workerGroupSpecs");
  const bool headOnly = !workers.is_array() || workers.empty();
  state.podSets.push_back({kHeadPodSet, "head", headOnly, 1, pointer + "/headGroupSpec/template"});
  state.podSetTemplates.push_back(
      podTemplateFrom(memberOf(memberOf(clusterSpec, "headGroupSpec"), "template"), true));
  std::int64_t placed = headOnly ? 1 : 0;
  // The autoscaler writes each worker group's replicas as Ray's demand
  // asks, within minReplicas and maxReplicas: the size is its own.
  const bool autoscaled = memberOf(clusterSpec, "enableInTreeAutoscaling") == true;
  if (!headOnly) {
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const auto& group = workers[i];
      // replicas, or minReplicas where the autoscaler sets it.
      const auto replicas =
          countOf(memberOf(group, "replicas"), base::integerOf(memberOf(group, "minReplicas"), 0));
      state.podSets.push_back({stringMember(group, "groupName"), "worker", true, replicas,
                               pointer + "/workerGroupSpecs/" + std::to_string(i) + "/template"});
      state.podSetTemplates.push_back(podTemplateFrom(memberOf(group, "template"), true));
      placed += replicas;
      // The group a model spans nodes in: the worker group of the most pods.
      if (!state.groups.formed() || replicas > state.groups.size) {
        // KubeRay labels every pod of a cluster with its node type and the
        // cluster's name: the group follows its head into one zone.
        state.groups = {1,
                        replicas,
                        fieldOf(pointer) + ".workerGroupSpecs[" + std::to_string(i) + "].replicas",
                        {"ray.io/node-type", "ray.io/cluster"}};
        const std::string at = pointer + "/workerGroupSpecs/" + std::to_string(i);
        state.groups.sizePointer = at + "/replicas";
        // KubeRay runs replicas clamped to [minReplicas, maxReplicas]
        // (GetWorkerGroupDesiredReplicas); its CRD defaults them to 0 and
        // 2^31-1.
        state.groups.bounds = {
            static_cast<std::int32_t>(std::clamp<std::int64_t>(
                base::integerOf(memberOf(group, "minReplicas"), 0), 0, INT32_MAX)),
            static_cast<std::int32_t>(std::clamp<std::int64_t>(
                base::integerOf(memberOf(group, "maxReplicas"), INT32_MAX), 0, INT32_MAX)),
            at + "/minReplicas", at + "/maxReplicas"};
        if (autoscaled) {
          state.groups.sizeKeptBy =
              "the Ray autoscaler (" + fieldOf(pointer) + ".enableInTreeAutoscaling: true)";
        }
      }
    }
  }
  state.replicas = static_cast<std::int32_t>(std::min<std::int64_t>(placed, INT32_MAX));
  // The target's own template: the first placed pod set's.
  for (std::size_t i = 0; i < state.podSets.size(); ++i) {
    if (state.podSets[i].placedByDefault) {
      static_cast<PodTemplateState&>(state) = state.podSetTemplates[i];
      break;
    }
  }
}

const KindAdapter& rayClusterAdapter() {
  static const RayClusterAdapter adapter;
  return adapter;
}

const KindAdapter& rayServiceAdapter() {
  static const RayServiceAdapter adapter;
  return adapter;
}

}  // namespace gpuplacement::core::kinds
