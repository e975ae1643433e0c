#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/kinds/target.h"

// The readers every kind's adapter shares: a pod template, a pod's owner,
// counts and conditions as the API writes them.
namespace gpuplacement::core::kinds {

// Reads a pod template; with `keepRaw` it keeps the template itself too
// (kinds written by JSON patch).
void readPodTemplate(const nlohmann::json& templ, PodTemplateState& state, bool keepRaw);
PodTemplateState podTemplateFrom(const nlohmann::json& templ, bool keepRaw);

// A count of pods: clamped to [0, INT32_MAX]; `fallback` when absent.
std::int32_t countOf(const nlohmann::json& value, std::int64_t fallback = 0);

// The condition of `type` with status True; null when there is none.
const nlohmann::json* trueCondition(const nlohmann::json& status, std::string_view type);

// The name of the pod's ownerReference of `kind`; empty when it has none.
std::string ownerNamed(const nlohmann::json& pod, std::string_view kind);

// A label of the pod; nullopt when absent.
std::optional<std::string> podLabel(const nlohmann::json& pod, std::string_view key);

// Whether the object waits suspended (spec.suspend), for whom (its label
// gpuplacement.io/workload), and whether Kueue queues it (its
// kueue.x-k8s.io/queue-name label or annotation): Kueue then decides when
// it runs, and the operator leaves spec.suspend alone. So it does when
// spec.managedBy names another controller than `controller`, the kind's
// own (MultiKueue's, say: the run is elsewhere); "" for a kind without
// spec.managedBy.
void readSuspension(const nlohmann::json& object, JobProgress& progress,
                    std::string_view controller = "");

// How a run ended, from its status's conditions: `completeType` True (a
// Job's Complete, a JobSet's Completed) at its time, or Failed True at its
// time with its reason and message; Running while neither is.
void readEnd(const nlohmann::json& status, std::string_view completeType, JobProgress& progress);

// The observedGeneration, updatedReplicas and replicas of a status, which
// the apps kinds and most custom kinds write alike.
void readRolloutCounts(const nlohmann::json& status, TargetState& state);

}  // namespace gpuplacement::core::kinds
