#include "app/karpenter_prices.h"

#include "base/time_format.h"
#include "kube/beast_transport.h"

namespace gpuplacement::app {

namespace {

// "NAMESPACE/NAME:PORT" split, or nullopt when it is not of that form.
struct ServiceRef {
  std::string ns;
  std::string name;
  std::string port;
};

std::optional<ServiceRef> serviceRefOf(const std::string& text) {
  const auto slash = text.find('/');
  const auto colon = text.rfind(':');
  if (slash == std::string::npos || colon == std::string::npos || colon < slash || slash == 0 ||
      colon == slash + 1 || colon + 1 == text.size()) {
    return std::nullopt;
  }
  return ServiceRef{text.substr(0, slash), text.substr(slash + 1, colon - slash - 1),
                    text.substr(colon + 1)};
}

}  // namespace

base::Result<base::Ok> checkKarpenterPricesOptions(const KarpenterPricesOptions& options) {
  if (!options.service.empty() && !options.url.empty()) {
    return base::Error{"--karpenter-metrics-url",
                       "read Karpenter's prices from a service or a URL, not both "
                       "(--karpenter-service is set too)"};
  }
  if (!options.service.empty() && !serviceRefOf(options.service)) {
    return base::Error{"--karpenter-service",
                       base::quoted(options.service) +
                           " is not NAMESPACE/NAME:PORT (like karpenter/karpenter:8080)"};
  }
  if (!options.url.empty()) {
    if (auto endpoint = kube::parseServerUrl(options.url); !endpoint) {
      return base::Error{"--karpenter-metrics-url", endpoint.error().message};
    }
  }
  if (options.interval < std::chrono::seconds(10)) {
    return base::Error{"--karpenter-prices-interval", "must be at least 10s"};
  }
  return base::Ok{};
}

MetricsFetch fetchThroughServiceProxy(kube::KubeClient& client, const std::string& service) {
  const auto ref = serviceRefOf(service).value_or(ServiceRef{});
  const std::string path =
      "/api/v1/namespaces/" + ref.ns + "/services/" + ref.name + ":" + ref.port + "/proxy/metrics";
  return [&client, path]() -> asio::awaitable<base::Result<std::string>> {
    auto text = co_await client.getText(path);
    if (!text) {
      co_return base::Error{path, text.error().describe()};
    }
    co_return std::move(text).value();
  };
}

base::Result<MetricsFetch> fetchUrl(asio::any_io_executor executor, const std::string& url) {
  auto endpoint = kube::parseServerUrl(url);
  if (!endpoint) {
    return base::Error{"--karpenter-metrics-url", endpoint.error().message};
  }
  // A URL without a path reads /metrics, where Karpenter serves them.
  const std::string target = endpoint->pathPrefix.empty() ? "/metrics" : "";
  auto transport = kube::BeastTransport::create(executor, *endpoint, kube::TlsOptions{});
  if (!transport) {
    return base::Error{"--karpenter-metrics-url", transport.error().message};
  }
  std::shared_ptr<kube::BeastTransport> shared = std::move(transport).value();
  return MetricsFetch([shared, target, url]() -> asio::awaitable<base::Result<std::string>> {
    kube::HttpRequest request;
    request.target = target;
    request.timeout = std::chrono::seconds(30);
    auto response = co_await shared->send(std::move(request));
    if (!response) {
      co_return base::Error{url, response.error().message};
    }
    if (response->status != 200) {
      co_return base::Error{url, "HTTP " + std::to_string(response->status)};
    }
    co_return std::move(response->body);
  });
}

KarpenterPrices::KarpenterPrices(MetricsFetch fetch, KarpenterPricesOptions options, Logger& logger,
                                 MetricsRegistry& metrics, const runtime::Clock& clock)
    : fetch_(std::move(fetch)),
      options_(std::move(options)),
      log_(logger),
      readsTotal_(metrics.counter("gpu_placement_karpenter_price_reads_total",
                                  "Reads of Karpenter's offering prices, by result (ok, failed)",
                                  {"result"})),
      readTimestamp_(
          metrics.gauge("gpu_placement_karpenter_prices_read_timestamp_seconds",
                        "When Karpenter's offering prices were last read (Unix seconds)")),
      clock_(clock),
      stopping_(clock) {
  reads_.source = options_.source();
  reads_.interval = base::formatDuration(options_.interval);
}

core::KarpenterPricesCondition KarpenterPrices::condition() const {
  return core::karpenterPricesCondition(reads_);
}

asio::awaitable<KarpenterPrices::Change> KarpenterPrices::readOnce() {
  const auto before = condition();
  const auto started = clock_.monotonicNow();
  auto text = co_await fetch_();
  const auto now = clock_.systemNow();
  base::Result<core::OfferingPrices> read =
      text ? core::offeringPricesFromMetrics(*text) : base::Error{text.error()};
  Change change;
  if (read) {
    readsTotal_.inc({"ok"});
    readTimestamp_.set({}, std::chrono::duration<double>(now.time_since_epoch()).count());
    lastGood_ = now;
    reads_.lastRead = base::formatRfc3339(now);
    reads_.failingSince.clear();
    reads_.error.clear();
    reads_.stale = false;
    if (!offerings_ || *offerings_ != *read) {
      offerings_ = std::make_shared<const core::OfferingPrices>(std::move(read).value());
      pricesAsOf_ = reads_.lastRead;
      change.prices = true;
      const auto took = std::chrono::duration<double, std::milli>(clock_.monotonicNow() - started);
      log_.info("Karpenter's prices changed",
                {{"source", reads_.source},
                 {"offerings", std::to_string(offerings_->offerings.size())},
                 {"bytes", std::to_string(text->size())},
                 {"milliseconds", std::to_string(took.count())}});
    }
  } else {
    readsTotal_.inc({"failed"});
    if (reads_.failingSince.empty()) {
      reads_.failingSince = base::formatRfc3339(now);
      reads_.error = read.error().describe();
      log_.warn("cannot read Karpenter's prices; the last ones stay in force",
                {{"source", reads_.source}, {"error", reads_.error}});
    }
    reads_.stale = lastGood_ && now - *lastGood_ > options_.interval;
  }
  change.condition = condition() != before;
  co_return change;
}

asio::awaitable<void> KarpenterPrices::run(std::function<void(Change)> changed) {
  while (!stopped_) {
    const auto change = co_await readOnce();
    if (stopped_) {
      break;  // the manager is stopping: nothing is weighed again
    }
    if (change.prices || change.condition) {
      changed(change);
    }
    co_await stopping_.waitFor(options_.interval);
  }
}

void KarpenterPrices::stop() {
  stopped_ = true;
  stopping_.notifyAll();
}

}  // namespace gpuplacement::app
