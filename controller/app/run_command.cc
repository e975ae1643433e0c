#include "app/run_command.h"

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
#include "app/placement_config.h"
#include "base/time_format.h"
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

}  // namespace

int runOperator(const RunFlags& flags) {
  tuneAllocator();
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
      std::cerr << "error: " << error->describe() << "\n";
      return kExitBadInput;
    }
  }
  if (flags.workers < 1 || flags.workers > 256) {
    std::cerr << "error: --workers: must be between 1 and 256\n";
    return kExitBadInput;
  }
  if (flags.leaderElect && !(*retryPeriod < *renewDeadline && *renewDeadline < *leaseDuration)) {
    std::cerr << "error: --renew-deadline: leader election needs retry-period < renew-deadline "
                 "< lease-duration\n";
    return kExitBadInput;
  }
  if (flags.burst < 1) {
    std::cerr << "error: --burst: must be at least 1\n";
    return kExitBadInput;
  }
  Logger log(*level, *format);

  auto catalog = loadCatalog(flags.catalog);
  if (!catalog) {
    log.error("cannot load the catalog", {{"error", catalog.error().describe()}});
    return kExitBadInput;
  }
  auto rules = loadRules(flags.rules, **catalog);
  if (!rules) {
    log.error("cannot load the rules", {{"error", rules.error().describe()}});
    return kExitBadInput;
  }
  auto config =
      kube::loadClientConfig({flags.kubeconfig, flags.context}, kube::Environment::process());
  if (!config) {
    log.error("cannot find the cluster", {{"error", config.error().describe()}});
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
  auto client = kube::connect(context.get_executor(), *config, clientOptions, clock);
  if (!client) {
    log.error("cannot configure the client", {{"error", client.error().describe()}});
    return kExitBadInput;
  }

  MetricsRegistry metrics;
  registerProcessMetrics(metrics);
  auto& requests = metrics.counter("rest_client_requests_total",
                                   "Number of HTTP requests, partitioned by verb and status code",
                                   {"verb", "code"});
  auto& requestLatency =
      metrics.histogram("rest_client_request_duration_seconds",
                        "Request latency in seconds, by verb", {"verb"}, latencyBuckets());
  (*client)->setObserver([&](const kube::RequestRecord& record) {
    requests.inc({record.verb, record.code == 0 ? "<error>" : std::to_string(record.code)});
    requestLatency.observe({record.verb}, std::chrono::duration<double>(record.latency).count());
  });

  ManagerOptions options;
  options.namespaces = flags.namespaces;
  options.workers = flags.workers;
  options.resync = *resync;
  options.watchTimeout = *watchTimeout;
  options.instance = identity;
  Manager manager(context.get_executor(), **client, *catalog, *rules, options, log, metrics, clock);

  std::unique_ptr<kube::LeaderElector> elector;
  if (flags.leaderElect) {
    kube::LeaderElectionConfig election;
    election.leaseNamespace = !flags.leaderElectionNamespace.empty() ? flags.leaderElectionNamespace
                              : !podNamespace().empty()              ? podNamespace()
                                                                     : "gpu-placement-system";
    election.leaseName = flags.leaderElectionId;
    election.identity = identity;
    election.leaseDuration = *leaseDuration;
    election.renewDeadline = *renewDeadline;
    election.retryPeriod = *retryPeriod;
    elector =
        std::make_unique<kube::LeaderElector>(context.get_executor(), **client, election, clock);
    elector->log = [&log](const std::string& message) {
      log.info(message, {{"component", "leader-election"}});
    };
    elector->onStartedLeading = [&] {
      log.info("leading: reconciling", {{"identity", identity}});
      manager.becomeLeader();
    };
    elector->onStoppedLeading = [&] {
      // Stop at once, before the next leader can start (the renew deadline
      // is shorter than the lease): exiting is the only way to be sure no
      // reconcile in flight writes after this point. Kubernetes restarts
      // the pod as a standby.
      log.error("lost leadership: exiting", {{"identity", identity}});
      std::fflush(nullptr);
      std::_Exit(1);
    };
    manager.requireLeadership();
  }
  auto metricsServer = HttpServer::listen(
      context.get_executor(), flags.metricsAddress,
      {{"/metrics", [&] {
          return HttpAnswer{200, metrics.render(), "text/plain; version=0.0.4; charset=utf-8"};
        }}});
  auto healthServer =
      HttpServer::listen(context.get_executor(), flags.healthAddress,
                         {{"/healthz",
                           [&] {
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
  for (auto* server : {&metricsServer, &healthServer}) {
    if (!*server) {
      log.error("cannot serve", {{"error", server->error().describe()}});
      return kExitFailure;
    }
  }
  for (auto* server : {&*metricsServer, &*healthServer}) {
    if (*server) {
      asio::co_spawn(context, (*server)->run(), asio::detached);
    }
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
  log.info("starting", {{"version", GPUPLACEMENT_VERSION},
                        {"identity", identity},
                        {"leaderElection", flags.leaderElect ? "on" : "off"},
                        {"cluster", config->server},
                        {"credentials", config->source},
                        {"catalog", flags.catalog.empty() ? "built-in" : flags.catalog},
                        {"instanceTypes", std::to_string((*catalog)->instances.size())}});
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
        for (auto* server : {&*metricsServer, &*healthServer}) {
          if (*server) {
            (*server)->stop();
          }
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
  return finished ? kExitOk : kExitFailure;
}

}  // namespace gpuplacement::app
