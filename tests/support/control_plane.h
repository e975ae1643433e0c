#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "runtime/clock.h"
#include "support/command.h"
#include "support/paths.h"

namespace gpuplacement::testing {

// A real etcd + kube-apiserver for one test binary (one suite), started on
// first use through scripts/controlplane and stopped when the process exits.
// If the process dies instead, the script's watchdog stops it. A suite that
// cannot start it fails; it never skips.
struct ControlPlaneOptions {
  bool audit = false;  // log every request to dir()/logs/audit.log
  std::vector<std::string> apiServerFlags;
  // A simulated EKS cluster (kube-scheduler, kube-controller-manager, kwok
  // and nodes from this pool file, relative to the repository) around the
  // control plane; empty: the control plane alone.
  std::string pools;
  // With pools: Karpenter (its kwok provider) runs too and launches nodes
  // for the pool file's NodePools (scripts/controlplane start --karpenter).
  bool karpenter = false;
  // With karpenter: a PlacementPolicy manifest, relative to the repository,
  // whose spec.prices Karpenter's offerings take (--prices); empty: the
  // catalog's.
  std::string prices;
  // With pools: the real controllers of these kinds beside it, each with
  // its CRDs ("kuberay", "lws"; scripts/controlplane start --kinds).
  std::vector<std::string> kinds;
  // The Kubernetes line of kube-apiserver: empty for the release
  // tests/controlplane/go.mod pins, "1.34" for the compatibility suite's
  // (tests/controlplane/k8s-1.34/go.mod). Not with pools.
  std::string kubernetes;
};

class ControlPlane {
 public:
  // Call before the first shared() of a suite that needs more than the
  // defaults.
  static void configure(ControlPlaneOptions options);
  static ControlPlane& shared();

  const std::string& dir() const { return dir_; }
  std::string kubeconfigPath() const { return dir_ + "/kubeconfig"; }
  // The Kubernetes release tests/controlplane/go.mod pins, or with "1.34"
  // the one tests/controlplane/k8s-1.34/go.mod pins.
  static std::string pinnedVersion(const std::string& line = "");
  kube::ClientConfig adminConfig() const;
  // An admin client bound to `executor`.
  std::unique_ptr<kube::KubeClient> adminClient(asio::any_io_executor executor,
                                                kube::ClientOptions options = {}) const;
  // Runs scripts/controlplane with these arguments; returns its exit status.
  static int script(const std::string& arguments);
  // A shell command with this control plane's kubectl, and the pinned helm
  // and kube-score, on PATH and KUBECONFIG pointing at it.
  CommandResult withTools(const std::string& command) const;
  // Stops and starts kube-apiserver (etcd keeps its data), for tests of
  // watch recovery across an API server restart.
  void restartApiServer();

  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;
  ~ControlPlane();

 private:
  ControlPlane();
  // GPUPLACEMENT_KEEP_CONTROL_PLANE=1 (scripts/test --keep): leave it
  // running when the suite ends, to look at what the tests left.
  static bool keep();
  std::string dir_;
  runtime::RealClock clock_;
  static ControlPlaneOptions& options();
};

// A whole file; empty when it cannot be read (the caller's checks then fail).
std::string readFile(const std::string& path);

}  // namespace gpuplacement::testing
