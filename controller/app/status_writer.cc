#include "app/status_writer.h"

#include <algorithm>

#include "runtime/object_key.h"

namespace gpuplacement::app {
namespace {

// What is still queued when the operator stops gets this long (a pod has
// 30 s by default between SIGTERM and SIGKILL). What is not written by
// then is decided again by the next leader, from the targets.
constexpr auto kStatusesFlushOnStop = std::chrono::seconds(10);
// A refused write is tried again after this, doubling to the cap.
constexpr auto kRetryBase = std::chrono::milliseconds(500);
constexpr auto kRetryCap = std::chrono::minutes(5);

// A tenth of a second's worth may go at once: the rate, not its bursts,
// is what the placements feel.
int burstAt(double perSecond) {
  return std::max(1, static_cast<int>(perSecond / 10));
}

}  // namespace

StatusWriter::StatusWriter(ApiWrites& writes, Logger& log, MetricsRegistry& metrics,
                           const runtime::Clock& clock, StatusBudget budget, Stored stored)
    : writes_(writes),
      log_(log),
      clock_(clock),
      budget_(budget),
      stored_(std::move(stored)),
      rate_(budget.rate),
      bucket_(budget.rate.initial, burstAt(budget.rate.initial)),
      written_(
          metrics.counter("gpu_placement_status_writes_total",
                          "GpuWorkload statuses written, by result (ok, failed, gone: the object "
                          "deleted, or another made under its name)",
                          {"result"})),
      coalesced_(
          metrics.counter("gpu_placement_statuses_coalesced_total",
                          "GpuWorkload statuses replaced by a newer one before they were written")),
      inline_(
          metrics.counter("gpu_placement_statuses_written_inline_total",
                          "GpuWorkload statuses a reconcile wrote itself: the writer was full")) {}

void StatusWriter::placementAnswered(std::chrono::nanoseconds latency) {
  rate_.observe(latency, clock_.monotonicNow());
}

bool StatusWriter::submit(const std::string& key, const std::string& uid, nlohmann::json status,
                          std::uint64_t digest) {
  const auto text = status.dump();
  if (pending_.empty()) {
    // Nothing held was packed against the reference: a fresh one, the
    // status of now, fits what comes next best.
    compressor_.setReference(text);
  }
  auto packed = compressor_.pack(text);
  if (const auto it = pending_.find(key); it != pending_.end()) {
    auto& entry = it->second;
    if (!entry.next.empty()) {
      coalesced_.inc({});
    }
    bytes_ = bytes_ - entry.next.size() + packed.size();
    entry.next = std::move(packed);
    entry.nextUid = uid;
    entry.nextDigest = digest;
    entry.failures = 0;
    schedule(key, entry);
    return true;
  }
  if (stopped_ || bytes_ + packed.size() > budget_.queueBytes) {
    inline_.inc({});
    return false;
  }
  bytes_ += packed.size();
  auto& entry = pending_[key];
  entry.next = std::move(packed);
  entry.nextUid = uid;
  entry.nextDigest = digest;
  schedule(key, entry);
  return true;
}

std::optional<StatusWriter::Held> StatusWriter::pending(const std::string& key,
                                                        const std::string& uid) const {
  const auto it = pending_.find(key);
  if (it == pending_.end()) {
    return std::nullopt;
  }
  // The newest: the one waiting, else the one on its way.
  const auto& entry = it->second;
  const bool waiting = !entry.next.empty();
  if ((waiting ? entry.nextUid : entry.inFlightUid) != uid) {
    return std::nullopt;
  }
  const auto text = unpack(waiting ? entry.next : entry.inFlight);
  if (!text) {
    return std::nullopt;
  }
  return Held{nlohmann::json::parse(*text), waiting ? entry.nextDigest : entry.inFlightDigest};
}

std::optional<std::string> StatusWriter::unpack(const std::string& packed) const {
  auto text = compressor_.unpack(packed);
  if (!text) {
    // Only a reference changed under a held status could do this; the
    // reconcile then reads the cache's status and decides again.
    log_.error("a held GpuWorkload status does not unpack", {});
  }
  return text;
}

void StatusWriter::schedule(const std::string& key, Entry& entry) {
  // One write per workload at a time: a status that arrives while the
  // previous one is on its way goes out after it.
  if (entry.queued || !entry.inFlight.empty() || entry.next.empty()) {
    return;
  }
  entry.queued = true;
  queue_.push_back(key);
  wake_.notifyOne();
}

asio::awaitable<void> StatusWriter::run() {
  auto executor = co_await asio::this_coro::executor;
  for (int i = 0; i < std::max(budget_.writers, 1); ++i) {
    ++loops_;
    asio::co_spawn(executor, writeLoop(), [this](const std::exception_ptr& error) {
      if (error) {
        try {
          std::rethrow_exception(error);
        } catch (const std::exception& e) {
          log_.error("status writer stopped", {{"error", e.what()}});
        }
      }
      --loops_;
      loopEnded_.notifyAll();
    });
  }
  while (loops_ > 0) {
    co_await loopEnded_.wait();
  }
}

void StatusWriter::stop() {
  stopped_ = true;
  wake_.notifyAll();
}

void StatusWriter::promoteDueRetries() {
  const auto now = clock_.monotonicNow();
  while (!retries_.empty() && retries_.begin()->first <= now) {
    const std::string key = std::move(retries_.begin()->second);
    retries_.erase(retries_.begin());
    if (const auto it = pending_.find(key); it != pending_.end()) {
      schedule(key, it->second);
    }
  }
}

asio::awaitable<void> StatusWriter::writeLoop() {
  auto flushUntil = runtime::MonotonicTime::max();
  while (true) {
    if (stopped_) {
      if (flushUntil == runtime::MonotonicTime::max()) {
        flushUntil = clock_.monotonicNow() + kStatusesFlushOnStop;
      }
      if (queue_.empty() || clock_.monotonicNow() >= flushUntil) {
        co_return;
      }
    } else {
      promoteDueRetries();
    }
    if (queue_.empty()) {
      co_await wake_.waitUntil(retries_.empty() ? runtime::MonotonicTime::max()
                                                : retries_.begin()->first);
      continue;
    }
    if (!stopped_) {
      // The token is taken now at the rate the placements leave, and the
      // write waits out its debt (stopping cuts it short).
      const auto now = clock_.monotonicNow();
      const double perSecond = rate_.rate(now);
      bucket_.setRate(perSecond, burstAt(perSecond), now);
      const auto until = now + bucket_.reserve(now);
      while (!stopped_ && clock_.monotonicNow() < until) {
        co_await wake_.waitUntil(until);
      }
      if (queue_.empty()) {
        continue;
      }
    }
    std::string key = std::move(queue_.front());
    queue_.pop_front();
    co_await write(std::move(key));
  }
}

asio::awaitable<void> StatusWriter::write(std::string key) {
  auto it = pending_.find(key);
  if (it == pending_.end()) {
    co_return;
  }
  it->second.queued = false;
  it->second.inFlight = std::move(it->second.next);
  it->second.inFlightUid = std::move(it->second.nextUid);
  it->second.inFlightDigest = it->second.nextDigest;
  it->second.next.clear();
  it->second.nextUid.clear();
  const auto unpacked = unpack(it->second.inFlight);
  if (!unpacked) {
    written_.inc({"failed"});
    bytes_ -= it->second.inFlight.size();
    it->second.inFlight.clear();
    it->second.inFlightUid.clear();
    pending_.erase(it);
    co_return;
  }
  // Sent as the text it is held as: nothing parses it on the way out.
  const std::string& status = *unpacked;
  const auto digest = it->second.inFlightDigest;
  const auto object = runtime::ObjectKey::parse(key);
  auto result = co_await writes_.replaceWorkloadStatusText(object.ns, object.name,
                                                           it->second.inFlightUid, status);
  it = pending_.find(key);  // the map may have grown while the write was out
  if (it == pending_.end()) {
    co_return;  // only this write removes the entry; kept as a guard
  }
  auto& entry = it->second;
  if (result) {
    written_.inc({"ok"});
    // The cache has not seen it yet: the expectation holds the reconciles
    // back from here, as pending() did until now.
    stored_(key, digest, status, *result);
  } else if (result.error().notFound()) {
    written_.inc({"gone"});
  } else {
    written_.inc({"failed"});
    log_.warn(
        "writing a GpuWorkload status failed; will retry",
        {{"namespace", object.ns}, {"name", object.name}, {"error", result.error().describe()}});
    if (entry.next.empty() && !stopped_) {
      entry.next = std::move(entry.inFlight);
      entry.nextUid = std::move(entry.inFlightUid);
      entry.nextDigest = entry.inFlightDigest;
      const auto delay = std::min<std::chrono::nanoseconds>(
          kRetryBase * (1LL << std::min(entry.failures, 20)), kRetryCap);
      ++entry.failures;
      entry.inFlight.clear();
      entry.inFlightUid.clear();
      retries_.emplace(clock_.monotonicNow() + delay, key);
      wake_.notifyOne();
      co_return;
    }
  }
  bytes_ -= entry.inFlight.size();
  entry.inFlight.clear();
  entry.inFlightUid.clear();
  if (entry.next.empty()) {
    pending_.erase(it);
  } else {
    schedule(key, entry);
  }
}

}  // namespace gpuplacement::app
