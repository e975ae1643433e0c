#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "app/cached_objects.h"
#include "app/target_key.h"
#include "runtime/clock.h"

namespace gpuplacement::app {

// Read-your-writes for one reconciler. After it writes, its cache lags
// until the watch delivers the change; a reconcile that would act on the
// older copy waits a moment instead of writing twice (controller-runtime
// calls these expectations). Each ends as soon as the cache shows the
// write, or after a timeout, so none is left behind for an object that is
// not reconciled again. GpuWorkloads are keyed "namespace/name", targets by
// their TargetKey.
class WriteExpectations {
 public:
  explicit WriteExpectations(const runtime::Clock& clock) : clock_(clock) {}

  void expectStatus(const std::string& workload, std::uint64_t statusHash);
  void expectTarget(const TargetKey& target, std::int64_t generation, std::uint64_t ownedDigest);
  // Our finalizer is off; the deletion will follow and nothing is left to do.
  void expectDeletion(const std::string& workload) { released_.insert(workload); }

  // True while the cache has not caught up with our last write.
  bool awaitingStatus(const std::string& workload, const CachedWorkload& cached);
  bool awaitingTarget(const TargetKey& target, const CachedTarget* cached);
  bool awaitingDeletion(const std::string& workload) const { return released_.count(workload); }

  // From the informers: the cache changed.
  void observeWorkload(const std::string& workload, const CachedWorkload* current);
  void observeTarget(const TargetKey& target, const CachedTarget* current);

 private:
  struct Status {
    std::uint64_t statusHash;
    runtime::MonotonicTime until;
  };
  struct Target {
    std::int64_t generation;
    std::uint64_t ownedDigest;
    runtime::MonotonicTime until;
  };
  static bool caughtUp(const Target& expected, const CachedTarget* cached);

  const runtime::Clock& clock_;
  std::unordered_map<std::string, Status> status_;
  std::unordered_map<TargetKey, Target> targets_;
  std::unordered_set<std::string> released_;  // finalizer removed, deletion not yet seen
};

}  // namespace gpuplacement::app
