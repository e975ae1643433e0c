#include "app/run_command.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>

#include <unistd.h>

#include "app/cli.h"
#include "app/http_server.h"
#include "app/logging.h"
#include "app/manager.h"
#include "app/memory.h"
#include "app/metrics.h"
#include "app/metrics_access.h"
#include "app/placement_config.h"
#include "app/serving_certificate.h"
#include "base/time_format.h"
#include "core/catalog/region_name.h"
#include "kube/connect.h"
#include "kube/leader_election.h"

namespace gpuplacement::app {

namespace {

base::Result<std::chrono::seconds> durationFlag(const std::string& flag, const std::string& text,
                                                std::chrono::seconds minimum) {
  auto parsed = base::parseDuration(text);
  if (!parsed) {
    return base::Error{flag, parsed.error().message};
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(*parsed);
  if (seconds < minimum) {
    return base::Error{flag, "must be at least " + std::to_string(minimum.count()) + "s"};
  }
  return seconds;
}

// The namespace this pod runs in (service account mount), for the Lease.
std::string podNamespace() {
  std::ifstream in("/var/run/secrets/kubernetes.io/serviceaccount/namespace");
  std::string ns;
  std::getline(in, ns);
  return ns;
}

std::string randomSuffix() {
  std::random_device random;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", random());
  return text;
}

std::string hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) {
    return "gpu-placement";
  }
  return name;
}

// The flags, checked and read.
struct Settings {
  LogLevel level = LogLevel::Info;
  LogFormat format = LogFormat::Json;
  std::chrono::seconds resync{0};
  std::chrono::seconds watchTimeout{0};
  std::chrono::seconds leaseDuration{0};
  std::chrono::seconds renewDeadline{0};
  std::chrono::seconds retryPeriod{0};
  KarpenterPricesOptions karpenterPrices;
};

base::Result<Settings> checkFlags(const RunFlags& flags) {
  auto level = parseLogLevel(flags.logLevel);
  auto format = parseLogFormat(flags.logFormat);
  auto resync = durationFlag("--resync", flags.resync, std::chrono::seconds(10));
  auto watchTimeout = durationFlag("--watch-timeout", flags.watchTimeout, std::chrono::seconds(1));
  auto leaseDuration =
      durationFlag("--lease-duration", flags.leaseDuration, std::chrono::seconds(2));
  auto renewDeadline =
      durationFlag("--renew-deadline", flags.renewDeadline, std::chrono::seconds(1));
  auto retryPeriod = durationFlag("--retry-period", flags.retryPeriod, std::chrono::seconds(1));
  for (const base::Error* error :
       {level ? nullptr : &level.error(), format ? nullptr : &format.error(),
        resync ? nullptr : &resync.error(), watchTimeout ? nullptr : &watchTimeout.error(),
        leaseDuration ? nullptr : &leaseDuration.error(),
        renewDeadline ? nullptr : &renewDeadline.error(),
        retryPeriod ? nullptr : &retryPeriod.error()}) {
    if (error) {
      return *error;
    }
  }
  if (flags.workers < 1 || flags.workers > 256) {
    return base::Error{"--workers", "must be between 1 and 256"};
  }
  if (flags.leaderElect && !(*retryPeriod < *renewDeadline && *renewDeadline < *leaseDuration)) {
    return base::Error{"--renew-deadline",
                       "leader election needs retry-period < renew-deadline < lease-duration"};
  }
  if (!flags.region.empty() && !core::isRegionName(flags.region)) {
    return base::Error{"--region", "\"" + flags.region +
                                       "\" is not an AWS region name (like us-east-1 or "
                                       "eu-central-1)"};
  }
  auto pricesInterval = durationFlag("--karpenter-prices-interval", flags.karpenterPricesInterval,
                                     std::chrono::seconds(10));
  if (!pricesInterval) {
    return pricesInterval.error();
  }
  const KarpenterPricesOptions karpenterPrices{flags.karpenterService, flags.karpenterMetricsUrl,
                                               *pricesInterval};
  if (auto checked = checkKarpenterPricesOptions(karpenterPrices); !checked) {
    return checked.error();
  }
  if (flags.burst < 1) {
    return base::Error{"--burst", "must be at least 1"};
  }
  if (flags.busyStatusQps &&
      (!(*flags.busyStatusQps > 0) || (flags.qps > 0 && *flags.busyStatusQps > flags.qps))) {
    return base::Error{"--busy-status-qps", "must be above 0 and at most --qps"};
  }
  if (!flags.metricsSecure && !flags.metricsCertDir.empty()) {
    return base::Error{"--metrics-cert-dir",
                       "is the HTTPS certificate: it cannot go with --metrics-secure=false"};
  }
  return Settings{*level,         *format,        *resync,      *watchTimeout,
                  *leaseDuration, *renewDeadline, *retryPeriod, karpenterPrices};
}

// What the operator decides with, and where the cluster is. A failure says
// what could not be loaded (`field`) and why (`message`).
struct Inputs {
  std::shared_ptr<const core::Catalog> catalog;
  std::shared_ptr<const core::RuleSet> rules;
  kube::ClientConfig cluster;
};

base::Result<Inputs> loadInputs(const RunFlags& flags) {
  auto catalog = loadCatalog(flags.catalog, flags.priceList);
  if (!catalog) {
    return base::Error{"cannot load the catalog", catalog.error().describe()};
  }
  auto rules = loadRules(flags.rules, **catalog);
  if (!rules) {
    return base::Error{"cannot load the rules", rules.error().describe()};
  }
  auto config =
      kube::loadClientConfig({flags.kubeconfig, flags.context}, kube::Environment::process());
  if (!config) {
    return base::Error{"cannot find the cluster", config.error().describe()};
  }
  return Inputs{*catalog, *rules, std::move(config).value()};
}

// client-go's rest_client_* metrics.
void observeRequests(kube::KubeClient& client, MetricsRegistry& metrics) {
  auto& requests = metrics.counter("rest_client_requests_total",
                                   "Number of HTTP requests, partitioned by verb and status code",
                                   {"verb", "code"});
  auto& latency =
      metrics.histogram("rest_client_request_duration_seconds",
                        "Request latency in seconds, by verb", {"verb"}, latencyBuckets());
  client.setObserver([&requests, &latency](const kube::RequestRecord& record) {
    requests.inc({record.verb, record.code == 0 ? "<error>" : std::to_string(record.code)});
    latency.observe({record.verb}, std::chrono::duration<double>(record.latency).count());
  });
}

std::unique_ptr<kube::LeaderElector> makeElector(asio::any_io_executor executor,
                                                 kube::KubeClient& client, const RunFlags& flags,
                                                 const Settings& settings,
                                                 const std::string& identity, Manager& manager,
                                                 Logger& log, const runtime::Clock& clock) {
  kube::LeaderElectionConfig election;
  election.leaseNamespace = !flags.leaderElectionNamespace.empty() ? flags.leaderElectionNamespace
                            : !podNamespace().empty()              ? podNamespace()
                                                                   : "gpu-placement-system";
  election.leaseName = flags.leaderElectionId;
  election.identity = identity;
  election.leaseDuration = settings.leaseDuration;
  election.renewDeadline = settings.renewDeadline;
  election.retryPeriod = settings.retryPeriod;
  auto elector = std::make_unique<kube::LeaderElector>(executor, client, election, clock);
  elector->log = [&log](const std::string& message) {
    log.info(message, {{"component", "leader-election"}});
  };
  elector->onStartedLeading = [&log, &manager, identity] {
    log.info("leading: reconciling", {{"identity", identity}});
    manager.becomeLeader();
  };
  elector->onStoppedLeading = [&log, identity] {
    // Stop at once, before the next leader can start (the renew deadline
    // is shorter than the lease): exiting is the only way to be sure no
    // reconcile in flight writes after this point. Kubernetes restarts
    // the pod as a standby.
    log.error("lost leadership: exiting", {{"identity", identity}});
    std::fflush(nullptr);
    std::_Exit(1);
  };
  manager.requireLeadership();
  return elector;
}

// How /metrics is guarded: with --metrics-secure (the default), HTTPS and
// the access filter; both must outlive the servers.
struct MetricsGuard {
  std::unique_ptr<ServingCertificate> certificate;
  std::unique_ptr<MetricsAccessFilter> filter;

  HttpServeOptions serveOptions() {
    HttpServeOptions options;
    if (certificate) {
      options.tls = [this] { return certificate->current(); };
    }
    if (filter) {
      options.filter = [this](HttpRequestHead request) {
        return filter->check(std::move(request));
      };
    }
    return options;
  }
  std::string description = "http, unauthenticated";  // for the start's log line
};

base::Result<MetricsGuard> guardMetrics(const RunFlags& flags, kube::KubeClient& client,
                                        Logger& log, const runtime::Clock& clock) {
  MetricsGuard guard;
  const bool served = !flags.metricsAddress.empty() && flags.metricsAddress != "0";
  if (!served) {
    guard.description = "off";
  }
  if (!flags.metricsSecure || !served) {
    return guard;
  }
  auto certificate = flags.metricsCertDir.empty()
                         ? ServingCertificate::selfSigned(hostname())
                         : ServingCertificate::fromDirectory(
                               flags.metricsCertDir, clock, [&log](const std::string& message) {
                                 log.info(message, {{"component", "metrics"}});
                               });
  if (!certificate) {
    return certificate.error();
  }
  guard.certificate = std::move(certificate).value();
  guard.filter = std::make_unique<MetricsAccessFilter>(client, log, clock);
  guard.description = "https (" + guard.certificate->source() +
                      "), TokenReview and SubjectAccessReview for get /metrics";
  return guard;
}

// /metrics on one address; /healthz and /readyz on another.
base::Result<std::vector<std::unique_ptr<HttpServer>>> serve(asio::any_io_executor executor,
                                                             const RunFlags& flags,
                                                             MetricsRegistry& metrics,
                                                             MetricsGuard& guard,
                                                             Manager& manager) {
  auto metricsServer = HttpServer::listen(
      executor, flags.metricsAddress,
      {{"/metrics",
        [&metrics] {
          return HttpAnswer{200, metrics.render(), "text/plain; version=0.0.4; charset=utf-8"};
        }}},
      guard.serveOptions());
  auto healthServer =
      HttpServer::listen(executor, flags.healthAddress,
                         {{"/healthz",
                           [&manager] {
                             return manager.healthy() ? HttpAnswer{200, "ok\n"}
                                                      : HttpAnswer{500, "informers are failing\n"};
                           }},
                          {"/readyz", [&] {
                             if (!manager.synced()) {
                               return HttpAnswer{503, "caches are not synced\n"};
                             }
                             // Ready but unable to do the job: say so, so
                             // `kubectl get pods` shows it (RBAC out of date).
                             if (auto refused = manager.refusals(); !refused.empty()) {
                               return HttpAnswer{503, "forbidden: " + refused + "\n"};
                             }
                             return HttpAnswer{200, "ok\n"};
                           }}});
  std::vector<std::unique_ptr<HttpServer>> servers;
  for (auto* server : {&metricsServer, &healthServer}) {
    if (!*server) {
      return server->error();
    }
    if (**server) {  // null: disabled with "0"
      servers.push_back(std::move(*server).value());
    }
  }
  return servers;
}

// Runs everything on the one event loop until SIGTERM or SIGINT has
// stopped the manager and in-flight reconciles have finished; false when the
// loop failed.
bool runUntilStopped(asio::io_context& context, Manager& manager, kube::LeaderElector* elector,
                     std::vector<std::unique_ptr<HttpServer>>& servers, Logger& log) {
  for (auto& server : servers) {
    asio::co_spawn(context, server->run(), asio::detached);
  }
  asio::signal_set signals(context, SIGTERM, SIGINT);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) {
      return;
    }
    log.info("stopping: finishing in-flight work", {{"signal", std::to_string(signal)}});
    manager.stop();
  });
  if (elector) {
    asio::co_spawn(context, elector->run(), asio::detached);
  }
  bool finished = false;
  asio::co_spawn(
      context,
      [&]() -> asio::awaitable<void> {
        co_await manager.run();
        if (elector) {
          co_await elector->stop();  // hand the lease over at once
        }
        finished = true;
        signals.cancel();
        for (auto& server : servers) {
          server->stop();
        }
      },
      [&](std::exception_ptr error) {
        if (error) {
          try {
            std::rethrow_exception(error);
          } catch (const std::exception& e) {
            log.error("the operator loop failed", {{"error", e.what()}});
          }
        }
      });
  // Anything still pending (a watch being torn down, an event write) gets a
  // moment, then the loop ends.
  while (!finished && context.run_one() > 0) {
  }
  context.run_for(std::chrono::seconds(2));
  log.info("stopped");
  return finished;
}

}  // namespace

int runOperator(const RunFlags& flags) {
  tuneAllocator();
  auto settings = checkFlags(flags);
  if (!settings) {
    std::cerr << "error: " << settings.error().describe() << "\n";
    return kExitBadInput;
  }
  Logger log(settings->level, settings->format);
  auto inputs = loadInputs(flags);
  if (!inputs) {
    log.error(inputs.error().field, {{"error", inputs.error().message}});
    return kExitBadInput;
  }

  asio::io_context context(1);
  runtime::RealClock clock;
  // Unique per process, as client-go's hostname_uuid: two replicas on one
  // host are still two candidates.
  const std::string identity = hostname() + "_" + randomSuffix();
  kube::ClientOptions clientOptions;
  clientOptions.qps = flags.qps;
  clientOptions.burst = flags.burst;
  clientOptions.userAgent =
      std::string("gpu-placement/") + GPUPLACEMENT_VERSION + " (" + identity + ")";
  auto client = kube::connect(context.get_executor(), inputs->cluster, clientOptions, clock);
  if (!client) {
    log.error("cannot configure the client", {{"error", client.error().describe()}});
    return kExitBadInput;
  }

  MetricsRegistry metrics;
  registerProcessMetrics(metrics);
  observeRequests(**client, metrics);
  ManagerOptions options;
  options.namespaces = flags.namespaces;
  options.workers = flags.workers;
  options.finalizer = flags.finalizer;
  options.perWorkloadMetrics = flags.perWorkloadMetrics;
  // The statuses start at a fifth of the client's rate and yield to the
  // placements from there; they may take it all when nothing is placed.
  const double statusQps = flags.busyStatusQps.value_or(flags.qps > 0 ? flags.qps / 5 : 20);
  options.statuses.rate.initial = statusQps;
  options.statuses.rate.minimum = std::min(1.0, statusQps);
  options.statuses.rate.maximum = flags.qps > 0 ? flags.qps : std::max(1000.0, statusQps);
  options.resync = settings->resync;
  options.watchTimeout = settings->watchTimeout;
  options.region = flags.region;
  options.karpenterPrices = settings->karpenterPrices;
  options.instance = identity;
  Manager manager(context.get_executor(), **client, inputs->catalog, inputs->rules, options, log,
                  metrics, clock);
  std::unique_ptr<kube::LeaderElector> elector;
  if (flags.leaderElect) {
    elector = makeElector(context.get_executor(), **client, flags, *settings, identity, manager,
                          log, clock);
  }
  auto guard = guardMetrics(flags, **client, log, clock);
  if (!guard) {
    log.error("cannot serve /metrics", {{"error", guard.error().describe()}});
    return kExitBadInput;
  }
  auto servers = serve(context.get_executor(), flags, metrics, *guard, manager);
  if (!servers) {
    log.error("cannot serve", {{"error", servers.error().describe()}});
    return kExitFailure;
  }
  log.info("starting",
           {{"version", GPUPLACEMENT_VERSION},
            {"identity", identity},
            {"leaderElection", flags.leaderElect ? "on" : "off"},
            {"cluster", inputs->cluster.server},
            {"metrics", guard->description},
            {"credentials", inputs->cluster.source},
            {"catalog", flags.catalog.empty() ? "built-in" : flags.catalog},
            {"prices", inputs->catalog->region + " " + inputs->catalog->pricesAsOf +
                           (flags.priceList.empty() ? "" : " (" + flags.priceList + ")") +
                           (settings->karpenterPrices.enabled()
                                ? ", then Karpenter's from " + settings->karpenterPrices.source()
                                : "")},
            {"instanceTypes", std::to_string(inputs->catalog->instances.size())}});
  return runUntilStopped(context, manager, elector.get(), *servers, log) ? kExitOk : kExitFailure;
}

}  // namespace gpuplacement::app
