#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "app/cached_objects.h"
#include "app/key_index.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "core/catalog.h"
#include "core/rules.h"
#include "runtime/informer.h"
#include "runtime/list_watch.h"

namespace gpuplacement::app {

struct CacheOptions {
  std::vector<std::string> namespaces;  // empty: all
  std::chrono::seconds watchTimeout{300};
  std::size_t pageSize = 500;
};

// The informers' caches of PlacementPolicies, GpuWorkloads and Deployments,
// and the indexes between them, shared read-only by the reconcilers. Keys
// are "namespace/name" (policies: "name"). One informer per watched
// namespace, or one for all.
class ObjectCaches {
 public:
  template <typename T>
  using Handler = std::function<void(const std::string& key, const T* previous, const T* current)>;

  ObjectCaches(asio::any_io_executor executor, runtime::ListWatchClient& client,
               const core::Catalog& catalog, const core::RuleSet& rules, CacheOptions options,
               Logger& log, const runtime::Clock& clock);
  ~ObjectCaches();

  // Handlers run after the indexes are updated; they must not suspend.
  void onWorkload(Handler<CachedWorkload> handler);
  void onDeployment(Handler<CachedDeployment> handler);
  void onPolicy(Handler<PolicyObject> handler);

  asio::awaitable<void> run();  // until stop()
  asio::awaitable<void> waitForSync();
  void stop();
  bool synced() const;
  // No informer is stuck failing.
  bool healthy() const;
  void registerMetrics(MetricsRegistry& metrics);

  const CachedWorkload* workload(const std::string& key) const;
  std::string workloadResourceVersion(const std::string& key) const;
  const CachedDeployment* deployment(const std::string& key) const;
  std::string deploymentResourceVersion(const std::string& key) const;
  const PolicyObject* policy(const std::string& name) const;
  std::size_t policyCount() const;
  void forEachWorkload(
      const std::function<void(const std::string&, const CachedWorkload&)>& visit) const;
  void forEachPolicy(const std::function<void(const std::string&)>& visit) const;

  // The GpuWorkloads whose spec targets a Deployment ("ns/name" both).
  std::vector<std::string> workloadsTargeting(const std::string& deploymentKey) const {
    return byTarget_.of(deploymentKey);
  }
  // The Deployments whose ownership record names a GpuWorkload.
  std::vector<std::string> deploymentsOwnedBy(const std::string& workloadKey) const {
    return ownedBy_.of(workloadKey);
  }
  std::size_t workloadsOfPolicy(const std::string& policy) const;

 private:
  using WorkloadInformer = runtime::Informer<CachedWorkload>;
  using DeploymentInformer = runtime::Informer<CachedDeployment>;
  using PolicyInformer = runtime::Informer<PolicyObject>;

  void indexWorkload(const std::string& key, const CachedWorkload* previous,
                     const CachedWorkload* current);
  void indexDeployment(const std::string& key, const CachedDeployment* previous,
                       const CachedDeployment* current);
  template <typename F>
  void forEachInformer(F&& visit) const;

  asio::any_io_executor executor_;
  std::unique_ptr<PolicyInformer> policies_;
  std::vector<std::unique_ptr<WorkloadInformer>> workloads_;
  std::vector<std::unique_ptr<DeploymentInformer>> deployments_;
  KeyIndex byTarget_;  // Deployment -> the GpuWorkloads that target it
  KeyIndex ownedBy_;   // GpuWorkload -> the Deployments whose record names it
  std::unordered_map<std::string, std::size_t> workloadsOfPolicy_;
  std::vector<Handler<CachedWorkload>> workloadHandlers_;
  std::vector<Handler<CachedDeployment>> deploymentHandlers_;
};

// "ns/name" -> "ns".
inline std::string namespaceOf(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash);
}

}  // namespace gpuplacement::app
