#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gpuplacement::app {

struct RunFlags {
  std::string kubeconfig;
  std::string context;
  std::vector<std::string> namespaces;
  int workers = 4;
  bool finalizer = false;
  bool perWorkloadMetrics = true;
  double qps = 100;  // a placement is two writes (the Events have their own budget): 50 a second
  int burst = 200;
  // Status writes a second while reconciles wait: under a burst the
  // statuses trail the placements (app::StatusBudget). Unset: a fifth of
  // qps, so lowering --qps alone never makes the flags contradict.
  std::optional<double> busyStatusQps;
  std::string resync = "1h";
  std::string watchTimeout = "5m";
  std::string metricsAddress = ":8080";
  // HTTPS, and only for bearer tokens the API server authenticates for a
  // user allowed to get /metrics; false: plain HTTP, open to anyone.
  bool metricsSecure = true;
  std::string metricsCertDir;  // tls.crt and tls.key; empty: self-signed
  std::string healthAddress = ":8081";
  std::string logLevel = "info";
  std::string logFormat = "json";
  std::string catalog;
  std::string rules;
  std::string region;               // the cluster's AWS region where its nodes do not say it
  std::string karpenterService;     // NAMESPACE/NAME:PORT of Karpenter's metrics
  std::string karpenterMetricsUrl;  // or its metrics URL
  std::string karpenterPricesInterval = "5m";
  std::string priceList;  // gpu-placement prices import's file: the region's on-demand prices
  bool leaderElect = false;
  std::string leaderElectionNamespace;  // default: the pod's namespace, else gpu-placement-system
  std::string leaderElectionId = "gpu-placement-operator";
  std::string leaseDuration = "15s";
  std::string renewDeadline = "10s";
  std::string retryPeriod = "2s";
};

// `gpu-placement run`: the operator. Returns the process exit code: 0 after
// SIGTERM/SIGINT once in-flight work has finished, 2 for bad flags or
// configuration, 3 when it cannot start.
int runOperator(const RunFlags& flags);

}  // namespace gpuplacement::app
