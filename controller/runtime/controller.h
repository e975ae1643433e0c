#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "runtime/async_work_queue.h"
#include "runtime/clock.h"
#include "runtime/signal.h"

namespace gpuplacement::runtime {

// What a reconcile asks for next (controller-runtime's Result / kube-rs's
// Action). Reconciles are level-based: they are told only the key, never
// why they run.
struct ReconcileResult {
  enum class Outcome { Done, Requeue, Error, Terminal };
  Outcome outcome = Outcome::Done;
  std::chrono::nanoseconds requeueAfter{0};  // for Requeue, and for Error when known
  std::string message;

  static ReconcileResult done() { return {}; }
  static ReconcileResult requeue(std::chrono::nanoseconds after) {
    return {Outcome::Requeue, after, ""};
  }
  // Retried with per-key exponential backoff (or after `retryAfter`).
  static ReconcileResult error(std::string message,
                               std::chrono::nanoseconds retryAfter = std::chrono::nanoseconds(0)) {
    return {Outcome::Error, retryAfter, std::move(message)};
  }
  // Not retried: the object must change first (controller-runtime's TerminalError).
  static ReconcileResult terminal(std::string message) {
    return {Outcome::Terminal, std::chrono::nanoseconds(0), std::move(message)};
  }
};

struct ReconcileRecord {
  ReconcileResult::Outcome outcome;
  std::chrono::nanoseconds duration;
  std::chrono::nanoseconds queueWait;
  int retries;
};

// N workers over one queue: each takes a key, reconciles it, and applies
// the result to the queue. Workers are coroutines on the event loop; the
// queue guarantees a key is never reconciled by two of them at once.
template <typename Key = ObjectKey>
class Controller {
 public:
  using Reconcile = std::function<asio::awaitable<ReconcileResult>(const Key& key)>;
  using Observer = std::function<void(const ReconcileRecord&)>;

  Controller(asio::any_io_executor executor, AsyncWorkQueue<Key>& queue, int workers,
             Reconcile reconcile, const Clock& clock)
      : executor_(std::move(executor)),
        queue_(queue),
        workers_(workers),
        reconcile_(std::move(reconcile)),
        clock_(clock) {}

  void setObserver(Observer observer) { observer_ = std::move(observer); }

  // Runs the workers until the queue shuts down and the last in-flight
  // reconcile has finished.
  asio::awaitable<void> run() {
    running_ = workers_;
    for (int i = 0; i < workers_; ++i) {
      asio::co_spawn(executor_, worker(), asio::detached);
    }
    while (running_ > 0) {
      co_await allDone_.wait();
    }
  }

  int inFlight() const { return inFlight_; }

 private:
  asio::awaitable<void> worker() {
    for (;;) {
      auto key = co_await queue_.get();
      if (!key) {
        break;
      }
      const auto wait = queue_.queue().lastWait();
      const auto start = clock_.monotonicNow();
      ++inFlight_;
      const ReconcileResult result = co_await guarded(*key);
      --inFlight_;
      const int retries = queue_.queue().retries(*key);
      switch (result.outcome) {
        case ReconcileResult::Outcome::Done:
        case ReconcileResult::Outcome::Terminal:
          queue_.forget(*key);
          break;
        case ReconcileResult::Outcome::Requeue:
          queue_.forget(*key);
          queue_.addAfter(*key, result.requeueAfter);
          break;
        case ReconcileResult::Outcome::Error:
          if (result.requeueAfter > std::chrono::nanoseconds(0)) {
            queue_.addAfter(*key, result.requeueAfter);
          } else {
            queue_.addRateLimited(*key);
          }
          break;
      }
      queue_.done(*key);
      if (observer_) {
        observer_(ReconcileRecord{result.outcome, clock_.monotonicNow() - start, wait, retries});
      }
    }
    if (--running_ == 0) {
      allDone_.notifyAll();
    }
  }

  // A reconcile that throws has a bug, not bad input: retry it with backoff
  // rather than end the loop. (The result initialises a variable inside the
  // try: g++ 12 destroys a co_await result assigned to an outer variable
  // twice.)
  asio::awaitable<ReconcileResult> guarded(Key key) {
    std::string failure;
    try {
      ReconcileResult result = co_await reconcile_(key);
      co_return result;
    } catch (const std::exception& e) {
      failure = e.what();
    }
    co_return ReconcileResult::error("reconcile threw: " + failure);
  }

  asio::any_io_executor executor_;
  AsyncWorkQueue<Key>& queue_;
  int workers_;
  Reconcile reconcile_;
  const Clock& clock_;
  Observer observer_;
  int running_ = 0;
  int inFlight_ = 0;
  Signal allDone_;
};

}  // namespace gpuplacement::runtime
