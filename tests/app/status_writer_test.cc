// Statuses go out behind the placements, on their own budget: one write at
// a time per workload, the newest winning, refused writes tried again.
// (A scripted server: it answers 500 and answers while the test submits
// more, which a real API server cannot be made to do on cue.)
#include "app/status_writer.h"

#include <algorithm>
#include <optional>

#include <doctest/doctest.h>

#include "core/plan/workload_plan.h"
#include "support/scripted_writes.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;
using testing::FakeApiServer;

// The server answers a status patch with the status as stored, unless
// `answer` says otherwise; `onRequest` runs while the write is on its way.
struct StatusRig : testing::ScriptedWrites {
  std::function<unsigned(const json& status)> answer = [](const json&) { return 200u; };
  std::function<void()> onRequest = [] {};
  std::vector<std::pair<std::string, json>> stored;

  StatusRig()
      : ScriptedWrites([this](const FakeApiServer::Request& request) {
          onRequest();
          const auto status = json::parse(request.body).back().at("value");
          FakeApiServer::Response response;
          response.status = answer(status);
          json body = {{"kind", "Status"}, {"code", response.status}};
          if (response.status == 200) {
            body = {{"status", status}};
          } else if (response.status == 422) {  // kube-apiserver's answer to a failed test
            body["reason"] = "Invalid";
            body["message"] = "the server rejected our request due to an error in our request";
          }
          response.body = body.dump();
          return response;
        }) {}

  StatusWriter writer(StatusBudget budget) {
    return StatusWriter(*writes, logger, metrics, clock, budget,
                        [this](const std::string& key, std::uint64_t digest,
                               const std::string& text, const json& status) {
                          // What was sent is what was submitted, and its digest.
                          CHECK(digest == core::statusDigest(json::parse(text)));
                          stored.emplace_back(key, status);
                        });
  }

  // The statuses the server received, in order: (path, status).
  std::vector<std::pair<std::string, json>> written() const {
    std::vector<std::pair<std::string, json>> statuses;
    for (const auto& request : server.requests()) {
      statuses.emplace_back(request.target, json::parse(request.body).back().at("value"));
    }
    return statuses;
  }

  // Runs the writer for `runFor`, then stops it and lets it finish (5 s at
  // most): the loop ends with the writer, not with the server.
  void run(StatusWriter& writer, std::chrono::milliseconds runFor) {
    asio::co_spawn(context, writer.run(), [this](std::exception_ptr) { context.stop(); });
    asio::steady_timer stop(context, runFor);
    stop.async_wait([&](auto) { writer.stop(); });
    context.run_for(runFor + std::chrono::seconds(5));
  }

  bool metric(const std::string& line) { return metrics.render().find(line) != std::string::npos; }
};

// Submits a status with its digest, as the reconciler does.
bool submitTo(StatusWriter& writer, const std::string& key, const std::string& uid,
              const json& status) {
  return writer.submit(key, uid, status, core::statusDigest(status));
}

// The status held for `key`, checked to come back with the digest it was
// submitted with.
std::optional<json> heldStatus(const StatusWriter& writer, const std::string& key,
                               const std::string& uid) {
  auto held = writer.pending(key, uid);
  if (!held) {
    return std::nullopt;
  }
  CHECK(held->digest == core::statusDigest(held->status));
  return std::move(held->status);
}

// The object the statuses are for.
const std::string kUid = "4f1c0e2a-0000-4000-8000-000000000001";

json status(int version) {
  return {{"observedGeneration", version}};
}

const std::string kPath = "/apis/gpuplacement.io/v1alpha1/namespaces/ml/gpuworkloads/chat/status";

}  // namespace

TEST_CASE("one workload's statuses go out one at a time, the newest replacing those waiting") {
  StatusRig rig;
  auto writer = rig.writer({});
  REQUIRE(submitTo(writer, "ml/chat", kUid, status(1)));
  // While the first is on its way two more come: the third replaces the
  // second, and goes out only once the first has been stored.
  bool submitted = false;
  json pendingDuringWrite;
  rig.onRequest = [&] {
    if (!submitted) {
      submitted = true;
      submitTo(writer, "ml/chat", kUid, status(2));
      submitTo(writer, "ml/chat", kUid, status(3));
      pendingDuringWrite = *heldStatus(writer, "ml/chat", kUid);
    }
  };
  CHECK(heldStatus(writer, "ml/chat", kUid) == status(1));
  CHECK_FALSE(heldStatus(writer, "ml/other", kUid).has_value());
  rig.run(writer, std::chrono::milliseconds(500));
  const auto written = rig.written();
  REQUIRE(written.size() == 2);
  CHECK(written[0] == std::pair{kPath, status(1)});
  CHECK(written[1] == std::pair{kPath, status(3)});
  CHECK(pendingDuringWrite == status(3));
  REQUIRE(rig.stored.size() == 2);
  CHECK(rig.stored[1] == std::pair{std::string("ml/chat"), status(3)});
  CHECK_FALSE(heldStatus(writer, "ml/chat", kUid).has_value());
  CHECK(writer.waiting() == 0);
  CHECK(rig.metric("gpu_placement_statuses_coalesced_total 1"));
  CHECK(rig.metric("gpu_placement_status_writes_total{result=\"ok\"} 2"));
}

TEST_CASE("a refused status is tried again after a backoff, and stays readable meanwhile") {
  StatusRig rig;
  auto writer = rig.writer({});
  int answered = 0;
  rig.answer = [&](const json&) { return ++answered == 1 ? 500u : 200u; };
  REQUIRE(submitTo(writer, "ml/chat", kUid, status(1)));
  json pendingAfterRefusal;
  asio::steady_timer look(rig.context, std::chrono::milliseconds(250));
  look.async_wait([&](auto) {
    if (auto held = heldStatus(writer, "ml/chat", kUid)) {
      pendingAfterRefusal = std::move(*held);
    }
  });
  rig.run(writer, std::chrono::milliseconds(1500));
  const auto written = rig.written();
  REQUIRE(written.size() == 2);  // refused, then stored after the 0.5 s backoff
  CHECK(written[1].second == status(1));
  CHECK(pendingAfterRefusal == status(1));
  REQUIRE(rig.stored.size() == 1);
  CHECK(rig.metric("gpu_placement_status_writes_total{result=\"failed\"} 1"));
  CHECK(writer.waiting() == 0);
}

TEST_CASE("a workload gone (404) drops its status, without retrying") {
  StatusRig rig;
  auto writer = rig.writer({});
  rig.answer = [](const json&) { return 404u; };
  REQUIRE(submitTo(writer, "ml/chat", kUid, status(1)));
  rig.run(writer, std::chrono::milliseconds(800));
  CHECK(rig.written().size() == 1);
  CHECK(rig.stored.empty());
  CHECK(writer.waiting() == 0);
  CHECK(rig.metric("gpu_placement_status_writes_total{result=\"gone\"} 1"));
}

TEST_CASE("statuses slow while the placements' patches answer slowly, and catch up after") {
  StatusRig rig;
  // Intervals of 100 ms, so that the test takes a few seconds.
  auto writer = rig.writer({.writers = 4,
                            .rate = {.initial = 40,
                                     .minimum = 1,
                                     .maximum = 200,
                                     .step = 5,
                                     .interval = std::chrono::milliseconds(100)}});
  constexpr int kStatuses = 60;
  for (int i = 0; i < kStatuses; ++i) {
    REQUIRE(submitTo(writer, "ml/w" + std::to_string(i), kUid, status(i)));
  }
  // A placement answered in 5 ms (the baseline), then from 0.1 s to 0.7 s
  // one every 10 ms in 300 ms: the server is queueing.
  writer.placementAnswered(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  asio::steady_timer placements(rig.context, std::chrono::milliseconds(110));
  std::function<void()> placeSlowly = [&] {
    if (std::chrono::steady_clock::now() - start >= std::chrono::milliseconds(700)) {
      return;
    }
    writer.placementAnswered(std::chrono::milliseconds(300));
    placements.expires_after(std::chrono::milliseconds(10));
    placements.async_wait([&](auto) { placeSlowly(); });
  };
  placements.async_wait([&](auto) { placeSlowly(); });
  // What went out from 0.4 s to 0.65 s, and the rate then.
  std::size_t slowFrom = 0;
  std::size_t slowTo = 0;
  double rateWhileSlow = 0;
  asio::steady_timer first(rig.context, std::chrono::milliseconds(400));
  first.async_wait([&](auto) { slowFrom = rig.written().size(); });
  asio::steady_timer look(rig.context, std::chrono::milliseconds(650));
  look.async_wait([&](auto) {
    slowTo = rig.written().size();
    rateWhileSlow = writer.perSecond();
  });
  std::size_t after = 0;
  asio::steady_timer later(rig.context, std::chrono::milliseconds(2400));
  later.async_wait([&](auto) { after = rig.written().size(); });
  rig.run(writer, std::chrono::milliseconds(2600));
  // 45 a second after the first interval, then halved each interval the
  // placements answered slowly: below 1.5 a second by 0.65 s, and from
  // 0.4 s on a few writes at most, where 40 a second would have sent 10.
  CHECK(rateWhileSlow <= 1.5);
  CHECK(slowTo - slowFrom <= 4);
  // No placements since 0.7 s: the rate doubles every 100 ms, and the
  // rest go out.
  CHECK(after == kStatuses);
}

TEST_CASE("statuses held after the writer emptied come back whole, packed against a new one") {
  StatusRig rig;
  // The writer packs against the first status it holds while empty: one of
  // another shape, after the first was written, is the next reference.
  json other = status(7);
  other["conditions"] = json::array({{{"type", "Valid"}, {"status", "False"}}});
  std::optional<json> heldOther;
  std::optional<json> heldNext;
  bool emptied = false;
  StatusWriter* held = nullptr;
  asio::steady_timer later(rig.context, std::chrono::milliseconds(200));
  later.async_wait([&](auto) {
    emptied = held->waiting() == 0;
    submitTo(*held, "ml/b", kUid, other);
    submitTo(*held, "ml/c", kUid, status(2));
    heldOther = heldStatus(*held, "ml/b", kUid);
    heldNext = heldStatus(*held, "ml/c", kUid);
  });
  auto writer = rig.writer({});
  held = &writer;
  REQUIRE(submitTo(writer, "ml/a", kUid, status(1)));
  rig.run(writer, std::chrono::milliseconds(600));
  CHECK(emptied);
  CHECK(heldOther == other);
  CHECK(heldNext == status(2));
  const auto written = rig.written();
  const auto path = [](const std::string& name) {
    return "/apis/gpuplacement.io/v1alpha1/namespaces/ml/gpuworkloads/" + name + "/status";
  };
  REQUIRE(written.size() == 3);
  CHECK(std::count(written.begin(), written.end(), std::pair{path("b"), other}) == 1);
  CHECK(std::count(written.begin(), written.end(), std::pair{path("c"), status(2)}) == 1);
}

TEST_CASE("a full writer says so, and the reconcile writes the status itself") {
  StatusRig rig;
  // Room for two statuses as the writer keeps them: packed against the
  // first one held.
  runtime::TextCompressor compressor;
  compressor.setReference(status(1).dump());
  const auto first = compressor.pack(status(1).dump()).size();
  const auto second = compressor.pack(status(2).dump()).size();
  auto writer = rig.writer({.writers = 4, .rate = {}, .queueBytes = 2 * first + first / 2});
  CHECK(submitTo(writer, "ml/a", kUid, status(1)));
  CHECK(submitTo(writer, "ml/b", kUid, status(1)));
  CHECK_FALSE(submitTo(writer, "ml/c", kUid, status(1)));
  CHECK(submitTo(writer, "ml/a", kUid, status(2)));  // one already waiting is replaced, full or not
  CHECK(writer.waiting() == 2);
  CHECK(writer.bytes() == first + second);
  CHECK(rig.metric("gpu_placement_statuses_written_inline_total 1"));
  rig.run(writer, std::chrono::milliseconds(300));
  CHECK(rig.written().size() == 2);
  CHECK(writer.bytes() == 0);
}

TEST_CASE("a status goes only to the object it was made for, not one that took its name") {
  StatusRig rig;
  // The server holds another object under the name now: the uid test fails.
  rig.answer = [](const json&) { return 422u; };
  auto writer = rig.writer({});
  REQUIRE(submitTo(writer, "ml/chat", kUid, status(1)));
  // The new object's reconcile does not read the old one's status as its own.
  CHECK(heldStatus(writer, "ml/chat", kUid) == status(1));
  CHECK_FALSE(heldStatus(writer, "ml/chat", "another-uid").has_value());
  rig.run(writer, std::chrono::milliseconds(800));
  REQUIRE(rig.server.requests().size() == 1);  // refused whole, and not tried again
  // The held text sent as it is, inside the JSON Patch: the test, then the status.
  CHECK(json::parse(rig.server.requests()[0].body) ==
        json::array({{{"op", "test"}, {"path", "/metadata/uid"}, {"value", kUid}},
                     {{"op", "add"}, {"path", "/status"}, {"value", status(1)}}}));
  CHECK(rig.stored.empty());
  CHECK(writer.waiting() == 0);
  CHECK(rig.metric("gpu_placement_status_writes_total{result=\"gone\"} 1"));
}

}  // namespace gpuplacement::app
