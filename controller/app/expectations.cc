#include "app/expectations.h"

namespace gpuplacement::app {
namespace {

// Long enough for a watch event under load; short enough that a status or
// target edited by someone else right after our write is not ignored
// for long.
constexpr auto kTimeout = std::chrono::seconds(10);

}  // namespace

void WriteExpectations::expectStatus(const std::string& workload, std::uint64_t statusHash) {
  status_[workload] = Status{statusHash, clock_.monotonicNow() + kTimeout};
}

void WriteExpectations::expectTarget(const TargetKey& target, std::int64_t generation,
                                     std::uint64_t ownedDigest) {
  targets_[target] = Target{generation, ownedDigest, clock_.monotonicNow() + kTimeout};
}

bool WriteExpectations::awaitingStatus(const std::string& workload, const CachedWorkload& cached) {
  const auto it = status_.find(workload);
  if (it == status_.end()) {
    return false;
  }
  if (cached.statusHash == it->second.statusHash || clock_.monotonicNow() >= it->second.until) {
    status_.erase(it);
    return false;
  }
  return true;
}

bool WriteExpectations::caughtUp(const Target& expected, const CachedTarget* cached) {
  return !cached || cached->generation > expected.generation ||
         (cached->generation == expected.generation && cached->ownedDigest == expected.ownedDigest);
}

bool WriteExpectations::awaitingTarget(const TargetKey& target, const CachedTarget* cached) {
  const auto it = targets_.find(target);
  if (it == targets_.end()) {
    return false;
  }
  if (caughtUp(it->second, cached) || clock_.monotonicNow() >= it->second.until) {
    targets_.erase(it);
    return false;
  }
  return true;
}

void WriteExpectations::observeWorkload(const std::string& workload,
                                        const CachedWorkload* current) {
  if (!current) {
    released_.erase(workload);
    status_.erase(workload);
    return;
  }
  if (const auto it = status_.find(workload);
      it != status_.end() && it->second.statusHash == current->statusHash) {
    status_.erase(it);
  }
}

void WriteExpectations::observeTarget(const TargetKey& target, const CachedTarget* current) {
  if (const auto it = targets_.find(target);
      it != targets_.end() && caughtUp(it->second, current)) {
    targets_.erase(it);
  }
}

}  // namespace gpuplacement::app
