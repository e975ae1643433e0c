#pragma once

// The workload the price suites (tests/e2e: Karpenter's prices, NodeOverlays,
// an imported price list, reserved nodes) place and move: seed 001's speech
// model (1.55B at fp16, a 150 ms latency target, cost first, NVIDIA, on
// demand) on a one-replica Deployment of the same name, labelled app=NAME;
// and what they read back of it.
#include <cstdlib>
#include <string>
#include <vector>

#include "base/json_access.h"
#include "support/suite.h"

namespace gpuplacement::testing {

// The Deployment and its GpuWorkload; `constraints` adds to the
// workload's constraints (", deadline: \"...\"").
inline void applySpeechWorkload(const std::string& ns, const std::string& name,
                                const std::string& constraints = "") {
  cluster().apply("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: " + name +
                  ", namespace: " + ns +
                  "}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: " + name +
                  "}}\n  template:\n    metadata: {labels: {app: " + name +
                  "}}\n    spec:\n      containers: [{name: server, image: whisper:1}]\n");
  cluster().apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " + name +
      ", namespace: " + ns + "}\nspec:\n  targetRef: {kind: Deployment, name: " + name +
      "}\n  workload: {kind: Inference, latencyTargetMs: 150}\n  model: {parameters: "
      "1.55B, precision: fp16, architecture: Speech}\n  objective: CostOptimized\n  "
      "constraints: {tiers: [NVIDIA], capacityType: OnDemand" +
      constraints + "}\n");
}

// status.placement; null until there is one.
inline json placementOf(const std::string& ns, const std::string& name) {
  auto workload = cluster().get(workloadPath(ns, name));
  return workload ? base::memberOf(base::memberOf(*workload, "status"), "placement") : json();
}

inline std::string placedTypeOf(const std::string& ns, const std::string& name) {
  return base::stringMember(placementOf(ns, name), "instanceType");
}

// status.placement.nodeHourlyCost; 0 until placed.
inline double claimedNodePrice(const std::string& ns, const std::string& name) {
  return std::atof(base::stringMember(placementOf(ns, name), "nodeHourlyCost").c_str());
}

inline std::string labelOf(const json& object, const std::string& key) {
  return base::stringMember(base::memberOf(base::memberOf(object, "metadata"), "labels"),
                            key.c_str());
}

// The nodes the workload's Running pods (none terminating) are on.
inline std::vector<json> runningNodesOf(const std::string& ns, const std::string& name) {
  std::vector<json> nodes;
  auto pods = cluster().get("/api/v1/namespaces/" + ns + "/pods?labelSelector=app%3D" + name);
  if (!pods) {
    return nodes;
  }
  for (const auto& pod : (*pods)["items"]) {
    const auto node = base::stringMember(base::memberOf(pod, "spec"), "nodeName");
    if (base::stringMember(base::memberOf(pod, "status"), "phase") == "Running" &&
        !base::memberOf(pod, "metadata").contains("deletionTimestamp") && !node.empty()) {
      if (auto object = cluster().get("/api/v1/nodes/" + node)) {
        nodes.push_back(*object);
      }
    }
  }
  return nodes;
}

}  // namespace gpuplacement::testing
