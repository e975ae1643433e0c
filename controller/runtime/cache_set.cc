#include "runtime/cache_set.h"

#include "runtime/signal.h"

namespace gpuplacement::runtime {

CacheSet::CacheSet(asio::any_io_executor executor, ListWatchClient& client, CacheSetOptions options,
                   const Clock& clock, std::function<void(const std::string&)> log)
    : executor_(std::move(executor)),
      client_(client),
      options_(std::move(options)),
      clock_(clock),
      log_(std::move(log)) {
  base_.pageSize = options_.pageSize;
  base_.minWatchTimeout = options_.watchTimeout;
  base_.backoff = options_.backoff;
}

void CacheSet::start() {
  for (const auto& cache : caches_) {
    cache->start();
  }
  running_ = true;
}

void CacheSet::stop() {
  running_ = false;
  for (const auto& cache : caches_) {
    cache->stop();
  }
}

bool CacheSet::synced() const {
  for (const auto& cache : caches_) {
    if (cache->spec().required && !cache->synced()) {
      return false;
    }
  }
  return true;
}

bool CacheSet::healthy() const {
  for (const auto& cache : caches_) {
    for (const auto& informer : cache->informers()) {
      const bool excused = !cache->spec().required && informer.refused();
      if (informer.consecutiveFailures > kTooManyFailures && !excused) {
        return false;
      }
    }
  }
  return true;
}

bool CacheSet::optionalWaiting() const {
  for (const auto& cache : caches_) {
    if (cache->spec().required) {
      continue;
    }
    for (const auto& informer : cache->informers()) {
      if (!informer.synced && !informer.refused() &&
          informer.consecutiveFailures <= kTooManyFailures) {
        return true;
      }
    }
  }
  return false;
}

asio::awaitable<void> CacheSet::waitForSync() {
  for (std::size_t i = 0; i < caches_.size(); ++i) {  // a cache may be added meanwhile
    if (caches_[i]->spec().required) {
      co_await caches_[i]->waitForSync();
    }
  }
  // The optional ones are checked as their first attempts come back
  // (start-up only).
  Signal poll;
  const auto deadline = std::chrono::steady_clock::now() + options_.optionalSyncTimeout;
  while (running_ && std::chrono::steady_clock::now() < deadline && optionalWaiting()) {
    co_await poll.waitFor(std::chrono::milliseconds(50));
  }
}

void CacheSet::forEach(const std::function<void(const WatchedResource&)>& visit) const {
  for (const auto& cache : caches_) {
    visit(*cache);
  }
}

}  // namespace gpuplacement::runtime
