#pragma once

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/target_key.h"

namespace gpuplacement::app {

// Rollouts started by moves (not by users changing a spec), per policy:
// at most maxConcurrentRollouts run at once; the workloads that want a
// slot wait here and are woken, all of them, when one frees.
class RolloutTracker {
 public:
  std::size_t inFlight(const std::string& policy) const;
  bool holds(const TargetKey& target) const { return policyOf_.count(target) > 0; }
  void start(const std::string& policy, const TargetKey& target);
  // Frees the target's slot, if it held one; returns the workloads
  // waiting for a slot of that policy, to reconcile again.
  std::vector<std::string> finish(const TargetKey& target);
  void wait(const std::string& policy, const std::string& workload) {
    waiting_[policy].insert(workload);
  }

 private:
  std::unordered_map<TargetKey, std::string> policyOf_;  // target -> policy
  std::map<std::string, std::set<std::string>> waiting_;
};

}  // namespace gpuplacement::app
