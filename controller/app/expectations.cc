#include "app/expectations.h"

namespace gpuplacement::app {
namespace {

// Long enough for a watch event under load; short enough that a status or
// Deployment edited by someone else right after our write is not ignored
// for long.
constexpr auto kTimeout = std::chrono::seconds(10);

}  // namespace

void WriteExpectations::expectStatus(const std::string& workload, std::uint64_t statusHash) {
  status_[workload] = Status{statusHash, clock_.monotonicNow() + kTimeout};
}

void WriteExpectations::expectDeployment(const std::string& deployment, std::int64_t generation,
                                         std::uint64_t ownedDigest) {
  deployments_[deployment] = Deployment{generation, ownedDigest, clock_.monotonicNow() + kTimeout};
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

bool WriteExpectations::caughtUp(const Deployment& expected, const CachedDeployment* cached) {
  return !cached || cached->generation > expected.generation ||
         (cached->generation == expected.generation && cached->ownedDigest == expected.ownedDigest);
}

bool WriteExpectations::awaitingDeployment(const std::string& deployment,
                                           const CachedDeployment* cached) {
  const auto it = deployments_.find(deployment);
  if (it == deployments_.end()) {
    return false;
  }
  if (caughtUp(it->second, cached) || clock_.monotonicNow() >= it->second.until) {
    deployments_.erase(it);
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

void WriteExpectations::observeDeployment(const std::string& deployment,
                                          const CachedDeployment* current) {
  if (const auto it = deployments_.find(deployment);
      it != deployments_.end() && caughtUp(it->second, current)) {
    deployments_.erase(it);
  }
}

}  // namespace gpuplacement::app
