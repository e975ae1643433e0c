#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "app/logging.h"
#include "app/metrics.h"
#include "base/result.h"
#include "core/catalog/catalog.h"
#include "core/catalog/offering_prices.h"
#include "kube/client.h"
#include "runtime/asio.h"
#include "runtime/clock.h"
#include "runtime/signal.h"

// Karpenter's offering prices, read where Karpenter serves its metrics and
// kept while it cannot be read: on start, then every interval.
namespace gpuplacement::app {

struct KarpenterPricesOptions {
  // "NAMESPACE/NAME:PORT": read through the API server's service proxy
  // (RBAC: get on services/proxy for that service), as in a cluster.
  std::string service;
  // Or a metrics URL read directly (Karpenter as a process beside the
  // operator, as in the simulated cluster).
  std::string url;
  std::chrono::seconds interval{std::chrono::minutes(5)};

  bool enabled() const { return !service.empty() || !url.empty(); }
  std::string source() const { return service.empty() ? url : "service " + service; }
};

// --karpenter-service's form, checked: an error names the flag.
base::Result<base::Ok> checkKarpenterPricesOptions(const KarpenterPricesOptions& options);

// One read of Karpenter's metrics page.
using MetricsFetch = std::function<asio::awaitable<base::Result<std::string>>()>;

// Through the API server's service proxy:
// /api/v1/namespaces/NAMESPACE/services/NAME:PORT/proxy/metrics.
MetricsFetch fetchThroughServiceProxy(kube::KubeClient& client, const std::string& service);
// Straight from a URL, http:// or https:// (the system's trust store).
base::Result<MetricsFetch> fetchUrl(asio::any_io_executor executor, const std::string& url);

class KarpenterPrices {
 public:
  KarpenterPrices(MetricsFetch fetch, KarpenterPricesOptions options, Logger& logger,
                  MetricsRegistry& metrics, const runtime::Clock& clock);

  // What a read changed.
  struct Change {
    bool prices = false;     // offerings() and pricesAsOf() are new
    bool condition = false;  // condition() is new
  };

  // Reads now and every interval until stop(), telling `changed` after a
  // read that changed anything.
  asio::awaitable<void> run(std::function<void(Change)> changed);
  void stop();
  // One read: the refresh run() makes every interval.
  asio::awaitable<Change> readOnce();

  // The offerings last read (null until a read succeeds), when those
  // prices were first read (what the catalog priced by them is as of:
  // core::pricedAsKarpenter, in the manager), and how the reads stand.
  std::shared_ptr<const core::OfferingPrices> offerings() const { return offerings_; }
  const std::string& pricesAsOf() const { return pricesAsOf_; }
  core::KarpenterPricesCondition condition() const;

 private:
  MetricsFetch fetch_;
  KarpenterPricesOptions options_;
  std::shared_ptr<const core::OfferingPrices> offerings_;
  std::string pricesAsOf_;
  core::KarpenterPriceReads reads_;
  std::optional<runtime::SystemTime> lastGood_;  // reads_.lastRead, to measure staleness
  Logger& log_;
  MetricFamily& readsTotal_;
  MetricFamily& readTimestamp_;
  const runtime::Clock& clock_;
  bool stopped_ = false;
  runtime::Signal stopping_;
};

}  // namespace gpuplacement::app
