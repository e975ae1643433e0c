#include "core/plan/fallback.h"

#include <algorithm>

namespace gpuplacement::core {
namespace {

using std::chrono::seconds;

// The earlier of a running minimum and a new candidate (never negative).
void earliest(std::optional<seconds>& current, seconds candidate) {
  candidate = std::max(candidate, seconds(1));
  if (!current || candidate < *current) {
    current = candidate;
  }
}

seconds until(Timestamp from, Timestamp to) {
  return std::chrono::duration_cast<seconds>(to - from);
}

}  // namespace

bool isUnavailable(const std::vector<UnavailableType>& unavailable, const std::string& type,
                   CapacityType capacity) {
  return std::any_of(unavailable.begin(), unavailable.end(), [&](const UnavailableType& entry) {
    return entry.instanceType == type && entry.capacityType == capacity;
  });
}

FallbackStep fallbackStep(const FallbackInput& input) {
  FallbackStep step;
  for (const auto& entry : input.unavailable) {
    const auto end = base::parseRfc3339(entry.until);
    if (end && *end > input.now) {
      step.unavailable.push_back(entry);
      earliest(step.recheckAfter, until(input.now, *end));
    } else if (input.roomFor && !input.roomFor(entry.instanceType, entry.capacityType)) {
      // Its nodes are still full: moving back would only wait again.
      auto kept = entry;
      kept.until = base::formatRfc3339(input.now + input.settings.retryAfter);
      step.unavailable.push_back(std::move(kept));
      earliest(step.recheckAfter, input.settings.retryAfter);
    }
  }
  if (input.instanceType.empty() || input.pendingCount == 0 || !input.pendingSince ||
      isUnavailable(step.unavailable, input.instanceType, input.capacityType)) {
    return step;
  }
  // Pods left over from before the placement do not count against it.
  const auto waiting =
      input.placedAt ? std::max(*input.pendingSince, *input.placedAt) : *input.pendingSince;
  const auto deadline = waiting + input.settings.fallbackAfter;
  if (input.now < deadline) {
    earliest(step.recheckAfter, until(input.now, deadline));
    return step;
  }
  UnavailableType left{input.instanceType, input.capacityType, base::formatRfc3339(input.now),
                       base::formatRfc3339(input.now + input.settings.retryAfter),
                       input.pendingMessage};
  step.unavailable.push_back(left);
  step.left = std::move(left);
  earliest(step.recheckAfter, input.settings.retryAfter);
  return step;
}

std::string describeTried(const std::vector<UnavailableType>& unavailable) {
  std::string text;
  for (const auto& entry : unavailable) {
    text += (text.empty() ? "" : ", ") + entry.instanceType +
            (entry.capacityType == CapacityType::Spot    ? " spot"
             : entry.capacityType == CapacityType::Mixed ? " spot and on-demand"
                                                         : " on-demand") +
            " until " + entry.until;
  }
  return text;
}

}  // namespace gpuplacement::core
