// Leader election on a real Lease: one leader at a time, a released lease
// is taken over at once, and the Lease object reads as client-go writes it.
#include "kube/leader_election.h"

#include <doctest/doctest.h>

#include "base/json_access.h"
#include "runtime/run_sync.h"
#include "support/control_plane.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using kube::json;
using testing::ControlPlane;

constexpr const char* kLeaseNamespace = "kube-system";

kube::LeaderElectionConfig electionFor(const std::string& lease, const std::string& identity) {
  kube::LeaderElectionConfig config;
  config.leaseNamespace = kLeaseNamespace;
  config.leaseName = lease;
  config.identity = identity;
  config.leaseDuration = std::chrono::seconds(4);
  config.renewDeadline = std::chrono::seconds(3);
  config.retryPeriod = std::chrono::seconds(1);
  return config;
}

asio::awaitable<void> pause(std::chrono::milliseconds duration) {
  asio::steady_timer timer(co_await asio::this_coro::executor, duration);
  co_await timer.async_wait(asio::use_awaitable);
}

// Polls until `condition` holds or `limit` passes; the time it took, or -1.
asio::awaitable<double> secondsUntil(std::function<bool()> condition, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (!condition()) {
    if (std::chrono::steady_clock::now() - start > limit) {
      co_return -1.0;
    }
    co_await pause(std::chrono::milliseconds(50));
  }
  co_return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("formatMicroTime writes metav1.MicroTime") {
  const runtime::SystemTime time{std::chrono::microseconds(1'764'000'000'123'456)};
  CHECK(kube::formatMicroTime(time) == "2025-11-24T16:00:00.123456Z");
  CHECK(kube::formatMicroTime(runtime::SystemTime{}) == "1970-01-01T00:00:00.000000Z");
}

TEST_CASE("two candidates: one leads, the lease names it, a released lease passes at once") {
  auto& plane = ControlPlane::shared();
  asio::io_context context;
  auto client = plane.adminClient(context.get_executor());
  runtime::RealClock clock;
  const std::string lease = "election-test";

  kube::LeaderElector first(context.get_executor(), *client, electionFor(lease, "first"), clock);
  kube::LeaderElector second(context.get_executor(), *client, electionFor(lease, "second"), clock);
  int starts = 0;
  int stops = 0;
  for (auto* elector : {&first, &second}) {
    elector->onStartedLeading = [&starts] { ++starts; };
    elector->onStoppedLeading = [&stops] { ++stops; };
  }
  asio::co_spawn(context, first.run(), asio::detached);
  asio::co_spawn(context, second.run(), asio::detached);

  double acquired = runtime::runSync(
      context,
      secondsUntil([&] { return first.leading() || second.leading(); }, std::chrono::seconds(10)));
  REQUIRE(acquired >= 0);
  CHECK(acquired < 2.0);
  // Both keep trying for several retry periods; still exactly one leads.
  runtime::runSync(context, pause(std::chrono::milliseconds(2500)));
  CHECK(first.leading() != second.leading());
  CHECK(starts == 1);
  kube::LeaderElector& leader = first.leading() ? first : second;
  kube::LeaderElector& standby = first.leading() ? second : first;
  const std::string leaderName = first.leading() ? "first" : "second";
  CHECK(standby.holder() == leaderName);

  const std::string path = std::string("/apis/coordination.k8s.io/v1/namespaces/") +
                           kLeaseNamespace + "/leases/" + lease;
  auto held = runtime::runSync(context, client->get(path));
  REQUIRE_MESSAGE(held.ok(), gpuplacement::testing::whyNot(held));
  const json& spec = held->at("spec");
  CHECK(spec.at("holderIdentity") == leaderName);
  CHECK(spec.at("leaseDurationSeconds") == 4);
  CHECK(spec.at("renewTime").get<std::string>().size() ==
        std::string("2026-01-01T00:00:00.000000Z").size());

  // The leader steps down cleanly: it releases, the standby takes over
  // within about one retry period instead of waiting out the lease.
  runtime::runSync(context, leader.stop());
  CHECK_FALSE(leader.leading());
  double takeover = runtime::runSync(
      context, secondsUntil([&] { return standby.leading(); }, std::chrono::seconds(10)));
  REQUIRE(takeover >= 0);
  CHECK(takeover < 2.5);
  CHECK(starts == 2);
  auto passed = runtime::runSync(context, client->get(path));
  REQUIRE(passed.ok());
  CHECK(passed->at("spec").at("holderIdentity") != leaderName);
  CHECK(base::integerOf(passed->at("spec").at("leaseTransitions"), -1) >= 1);

  runtime::runSync(context, standby.stop());
  CHECK(stops == 0);  // stepping down on request is not losing the lease
  runtime::runSync(context, pause(std::chrono::milliseconds(100)));  // both run() loops end
}

}  // namespace gpuplacement
