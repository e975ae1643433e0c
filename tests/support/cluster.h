#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/types.h>

#include "kube/client.h"
#include "support/control_plane.h"

namespace gpuplacement::testing {

using json = nlohmann::json;

// Synchronous access to the test's control plane as the admin: the test's
// own hands, next to (never inside) the operator under test.
class Cluster {
 public:
  explicit Cluster(ControlPlane& plane);
  // The suite's cluster on the shared control plane, this project's CRDs
  // installed on first use.
  static Cluster& withCrds();
  ~Cluster();

  kube::ApiResult<json> get(const std::string& path);
  kube::ApiResult<json> create(const std::string& path, const json& body);
  kube::ApiResult<json> patch(const std::string& path, const json& body,
                              kube::PatchType type = kube::PatchType::Merge);
  kube::ApiResult<json> remove(const std::string& path);
  json mustGet(const std::string& path);

  // Creates every document of a YAML stream (kinds this project uses).
  void apply(const std::string& yaml);
  // The API path of an object (collection when `name` is empty).
  static std::string pathOf(const std::string& apiVersion, const std::string& kind,
                            const std::string& ns, const std::string& name = "");

  // Installs the CRDs (once per control plane) and waits until served.
  void installCrds();
  // A ServiceAccount with the operator's RBAC (config/rbac), and a
  // kubeconfig that authenticates with its token (TokenRequest).
  std::string operatorKubeconfig();
  // A kubeconfig that authenticates as a ServiceAccount that exists (a
  // chart's), with a token of a day from a TokenRequest.
  std::string serviceAccountKubeconfig(const std::string& ns, const std::string& account);
  std::string operatorUser() const {
    return "system:serviceaccount:gpu-placement-system:gpu-placement-operator";
  }

  // Polls until `condition` holds; false on timeout.
  bool waitFor(const std::function<bool()>& condition,
               std::chrono::milliseconds timeout = std::chrono::seconds(30),
               std::chrono::milliseconds every = std::chrono::milliseconds(100));

  // A GpuWorkload's condition of `type` as "Status/Reason", and its
  // message; empty when the object or the condition is not there.
  std::string conditionOf(const std::string& path, const std::string& type);
  std::string conditionMessageOf(const std::string& path, const std::string& type);
  // The successful writes (`verb`: patch, create...) `user` made to one
  // object, counted in the audit log (the control plane's --audit).
  std::size_t writesBy(const std::string& user, const std::string& verb,
                       const std::string& resource, const std::string& ns, const std::string& name);

  // Deployment (or StatefulSet) status as a kube-controller-manager would
  // write it, since none runs here: the rollout of the current generation
  // is finished.
  void completeRollout(const std::string& ns, const std::string& name,
                       const std::string& kind = "Deployment");

  ControlPlane& plane() { return plane_; }

 private:
  ControlPlane& plane_;
  asio::io_context context_;
  std::unique_ptr<kube::KubeClient> client_;
};

// The audit log's requests by one user, for counting reads and writes on
// the API server's side.
struct AuditEntry {
  std::string verb;
  std::string resource;
  std::string subresource;
  std::string name;
  std::string ns;
  int code = 0;
  std::string stage;
  std::string apiGroup;
};
std::vector<AuditEntry> readAudit(ControlPlane& plane, const std::string& user);

// The operator binary as a separate process, the way it runs in a cluster.
class OperatorProcess {
 public:
  // /metrics is plain HTTP (--metrics-secure=false) unless extraArgs
  // name --metrics-secure or --metrics-cert-dir. `binary`: this build's,
  // or another version's (the upgrade test's previous release).
  OperatorProcess(const std::string& kubeconfig, std::vector<std::string> extraArgs = {},
                  const std::string& binary = operatorBinary());
  ~OperatorProcess();
  OperatorProcess(const OperatorProcess&) = delete;
  OperatorProcess& operator=(const OperatorProcess&) = delete;

  // Sends `signal` and waits; returns the exit code (-1 when killed).
  int stop(int signal = 15);
  void pause();
  void resume();
  bool running();
  std::string log() const;
  unsigned short metricsPort() const { return metricsPort_; }
  unsigned short healthPort() const { return healthPort_; }
  // GET http://127.0.0.1:port/path: (status, body); status 0 when refused.
  static std::pair<int, std::string> httpGet(unsigned short port, const std::string& path);
  // One sample of /metrics, summed over label sets matching `labels`
  // (substring match on the label text).
  double metric(const std::string& name, const std::string& labels = "");
  bool waitReady(std::chrono::seconds timeout = std::chrono::seconds(30));

 private:
  pid_t pid_ = -1;
  std::string logPath_;
  unsigned short metricsPort_ = 0;
  unsigned short healthPort_ = 0;
};

unsigned short freePort();

}  // namespace gpuplacement::testing
