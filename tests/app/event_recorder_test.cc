// Events go out on their own budget, folded together and, past the queue's
// bound, dropped and counted: never in a placement's way. (A scripted
// server counts what is written; Events carry no semantics a real API
// server would add here.)
#include "app/event_recorder.h"

#include <doctest/doctest.h>

#include "support/scripted_writes.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

// The server stores every Event as sent.
struct EventRig : testing::ScriptedWrites {
  EventRig()
      : ScriptedWrites([](const FakeApiServer::Request& request) {
          FakeApiServer::Response response;
          response.status = 201;
          response.body = request.body;
          return response;
        }) {}

  std::vector<json> written() const {
    std::vector<json> events;
    for (const auto& request : server.requests()) {
      if (request.method == "POST") {
        events.push_back(json::parse(request.body));
      }
    }
    return events;
  }

  // Runs the recorder until it has drained and been stopped (5 s at most).
  void drain(EventRecorder& recorder) {
    asio::co_spawn(context, recorder.run(), [this](std::exception_ptr) { context.stop(); });
    asio::steady_timer stop(context, std::chrono::milliseconds(900));
    stop.async_wait([&](auto) { recorder.stop(); });
    context.run_for(std::chrono::seconds(5));
  }
};

core::Event placed(const std::string& message) {
  return {"Normal", "Placed", message};
}

}  // namespace

TEST_CASE("identical Events waiting are folded into one, with their count") {
  EventRig rig;
  EventRecorder recorder(*rig.writes, rig.logger, rig.metrics, rig.clock, {100, 10, 100});
  for (int i = 0; i < 3; ++i) {
    recorder.record("ml", "chat", "u1", placed("placed on g5.xlarge"));
  }
  recorder.record("ml", "chat", "u1", placed("placed on g6.xlarge"));
  recorder.record("ml", "other", "u2", placed("placed on g5.xlarge"));
  CHECK(recorder.waiting() == 3);
  rig.drain(recorder);
  const auto events = rig.written();
  REQUIRE(events.size() == 3);
  CHECK(events[0]["involvedObject"]["name"] == "chat");
  CHECK(events[0]["message"] == "placed on g5.xlarge");
  CHECK(events[0]["count"] == 3);
  CHECK(events[1]["count"] == 1);
  CHECK(events[2]["involvedObject"]["name"] == "other");
  CHECK(rig.metrics.render().find("gpu_placement_events_aggregated_total{reason=\"Placed\"} 2") !=
        std::string::npos);
}

TEST_CASE("past the queue's bound Events are dropped and counted, never waited for") {
  EventRig rig;
  EventRecorder recorder(*rig.writes, rig.logger, rig.metrics, rig.clock, {100, 10, 2});
  for (int i = 0; i < 5; ++i) {
    recorder.record("ml", "w" + std::to_string(i), "u", placed("placed"));
  }
  CHECK(recorder.waiting() == 2);
  rig.drain(recorder);
  CHECK(rig.written().size() == 2);
  CHECK(rig.metrics.render().find("gpu_placement_events_dropped_total{reason=\"Placed\"} 3") !=
        std::string::npos);
}

TEST_CASE("Events go out at their budget's pace") {
  EventRig rig;
  // 5 a second after a burst of 1: the 4th Event is written 0.6 s after the first.
  EventRecorder recorder(*rig.writes, rig.logger, rig.metrics, rig.clock, {5, 1, 100});
  for (int i = 0; i < 4; ++i) {
    recorder.record("ml", "w" + std::to_string(i), "u", placed("placed"));
  }
  std::size_t writtenEarly = 0;
  asio::steady_timer look(rig.context, std::chrono::milliseconds(350));
  look.async_wait([&](auto) { writtenEarly = rig.written().size(); });
  rig.drain(recorder);
  CHECK(writtenEarly >= 1);
  CHECK(writtenEarly <= 2);  // at 0, 0.2, 0.4 and 0.6 s: two by 0.35 s
  CHECK(rig.written().size() == 4);
}

}  // namespace gpuplacement::app
