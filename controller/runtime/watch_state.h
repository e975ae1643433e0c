#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "runtime/clock.h"

namespace gpuplacement::runtime {

// The list-then-watch protocol as an explicit state machine (kube-rs's
// watcher, client-go's reflector), with no I/O: the informer asks next()
// what to do, does it, and reports what happened.
//
//   Listing --last page--> Watching --server ends watch--> Watching (same rv)
//      ^  \--error--> BackingOff --then--> Listing            |
//      |                                                      |
//      +---- 410 Gone (HTTP or in-stream ERROR), or an expired continue token
//                                                             |
//   Watching --other error--> BackingOff --then--> Watching (same rv)
//
// "Listing" is a streaming list when the server offers one (a watch with
// sendInitialEvents=true, KEP-3157, on by default since Kubernetes 1.32):
// the current objects arrive as ADDED events from the watch cache, a
// bookmark marks their end, and the same stream goes on as the watch. It
// costs the server a fraction of paged LISTs, which for custom resources
// are decoded from etcd page by page. A server that refuses it (400 or
// 422) gets paged LISTs from then on; a stream that ends before that
// bookmark (a server going away) is followed by one paged LIST, as
// client-go does.
//
// Every resourceVersion seen (events and bookmarks) moves the resume point,
// so a new watch starts where the last one stopped: no event is lost. 410
// means that point is gone, so the informer lists again and replaces its
// store wholesale: no stale object survives.
class WatchState {
 public:
  enum class Phase { Listing, Watching, BackingOff };
  enum class StepKind { StreamList, ListPage, Watch, Wait };

  struct Step {
    StepKind kind;
    std::string continueToken;    // ListPage: the page to fetch ("" = first)
    std::string resourceVersion;  // Watch: resume from here
    MonotonicTime until{};        // Wait: until then
  };

  struct Backoff {
    std::chrono::milliseconds initial{800};  // client-go's reflector backoff
    std::chrono::milliseconds max{30'000};
  };

  WatchState() : WatchState(Backoff{std::chrono::milliseconds(800), std::chrono::seconds(30)}) {}
  explicit WatchState(Backoff backoff, bool streamingLists = true)
      : backoff_(backoff), streaming_(streamingLists) {}

  Step next() const {
    switch (phase_) {
      case Phase::Listing:
        if (streaming_ && !pagedOnce_) {
          return Step{StepKind::StreamList, "", "", {}};
        }
        return Step{StepKind::ListPage, continueToken_, "", {}};
      case Phase::Watching:
        return Step{StepKind::Watch, "", resourceVersion_, {}};
      case Phase::BackingOff:
        return Step{StepKind::Wait, "", "", waitUntil_};
    }
    return Step{StepKind::ListPage, "", "", {}};
  }

  // A page arrived. The last one (no continue token) completes the list.
  // Returns true when the list is complete and the store should be replaced.
  bool pageReceived(const std::string& continueToken, const std::string& resourceVersion) {
    if (!continueToken.empty()) {
      continueToken_ = continueToken;
      return false;
    }
    continueToken_.clear();
    pagedOnce_ = false;
    resourceVersion_ = resourceVersion;
    phase_ = Phase::Watching;
    synced_ = true;
    failures_ = 0;
    lastFailure_.reset();
    ++lists_;
    return true;
  }

  // The streaming list's end bookmark: the store is complete, and the
  // stream goes on as the watch from `resourceVersion`.
  void initialEventsEnded(const std::string& resourceVersion) {
    resourceVersion_ = resourceVersion;
    phase_ = Phase::Watching;
    synced_ = true;
    failures_ = 0;
    lastFailure_.reset();
    ++lists_;
  }

  // The server does not offer streaming lists: paged LISTs from now on.
  void streamingListRefused() {
    streaming_ = false;
    phase_ = Phase::Listing;
    continueToken_.clear();
  }

  // `jitter` in [0, 1) spreads retries of many clients apart.
  void listFailed(unsigned status, MonotonicTime now, double jitter) {
    lastFailure_ = status;
    continueToken_.clear();  // an expired token (410) or any failure: start over
    if (status == 410) {
      phase_ = Phase::Listing;
      return;
    }
    backOff(now, jitter, /*thenList=*/true);
  }

  // A stream is open. A watch that opens ends the backoff; a streaming
  // list ends it only at its end bookmark, so one that keeps breaking
  // waits longer each time.
  void streamOpened() {
    if (phase_ == Phase::Watching) {
      failures_ = 0;
      lastFailure_.reset();
    }
  }

  // The open stream broke or carried an error: while listing, the list
  // starts over; while watching, the watch resumes (or 410: list again).
  void streamFailed(unsigned status, MonotonicTime now, double jitter) {
    if (phase_ == Phase::Listing) {
      listFailed(status, now, jitter);
    } else {
      watchFailed(status, now, jitter);
    }
  }

  // The server ended the open stream cleanly. A watch resumes from the
  // last resourceVersion. A streaming list that ended before its end
  // bookmark gets one paged LIST instead.
  void streamEnded() {
    if (phase_ == Phase::Listing) {
      pagedOnce_ = true;
      continueToken_.clear();
    } else {
      watchEnded();
    }
  }

  // ADDED, MODIFIED, DELETED and BOOKMARK all carry the new resume point.
  void eventReceived(const std::string& resourceVersion) {
    if (!resourceVersion.empty()) {
      resourceVersion_ = resourceVersion;
    }
  }

  // The server closed the watch as it does every few minutes: resume.
  void watchEnded() { phase_ = Phase::Watching; }

  void watchFailed(unsigned status, MonotonicTime now, double jitter) {
    lastFailure_ = status;
    if (status == 410) {
      ++expirations_;
      phase_ = Phase::Listing;
      continueToken_.clear();
      return;
    }
    backOff(now, jitter, /*thenList=*/false);
  }

  // The wait is over.
  void waited() { phase_ = afterWait_; }

  Phase phase() const { return phase_; }
  bool synced() const { return synced_; }
  bool streamingLists() const { return streaming_; }
  const std::string& resourceVersion() const { return resourceVersion_; }
  int lists() const { return lists_; }
  int expirations() const { return expirations_; }
  int consecutiveFailures() const { return failures_; }
  // The HTTP status of the last failure since the last success (0: no
  // answer); nullopt when the last attempt succeeded.
  std::optional<unsigned> lastFailure() const { return lastFailure_; }

 private:
  void backOff(MonotonicTime now, double jitter, bool thenList) {
    const double factor = static_cast<double>(1LL << std::min(failures_, 16));
    const double ceiling = std::min<double>(static_cast<double>(backoff_.max.count()),
                                            static_cast<double>(backoff_.initial.count()) * factor);
    // Jitter within [ceiling/2, ceiling).
    const auto delay = std::chrono::milliseconds(
        static_cast<std::int64_t>(ceiling / 2 + ceiling / 2 * std::clamp(jitter, 0.0, 1.0)));
    ++failures_;
    waitUntil_ = now + delay;
    afterWait_ = thenList ? Phase::Listing : Phase::Watching;
    phase_ = Phase::BackingOff;
  }

  Backoff backoff_;
  Phase phase_ = Phase::Listing;
  Phase afterWait_ = Phase::Listing;
  bool streaming_;
  bool pagedOnce_ = false;  // the next list in pages, then streaming again
  std::string continueToken_;
  std::string resourceVersion_;
  MonotonicTime waitUntil_{};
  int failures_ = 0;
  std::optional<unsigned> lastFailure_;
  int lists_ = 0;
  int expirations_ = 0;
  bool synced_ = false;
};

}  // namespace gpuplacement::runtime
