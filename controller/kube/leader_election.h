#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "kube/client.h"
#include "runtime/asio.h"
#include "runtime/clock.h"
#include "runtime/signal.h"

namespace gpuplacement::kube {

struct LeaderElectionConfig {
  std::string leaseNamespace;
  std::string leaseName = "gpu-placement-operator";
  std::string identity;
  // client-go's defaults.
  std::chrono::seconds leaseDuration{15};
  std::chrono::seconds renewDeadline{10};
  std::chrono::seconds retryPeriod{2};
};

// Leader election on a coordination.k8s.io/v1 Lease, as client-go does it:
// a candidate takes the lease once its holder has not renewed it for the
// lease duration (timed by this process's own clock, never by comparing
// clocks across machines); the leader renews every retry period and gives
// up if it cannot renew within the renew deadline, which is shorter than
// the lease duration, so two leaders never overlap.
class LeaderElector {
 public:
  LeaderElector(asio::any_io_executor executor, KubeClient& client, LeaderElectionConfig config,
                const runtime::Clock& clock);

  // Runs until stop(): acquires, then renews. Calls onStartedLeading once
  // the lease is held and onStoppedLeading if it is lost.
  asio::awaitable<void> run();
  // Stops; a held lease is released so a standby takes over at once.
  asio::awaitable<void> stop();

  bool leading() const { return leading_; }
  const std::string& holder() const { return observedHolder_; }

  std::function<void()> onStartedLeading;
  std::function<void()> onStoppedLeading;
  std::function<void(const std::string&)> log;

 private:
  // One attempt to take or renew the lease; true when we hold it after.
  asio::awaitable<bool> tryAcquireOrRenew();
  asio::awaitable<bool> createLease(const std::string& now);
  // Notes the lease as read; true when another holder is alive.
  bool heldByAnother(const nlohmann::json& spec);
  void holding(const nlohmann::json& spec);
  asio::awaitable<void> sleep(std::chrono::nanoseconds duration);
  std::string leasePath() const;

  asio::any_io_executor executor_;
  KubeClient& client_;
  LeaderElectionConfig config_;
  const runtime::Clock& clock_;
  bool leading_ = false;
  bool stopped_ = false;
  std::string observedRecord_;  // the lease spec as last seen, to time its changes
  std::string observedHolder_;
  runtime::MonotonicTime observedAt_{};
  runtime::Signal wake_{clock_};  // cuts a sleep short when stopping
};

// RFC 3339 with microseconds, as metav1.MicroTime is written.
std::string formatMicroTime(runtime::SystemTime time);

}  // namespace gpuplacement::kube
