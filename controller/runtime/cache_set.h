#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cache.h"

namespace gpuplacement::runtime {

struct CacheSetOptions {
  std::vector<std::string> namespaces;  // empty: all
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
  // How long start-up waits for an optional cache that neither fills nor
  // is refused (controller-runtime's cache-sync timeout).
  std::chrono::seconds optionalSyncTimeout{120};
  // How an informer waits after a failure (client-go's reflector: 800 ms,
  // doubling to 30 s).
  WatchState::Backoff backoff{};
};

// Every cache the operator watches through, made the same way (one informer
// per watched namespace, the same page size and watch timeout) and judged
// together: filled, healthy, counted. A cache added while the set runs
// starts at once (a CRD found served after start).
class CacheSet {
 public:
  // An informer that has failed this many times in a row is not making
  // progress; a restart (what a failing liveness probe causes) is the
  // cheap fix.
  static constexpr int kTooManyFailures = 20;

  CacheSet(asio::any_io_executor executor, ListWatchClient& client, CacheSetOptions options,
           const Clock& clock, std::function<void(const std::string&)> log);

  template <typename T>
  Cache<T>& add(ResourceSpec spec, typename Cache<T>::Projector project) {
    auto cache = std::make_unique<Cache<T>>(executor_, client_, base_, options_.namespaces,
                                            std::move(spec), std::move(project), clock_, log_);
    auto& added = *cache;
    caches_.push_back(std::move(cache));
    if (running_) {
      added.start();
    }
    return added;
  }

  void start();  // every cache's informers, until stop()
  void stop();
  // Every required cache is full, and each optional one is full, known to
  // be refused (403) or absent (404), stuck failing, or given up on after
  // optionalSyncTimeout: placement then goes on without it until it fills.
  asio::awaitable<void> waitForSync();
  // Every required cache is full.
  bool synced() const;
  // No informer is stuck failing (an optional one refused for good is not
  // stuck: the operator works without it).
  bool healthy() const;
  void forEach(const std::function<void(const WatchedResource&)>& visit) const;

 private:
  bool optionalWaiting() const;

  asio::any_io_executor executor_;
  ListWatchClient& client_;
  CacheSetOptions options_;
  InformerOptions base_;
  const Clock& clock_;
  std::function<void(const std::string&)> log_;
  std::vector<std::unique_ptr<WatchedResource>> caches_;
  bool running_ = false;
};

}  // namespace gpuplacement::runtime
