#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace gpuplacement::kube {

// A client.authentication.k8s.io exec credential plugin (`aws eks get-token`).
struct ExecPlugin {
  std::string command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string apiVersion;
  std::string installHint;
  bool provideClusterInfo = false;
};

// Everything needed to reach and authenticate to one API server.
struct ClientConfig {
  std::string server;
  std::string caPem;
  bool insecureSkipVerify = false;
  std::string tlsServerName;
  std::string clientCertPem;
  std::string clientKeyPem;
  std::string token;
  // Re-read when it changes: service-account tokens are rotated on disk.
  std::string tokenFile;
  std::optional<ExecPlugin> exec;
  std::string defaultNamespace = "default";
  // Where the configuration came from, for logs and errors.
  std::string source;
};

// The process environment, injectable for tests.
struct Environment {
  std::function<std::optional<std::string>(const std::string&)> getenv;
  std::string serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

  static Environment process();
};

struct KubeconfigOptions {
  std::string path;     // --kubeconfig
  std::string context;  // --context
};

// Finds the configuration the way controller-runtime does: --kubeconfig,
// then $KUBECONFIG (several files joined by ':'), then in-cluster, then
// ~/.kube/config.
base::Result<ClientConfig> loadClientConfig(const KubeconfigOptions& options,
                                            const Environment& environment);

// Merges kubeconfig files as kubectl does: for each cluster, user and context
// name and for current-context, the first file that sets it wins.
base::Result<ClientConfig> loadKubeconfigFiles(const std::vector<std::string>& paths,
                                               const std::string& contextOverride);

// The pod's service account: KUBERNETES_SERVICE_HOST/PORT, token and CA.
base::Result<ClientConfig> loadInClusterConfig(const Environment& environment);

// Decodes standard base64, ignoring whitespace, as kubeconfig *-data fields use.
base::Result<std::string> decodeBase64(const std::string& text);

}  // namespace gpuplacement::kube
