#include "app/rollout_tracker.h"

#include <algorithm>

namespace gpuplacement::app {

std::size_t RolloutTracker::inFlight(const std::string& policy) const {
  return static_cast<std::size_t>(
      std::count_if(policyOf_.begin(), policyOf_.end(),
                    [&](const auto& entry) { return entry.second == policy; }));
}

void RolloutTracker::start(const std::string& policy, const TargetKey& target) {
  policyOf_[target] = policy;
}

std::vector<std::string> RolloutTracker::finish(const TargetKey& target) {
  const auto it = policyOf_.find(target);
  if (it == policyOf_.end()) {
    return {};
  }
  const std::string policy = it->second;
  policyOf_.erase(it);
  auto& waiting = waiting_[policy];
  std::vector<std::string> wake(waiting.begin(), waiting.end());
  waiting.clear();
  return wake;
}

}  // namespace gpuplacement::app
