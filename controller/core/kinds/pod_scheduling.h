#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/kinds/toleration.h"

// Placing at the pods rather than in the pod template.
//
// In the Kubernetes API a pod template's nodeSelector is an atomic map and
// its tolerations an atomic list for server-side apply, and client-side
// apply replaces the tolerations whole. A GitOps tool that re-applies a
// manifest setting either field takes back every entry the operator added.
// So for such Deployments the template carries only what merges key by key
// (device requests and limits, a scheduling gate, an annotation); each pod
// is created gated, and the operator adds the node selector and
// tolerations the annotation names and removes the gate in one patch: the
// mutation KEP-3838 (GA in 1.30) allows while a pod is gated.
namespace gpuplacement::core {

// The gate the operator's pods wait behind until they are placed.
inline constexpr const char* kSchedulingGate = "gpuplacement.io/placement";
// The pod-template annotation that tells each pod what to be given.
inline constexpr const char* kPodSchedulingAnnotation = "gpuplacement.io/scheduling";

// The node selector and tolerations each pod receives when ungated.
struct PodScheduling {
  std::map<std::string, std::string> nodeSelector;
  std::vector<Toleration> tolerations;

  bool operator==(const PodScheduling&) const = default;
};

std::string serializePodScheduling(const PodScheduling& scheduling);
// nullopt: not a document of this form (edited by hand).
std::optional<PodScheduling> parsePodScheduling(const nlohmann::json& document);

// What a gated pod holds that its release reads; kept only for pods that
// carry the operator's gate, so the rest of the cluster's pods cost nothing.
struct GatedPod {
  std::string resourceVersion;
  std::map<std::string, std::string> nodeSelector;
  // As the pod has them, sent back unchanged: a pod may only gain
  // tolerations, and the API server compares the old ones field by field
  // (an omitted operator is not "Equal" to it).
  nlohmann::json tolerations = nlohmann::json::array();
  std::optional<std::string> scheduling;  // the annotation's text; nullopt: absent

  bool operator==(const GatedPod&) const = default;
};

// Reads a pod; nullopt when it does not carry the operator's gate.
std::optional<GatedPod> gatedPodFromJson(const nlohmann::json& object);

// The one patch that places a gated pod and lets it be scheduled.
struct PodRelease {
  nlohmann::json patch;  // a strategic merge patch with a resourceVersion precondition
  // Entries that could not be added: a node-selector key the pod already
  // has with another value (a pod's existing keys cannot change), or an
  // annotation that does not parse. The gate goes regardless: a pod never
  // waits for ever behind the operator's gate.
  std::vector<std::string> skipped;
};

PodRelease planPodRelease(const GatedPod& pod);

// Only the gate, for a pod the API server refused the whole release
// (422): it runs unplaced rather than waits for ever.
nlohmann::json gateOnlyRelease(const GatedPod& pod);

}  // namespace gpuplacement::core
