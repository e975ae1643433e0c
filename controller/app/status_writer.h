#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "app/api_writes.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "runtime/clock.h"
#include "runtime/latency_governed_rate.h"
#include "runtime/rate_limiter.h"
#include "runtime/signal.h"
#include "runtime/text_compressor.h"

namespace gpuplacement::app {

struct StatusBudget {
  int writers = 4;  // status writes in flight at once
  // Statuses a second: they start at `rate.initial` when placements do,
  // and from there yield to the placements' patches: cut while those
  // answer slower than the server's baseline (measured in a burst's first
  // second with the statuses at their minimum), grown while they do not,
  // doubled while there are none; never outside its minimum and maximum.
  runtime::LatencyGovernedRateOptions rate;
  // The statuses held, in bytes as they are kept (compressed, about 0.55
  // KB for a status of 3 KB), at most: 16 MiB holds about 30,000, a burst
  // of 20,000 placed at once on a 5,000-node cluster held back whole. A
  // reconcile that finds the writer full writes its status itself, as it
  // would without one.
  std::size_t queueBytes = std::size_t{16} << 20;
};

// A GpuWorkload's status goes out behind the patch that placed it: the
// reconcile hands the status over and is done. The Deployment patch
// places the workload and the ownership record on it is the durable fact;
// the status is the account a person reads, and it uses only the server
// capacity the placements leave: the reconciler reports how long each
// placement patch took (placementAnswered), and the statuses' rate yields
// to that latency and catches up once it falls. The latest status of a
// workload replaces one still waiting, so a burst of changes is one
// write; one workload's writes never overlap, so the server never stores
// an older one last.
// Until the cache shows a status, pending() has it: the reconciler reads
// its own write, and no decision acts on the record before it.
// The statuses wait compressed against one of them (runtime::TextCompressor):
// a burst holds thousands of texts that differ in a few names and figures.
class StatusWriter {
 public:
  // Called when the server has stored a status: what was sent (its
  // digest, core::statusDigest, and its text) and what it kept (an older
  // CRD prunes fields).
  using Stored = std::function<void(const std::string& key, std::uint64_t writtenDigest,
                                    const std::string& writtenText, const nlohmann::json& stored)>;

  // A refused write is tried again with backoff, unless a newer status
  // replaces it first.
  StatusWriter(ApiWrites& writes, Logger& log, MetricsRegistry& metrics,
               const runtime::Clock& clock, StatusBudget budget, Stored stored);

  // A placement's patch answered after `latency`: what the statuses yield to.
  void placementAnswered(std::chrono::nanoseconds latency);

  // False when the writer is full: write it yourself. `uid` is the object's
  // the status was computed for: it is written to that object only;
  // `digest` is its core::statusDigest, handed back when it is stored.
  bool submit(const std::string& key, const std::string& uid, nlohmann::json status,
              std::uint64_t digest);
  // A status held, with the digest it was submitted with.
  struct Held {
    nlohmann::json status;
    std::uint64_t digest = 0;
  };
  // The status waiting or being written for the object `uid` under `key`;
  // none when none (or one for another object of that name).
  std::optional<Held> pending(const std::string& key, const std::string& uid) const;
  // Writes until stop(), then what is left for a moment.
  asio::awaitable<void> run();
  void stop();

  std::size_t waiting() const { return pending_.size(); }
  std::size_t bytes() const { return bytes_; }
  // The statuses' rate now, a second.
  double perSecond() { return rate_.rate(clock_.monotonicNow()); }
  // The placements' patch latency the rate is judged against (zero before
  // the first placement).
  std::chrono::nanoseconds baseline() const { return rate_.baseline(); }

 private:
  struct Entry {
    std::string next;      // the status to write next, packed (empty: none)
    std::string inFlight;  // the status being written, packed (empty: none)
    std::string nextUid;   // the objects they are for
    std::string inFlightUid;
    std::uint64_t nextDigest = 0;  // their core::statusDigest
    std::uint64_t inFlightDigest = 0;
    bool queued = false;
    int failures = 0;  // in a row, for the backoff
  };
  // Queues the key when it has a status to write and none on its way.
  void schedule(const std::string& key, Entry& entry);
  void promoteDueRetries();
  std::optional<std::string> unpack(const std::string& packed) const;
  asio::awaitable<void> writeLoop();
  asio::awaitable<void> write(std::string key);

  ApiWrites& writes_;
  Logger& log_;
  const runtime::Clock& clock_;
  StatusBudget budget_;
  Stored stored_;
  runtime::LatencyGovernedRate rate_;
  runtime::TokenBucket bucket_;
  std::deque<std::string> queue_;  // keys, oldest first
  std::unordered_map<std::string, Entry> pending_;
  std::multimap<runtime::MonotonicTime, std::string> retries_;
  runtime::Signal wake_{clock_};
  runtime::Signal loopEnded_;
  runtime::TextCompressor compressor_;
  std::size_t bytes_ = 0;  // of the statuses held, packed
  int loops_ = 0;
  bool stopped_ = false;
  MetricFamily& written_;
  MetricFamily& coalesced_;
  MetricFamily& inline_;
};

}  // namespace gpuplacement::app
