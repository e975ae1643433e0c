// Read-your-writes: after a write the reconcile waits for the cache to show
// it, and never longer than the timeout, and forgets what it no longer needs.
#include "app/expectations.h"

#include <doctest/doctest.h>

#include "support/fake_clock.h"

namespace gpuplacement::app {
namespace {

using namespace std::chrono_literals;

const TargetKey kDeployment{core::TargetKind::Deployment, {"ml", "serve"}};
const TargetKey kJob{core::TargetKind::Job, {"ml", "serve"}};  // same name, other kind

CachedWorkload workloadWithStatus(std::uint64_t statusHash) {
  CachedWorkload workload;
  workload.statusHash = statusHash;
  return workload;
}

CachedTarget targetAt(std::int64_t generation, std::uint64_t ownedDigest) {
  CachedTarget target;
  target.generation = generation;
  target.ownedDigest = ownedDigest;
  return target;
}

TEST_CASE("a status write is awaited until the cache shows it") {
  testing::FakeClock clock;
  WriteExpectations expectations(clock);
  CHECK_FALSE(expectations.awaitingStatus("ml/serve", workloadWithStatus(1)));  // none expected
  expectations.expectStatus("ml/serve", 7);
  CHECK(expectations.awaitingStatus("ml/serve", workloadWithStatus(1)));
  CHECK_FALSE(expectations.awaitingStatus("ml/other", workloadWithStatus(1)));
  CHECK_FALSE(expectations.awaitingStatus("ml/serve", workloadWithStatus(7)));
  // Caught up, the expectation is gone: an older copy later is not awaited.
  CHECK_FALSE(expectations.awaitingStatus("ml/serve", workloadWithStatus(1)));
}

TEST_CASE("a status write someone else overwrote is awaited only until the timeout") {
  testing::FakeClock clock;
  WriteExpectations expectations(clock);
  expectations.expectStatus("ml/serve", 7);
  clock.advance(9s);
  CHECK(expectations.awaitingStatus("ml/serve", workloadWithStatus(3)));
  clock.advance(1s);
  CHECK_FALSE(expectations.awaitingStatus("ml/serve", workloadWithStatus(3)));
  CHECK_FALSE(expectations.awaitingStatus("ml/serve", workloadWithStatus(3)));
}

TEST_CASE("the watch delivering the status, or the deletion, ends the wait") {
  testing::FakeClock clock;
  WriteExpectations expectations(clock);
  expectations.expectStatus("ml/a", 7);
  expectations.expectStatus("ml/b", 7);
  const auto other = workloadWithStatus(3);
  const auto written = workloadWithStatus(7);
  expectations.observeWorkload("ml/a", &other);  // not ours yet
  CHECK(expectations.awaitingStatus("ml/a", other));
  expectations.observeWorkload("ml/a", &written);
  CHECK_FALSE(expectations.awaitingStatus("ml/a", other));
  expectations.observeWorkload("ml/b", nullptr);
  CHECK_FALSE(expectations.awaitingStatus("ml/b", other));
}

TEST_CASE("a target write is awaited until its generation and ownership record show") {
  testing::FakeClock clock;
  WriteExpectations expectations(clock);
  expectations.expectTarget(kDeployment, 4, 0xabc);
  const auto before = targetAt(3, 0x111);
  const auto sameGenerationOtherRecord = targetAt(4, 0x111);
  const auto written = targetAt(4, 0xabc);
  const auto later = targetAt(5, 0x999);
  CHECK(expectations.awaitingTarget(kDeployment, &before));
  CHECK(expectations.awaitingTarget(kDeployment, &sameGenerationOtherRecord));
  CHECK_FALSE(expectations.awaitingTarget(kJob, &before));  // the kind is part of the key
  SUBCASE("the written copy") {
    CHECK_FALSE(expectations.awaitingTarget(kDeployment, &written));
  }
  SUBCASE("a later generation: someone wrote after us") {
    CHECK_FALSE(expectations.awaitingTarget(kDeployment, &later));
  }
  SUBCASE("gone from the cache") {
    CHECK_FALSE(expectations.awaitingTarget(kDeployment, nullptr));
  }
  SUBCASE("the timeout") {
    clock.advance(10s);
    CHECK_FALSE(expectations.awaitingTarget(kDeployment, &before));
  }
  SUBCASE("observed through the watch") {
    expectations.observeTarget(kDeployment, &before);
    CHECK(expectations.awaitingTarget(kDeployment, &before));
    expectations.observeTarget(kDeployment, &written);
    CHECK_FALSE(expectations.awaitingTarget(kDeployment, &before));
  }
}

TEST_CASE("a released finalizer is awaited until the deletion is seen") {
  testing::FakeClock clock;
  WriteExpectations expectations(clock);
  CHECK_FALSE(expectations.awaitingDeletion("ml/serve"));
  expectations.expectDeletion("ml/serve");
  CHECK(expectations.awaitingDeletion("ml/serve"));
  const auto stillThere = workloadWithStatus(1);
  expectations.observeWorkload("ml/serve", &stillThere);
  CHECK(expectations.awaitingDeletion("ml/serve"));
  expectations.observeWorkload("ml/serve", nullptr);
  CHECK_FALSE(expectations.awaitingDeletion("ml/serve"));
}

}  // namespace
}  // namespace gpuplacement::app
