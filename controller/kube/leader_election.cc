#include "kube/leader_election.h"

#include <cstdio>
#include <random>

#include "base/json_access.h"
#include "base/time_format.h"

namespace gpuplacement::kube {

std::string formatMicroTime(runtime::SystemTime time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(time - seconds).count();
  std::string text = base::formatRfc3339(seconds);
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, ".%06ld", static_cast<long>(micros));
  text.insert(text.size() - 1, fraction);
  return text;
}

LeaderElector::LeaderElector(asio::any_io_executor executor, KubeClient& client,
                             LeaderElectionConfig config, const runtime::Clock& clock)
    : executor_(std::move(executor)), client_(client), config_(std::move(config)), clock_(clock) {}

std::string LeaderElector::leasePath() const {
  return "/apis/coordination.k8s.io/v1/namespaces/" + config_.leaseNamespace + "/leases/" +
         config_.leaseName;
}

asio::awaitable<void> LeaderElector::sleep(std::chrono::nanoseconds duration) {
  if (!stopped_) {
    co_await wake_.waitFor(duration);
  }
}

asio::awaitable<bool> LeaderElector::createLease(const std::string& now) {
  const json lease = {
      {"apiVersion", "coordination.k8s.io/v1"},
      {"kind", "Lease"},
      {"metadata", {{"name", config_.leaseName}, {"namespace", config_.leaseNamespace}}},
      {"spec",
       {{"holderIdentity", config_.identity},
        {"leaseDurationSeconds", config_.leaseDuration.count()},
        {"acquireTime", now},
        {"renewTime", now},
        {"leaseTransitions", 0}}}};
  const std::string collection =
      "/apis/coordination.k8s.io/v1/namespaces/" + config_.leaseNamespace + "/leases";
  auto created = co_await client_.create(collection, lease);
  if (created) {
    observedHolder_ = config_.identity;
    observedAt_ = clock_.monotonicNow();
  }
  co_return created.ok();
}

bool LeaderElector::heldByAnother(const json& spec) {
  const std::string record = spec.dump();
  const std::string holder = base::stringMember(spec, "holderIdentity");
  if (record != observedRecord_) {
    // The lease changed: its holder is alive as of now, by our clock.
    observedRecord_ = record;
    observedAt_ = clock_.monotonicNow();
  }
  observedHolder_ = holder;
  const auto duration = std::chrono::seconds(
      base::integerOf(base::memberOf(spec, "leaseDurationSeconds"), config_.leaseDuration.count()));
  return !holder.empty() && holder != config_.identity &&
         clock_.monotonicNow() < observedAt_ + duration;
}

void LeaderElector::holding(const json& spec) {
  observedRecord_ = spec.dump();
  observedHolder_ = config_.identity;
  observedAt_ = clock_.monotonicNow();
}

asio::awaitable<bool> LeaderElector::tryAcquireOrRenew() {
  const std::string now = formatMicroTime(clock_.systemNow());
  const std::string path = leasePath();
  auto current = co_await client_.get(path);
  if (!current) {
    if (!current.error().notFound()) {
      if (log) {
        log("reading the lease: " + current.error().describe());
      }
      co_return false;
    }
    co_return co_await createLease(now);
  }
  json lease = std::move(current).value();
  const auto& spec = base::memberOf(lease, "spec");
  if (heldByAnother(spec)) {
    co_return false;  // held by someone alive
  }
  const std::string holder = base::stringMember(spec, "holderIdentity");
  json next = spec.is_object() ? spec : json::object();
  if (holder != config_.identity) {
    next["acquireTime"] = now;
    next["leaseTransitions"] = base::integerOf(base::memberOf(spec, "leaseTransitions")) + 1;
  }
  next["holderIdentity"] = config_.identity;
  next["leaseDurationSeconds"] = config_.leaseDuration.count();
  next["renewTime"] = now;
  lease["spec"] = next;
  // The resourceVersion in the body makes the update conditional: if
  // another candidate wrote first, this gets 409 and loses.
  auto updated = co_await client_.update(path, lease);
  if (!updated) {
    if (log && !updated.error().conflict()) {
      log("updating the lease: " + updated.error().describe());
    }
    co_return false;
  }
  holding(base::memberOf(*updated, "spec"));
  co_return true;
}

asio::awaitable<void> LeaderElector::run() {
  std::minstd_rand random(std::random_device{}());
  std::uniform_real_distribution<double> jitter(1.0, 1.2);
  // Candidate: try every retry period (jittered, as client-go's JitterFactor 1.2).
  while (!stopped_ && !leading_) {
    if (co_await tryAcquireOrRenew()) {
      leading_ = true;
      if (log) {
        log("acquired the lease " + config_.leaseNamespace + "/" + config_.leaseName);
      }
      if (onStartedLeading) {
        onStartedLeading();
      }
      break;
    }
    co_await sleep(
        std::chrono::duration_cast<std::chrono::nanoseconds>(config_.retryPeriod * jitter(random)));
  }
  // Leader: renew every retry period; give up past the renew deadline.
  auto lastRenew = clock_.monotonicNow();
  while (!stopped_ && leading_) {
    co_await sleep(config_.retryPeriod);
    if (stopped_) {
      break;
    }
    if (co_await tryAcquireOrRenew()) {
      lastRenew = clock_.monotonicNow();
      continue;
    }
    if (clock_.monotonicNow() - lastRenew >= config_.renewDeadline) {
      leading_ = false;
      if (log) {
        log("lost the lease: not renewed within the renew deadline");
      }
      if (onStoppedLeading) {
        onStoppedLeading();
      }
    }
  }
}

asio::awaitable<void> LeaderElector::stop() {
  stopped_ = true;
  wake_.notifyAll();
  if (!leading_) {
    co_return;
  }
  leading_ = false;
  // Release: an empty holder lets a standby take over without waiting out
  // the lease (client-go's ReleaseOnCancel).
  const std::string path = leasePath();
  auto current = co_await client_.get(path);
  if (!current ||
      base::stringMember(base::memberOf(*current, "spec"), "holderIdentity") != config_.identity) {
    co_return;
  }
  json lease = std::move(current).value();
  lease["spec"]["holderIdentity"] = "";
  lease["spec"]["leaseDurationSeconds"] = 1;
  lease["spec"]["renewTime"] = formatMicroTime(clock_.systemNow());
  auto released = co_await client_.update(path, lease);
  if (log) {
    log(released ? "released the lease"
                 : "could not release the lease: " + released.error().describe());
  }
}

}  // namespace gpuplacement::kube
