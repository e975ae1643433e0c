#pragma once

// ApiWrites over a scripted server, for the writers that send on their own
// budget (statuses, Events): what they send is in server.requests().
#include <memory>

#include <doctest/doctest.h>

#include "app/api_writes.h"
#include "app/logging.h"
#include "app/metrics.h"
#include "kube/beast_transport.h"
#include "runtime/clock.h"
#include "support/fake_api_server.h"

namespace gpuplacement::testing {

struct ScriptedWrites {
  asio::io_context context;
  runtime::RealClock clock;
  FakeApiServer server;
  std::unique_ptr<kube::KubeClient> client;
  app::Logger logger{app::LogLevel::Error, app::LogFormat::Text};
  app::MetricsRegistry metrics;
  std::unique_ptr<app::ApiWrites> writes;

  explicit ScriptedWrites(FakeApiServer::Handler answer) : server(context, std::move(answer)) {
    auto transport = kube::BeastTransport::create(context.get_executor(),
                                                  *kube::parseServerUrl(server.url()), {});
    REQUIRE(transport.ok());
    client = std::make_unique<kube::KubeClient>(std::move(transport).value(),
                                                kube::makeCredentialSource({}, clock),
                                                kube::ClientOptions{}, clock);
    writes = std::make_unique<app::ApiWrites>(*client, logger, clock, "test");
  }
};

}  // namespace gpuplacement::testing
