#include "kube/connect.h"

#include "kube/beast_transport.h"

namespace gpuplacement::kube {

base::Result<std::unique_ptr<KubeClient>> connect(asio::any_io_executor executor,
                                                  const ClientConfig& config, ClientOptions options,
                                                  const runtime::Clock& clock) {
  auto endpoint = parseServerUrl(config.server);
  if (!endpoint) {
    return base::Error{config.source + ": " + endpoint.error().field, endpoint.error().message};
  }
  TlsOptions tls;
  tls.caPem = config.caPem;
  tls.clientCertPem = config.clientCertPem;
  tls.clientKeyPem = config.clientKeyPem;
  tls.serverName = config.tlsServerName;
  tls.insecureSkipVerify = config.insecureSkipVerify;
  TransportOptions transportOptions;
  transportOptions.userAgent =
      options.userAgent.empty() ? "gpu-placement/" GPUPLACEMENT_VERSION : options.userAgent;
  auto transport =
      BeastTransport::create(executor, std::move(endpoint).value(), tls, transportOptions);
  if (!transport) {
    return base::Error{config.source, transport.error().message};
  }
  return std::make_unique<KubeClient>(std::move(transport).value(),
                                      makeCredentialSource(config, clock), options, clock);
}

}  // namespace gpuplacement::kube
