#include "runtime/watch_state.h"

#include <vector>

#include <doctest/doctest.h>

#include "support/fake_clock.h"

namespace gpuplacement::runtime {

using namespace std::chrono;
using Kind = WatchState::StepKind;
using testing::FakeClock;

TEST_CASE("paged list, then watch from the list's resourceVersion") {
  WatchState state(WatchState::Backoff{}, /*streamingLists=*/false);
  CHECK(state.next().kind == Kind::ListPage);
  CHECK(state.next().continueToken.empty());
  CHECK_FALSE(state.pageReceived("token-2", "100"));
  CHECK(state.next().kind == Kind::ListPage);
  CHECK(state.next().continueToken == "token-2");
  CHECK_FALSE(state.synced());
  CHECK(state.pageReceived("", "120"));
  CHECK(state.synced());
  CHECK(state.next().kind == Kind::Watch);
  CHECK(state.next().resourceVersion == "120");
}

TEST_CASE("events and bookmarks move the resume point; a normal end resumes there") {
  WatchState state(WatchState::Backoff{}, /*streamingLists=*/false);
  state.pageReceived("", "10");
  state.streamOpened();
  state.eventReceived("11");
  state.eventReceived("15");  // a bookmark
  state.streamEnded();
  CHECK(state.next().kind == Kind::Watch);
  CHECK(state.next().resourceVersion == "15");
  CHECK(state.lists() == 1);
}

TEST_CASE("410 Gone on the watch means list again; other errors back off and resume") {
  FakeClock clock;
  WatchState state({milliseconds(100), seconds(2)}, /*streamingLists=*/false);
  state.pageReceived("", "10");
  state.watchFailed(500, clock.monotonicNow(), 0.0);
  auto step = state.next();
  CHECK(step.kind == Kind::Wait);
  CHECK(step.until == clock.monotonicNow() + milliseconds(50));  // [ceiling/2, ceiling)
  state.waited();
  CHECK(state.next().kind == Kind::Watch);
  CHECK(state.next().resourceVersion == "10");

  // Consecutive failures double the wait, up to the cap.
  state.watchFailed(0, clock.monotonicNow(), 0.999);
  CHECK(state.next().until - clock.monotonicNow() >= milliseconds(199));
  for (int i = 0; i < 10; ++i) {
    state.waited();
    state.watchFailed(0, clock.monotonicNow(), 0.999);
  }
  CHECK(state.next().until - clock.monotonicNow() <= seconds(2));
  state.waited();

  state.watchFailed(410, clock.monotonicNow(), 0.5);
  CHECK(state.next().kind == Kind::ListPage);
  CHECK(state.next().continueToken.empty());
  CHECK(state.expirations() == 1);
  CHECK(state.pageReceived("", "500"));
  CHECK(state.lists() == 2);
  CHECK(state.next().resourceVersion == "500");
}

TEST_CASE("a failed or expired list page starts the list over") {
  FakeClock clock;
  WatchState state({milliseconds(100), seconds(2)}, /*streamingLists=*/false);
  state.pageReceived("token", "10");
  state.listFailed(410, clock.monotonicNow(), 0.5);  // the continue token expired
  CHECK(state.next().kind == Kind::ListPage);
  CHECK(state.next().continueToken.empty());
  state.listFailed(503, clock.monotonicNow(), 0.5);
  CHECK(state.next().kind == Kind::Wait);
  state.waited();
  CHECK(state.next().kind == Kind::ListPage);
  CHECK_FALSE(state.synced());
}

TEST_CASE("streaming list: the end bookmark syncs and the stream goes on as the watch") {
  FakeClock clock;
  WatchState state({milliseconds(100), seconds(2)});
  CHECK(state.streamingLists());
  CHECK(state.next().kind == Kind::StreamList);
  // A broken stream before the end: back off, then stream the list again.
  state.listFailed(0, clock.monotonicNow(), 0.5);
  CHECK(state.next().kind == Kind::Wait);
  state.waited();
  CHECK(state.next().kind == Kind::StreamList);
  CHECK_FALSE(state.synced());
  state.initialEventsEnded("50");
  CHECK(state.synced());
  CHECK(state.lists() == 1);
  CHECK(state.next().kind == Kind::Watch);
  CHECK(state.next().resourceVersion == "50");
  // 410 later: the relist streams too.
  state.watchFailed(410, clock.monotonicNow(), 0.5);
  CHECK(state.next().kind == Kind::StreamList);
}

TEST_CASE("a server that refuses streaming lists gets paged lists for good") {
  FakeClock clock;
  WatchState state;
  state.streamingListRefused();
  CHECK_FALSE(state.streamingLists());
  CHECK(state.next().kind == Kind::ListPage);
  CHECK(state.pageReceived("", "10"));
  state.watchFailed(410, clock.monotonicNow(), 0.5);
  CHECK(state.next().kind == Kind::ListPage);
}

TEST_CASE("a streaming list that keeps breaking waits longer each time") {
  FakeClock clock;
  WatchState state({milliseconds(100), seconds(2)});
  const auto start = clock.monotonicNow();
  std::vector<milliseconds> waits;
  for (int attempt = 0; attempt < 3; ++attempt) {
    REQUIRE(state.next().kind == Kind::StreamList);
    state.streamOpened();  // it opens, then breaks before its end bookmark
    state.streamFailed(0, start, 0.5);
    REQUIRE(state.next().kind == Kind::Wait);
    waits.push_back(duration_cast<milliseconds>(state.next().until - start));
    state.waited();
  }
  CHECK(waits == std::vector<milliseconds>{milliseconds(75), milliseconds(150), milliseconds(300)});
  CHECK(state.consecutiveFailures() == 3);
  state.streamOpened();
  state.initialEventsEnded("9");
  CHECK(state.consecutiveFailures() == 0);
  // A watch that fails and opens again starts its backoff over.
  state.streamFailed(0, start, 0.5);
  CHECK(state.consecutiveFailures() == 1);
  state.waited();
  CHECK(state.next().kind == Kind::Watch);
  state.streamOpened();
  CHECK(state.consecutiveFailures() == 0);
}

TEST_CASE("a streaming list that ends before its end bookmark: one paged list, then streaming") {
  FakeClock clock;
  WatchState state;
  REQUIRE(state.next().kind == Kind::StreamList);
  state.streamOpened();
  state.streamEnded();
  CHECK(state.streamingLists());
  CHECK(state.next().kind == Kind::ListPage);
  state.listFailed(503, clock.monotonicNow(), 0.5);  // still in pages after a failure
  state.waited();
  CHECK(state.next().kind == Kind::ListPage);
  CHECK_FALSE(state.pageReceived("more", "20"));
  CHECK(state.next().continueToken == "more");
  CHECK(state.pageReceived("", "20"));
  CHECK(state.next().kind == Kind::Watch);
  state.streamOpened();
  state.streamEnded();  // a watch's normal end resumes it
  CHECK(state.next().kind == Kind::Watch);
  CHECK(state.next().resourceVersion == "20");
  state.streamFailed(410, clock.monotonicNow(), 0.5);
  CHECK(state.next().kind == Kind::StreamList);
}

TEST_CASE("the last failure is kept until a list or watch succeeds: 403 tells RBAC is missing") {
  FakeClock clock;
  WatchState state;
  CHECK_FALSE(state.lastFailure().has_value());
  state.listFailed(403, clock.monotonicNow(), 0.5);
  CHECK(state.lastFailure() == 403u);
  state.waited();
  state.listFailed(0, clock.monotonicNow(), 0.5);  // no answer this time
  CHECK(state.lastFailure() == 0u);
  state.waited();
  state.streamOpened();
  state.initialEventsEnded("12");
  CHECK_FALSE(state.lastFailure().has_value());
  state.streamFailed(500, clock.monotonicNow(), 0.5);
  CHECK(state.lastFailure() == 500u);
  state.waited();
  state.streamOpened();  // the watch is back
  CHECK_FALSE(state.lastFailure().has_value());
}

}  // namespace gpuplacement::runtime
