#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/time_format.h"
#include "core/catalog/types.h"
#include "core/intent/policy.h"

// Ordered fallback: when pods of a placement stay unschedulable longer than
// the policy's capacity.fallbackAfter, that instance type is unavailable to
// the workload for capacity.retryAfter, and the next decision places it on
// the next-best candidate. Pure: the caller passes the time in.
namespace gpuplacement::core {

using base::Timestamp;

// status.unavailable[]: a type left for lack of capacity.
struct UnavailableType {
  std::string instanceType;
  CapacityType capacityType = CapacityType::OnDemand;
  std::string since;    // RFC 3339: when it was left
  std::string until;    // RFC 3339: since + retryAfter; a candidate again after it
  std::string message;  // the scheduler's, from the pod that waited longest

  bool operator==(const UnavailableType&) const = default;
};

struct FallbackInput {
  // The placement in force (its type and capacity type) and when it was
  // written; empty type: nothing placed yet.
  std::string instanceType;
  CapacityType capacityType = CapacityType::OnDemand;
  std::optional<Timestamp> placedAt;
  // The target's pods the scheduler cannot place.
  int pendingCount = 0;
  std::string pendingMessage;
  std::optional<Timestamp> pendingSince;
  std::vector<UnavailableType> unavailable;  // as the status records them
  CapacitySettings settings;
  Timestamp now;
  // Whether the cluster shows room for the type again (a node of it with a
  // device free). Unset where capacity cannot be seen (NodePools: whether
  // AWS has the instances shows only by trying; no view): the retry time
  // alone decides.
  std::function<bool(const std::string& type, CapacityType capacity)> roomFor;
};

struct FallbackStep {
  std::vector<UnavailableType> unavailable;  // in force now: expired ones gone, a new one added
  std::optional<UnavailableType> left;       // the type just left (Event FellBack)
  // When to look again: the fallback deadline of pods still waiting, or
  // the first retry time.
  std::optional<std::chrono::seconds> recheckAfter;
};

FallbackStep fallbackStep(const FallbackInput& input);

bool isUnavailable(const std::vector<UnavailableType>& unavailable, const std::string& type,
                   CapacityType capacity);

// "g6.xlarge on-demand until 2026-11-22T12:35:00Z, g5.xlarge ...": what was tried.
std::string describeTried(const std::vector<UnavailableType>& unavailable);

}  // namespace gpuplacement::core
