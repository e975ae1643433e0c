#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "kube/transport.h"

namespace gpuplacement::kube {

// Where the API server is, from a kubeconfig `server:` URL.
struct Endpoint {
  std::string host;  // DNS name or IP literal, without brackets
  std::string port;
  std::string pathPrefix;  // e.g. "/k8s/clusters/c-1" behind a proxy; usually empty
  bool tls = true;
};

// Parses "https://host[:port][/prefix]"; the port defaults to 443 (https) or
// 80 (http). The error names what is wrong with the URL.
base::Result<Endpoint> parseServerUrl(const std::string& url);

struct TlsOptions {
  std::string caPem;  // empty: the system's trust store
  std::string clientCertPem;
  std::string clientKeyPem;
  std::string serverName;  // kubeconfig tls-server-name: name to verify instead of host
  bool insecureSkipVerify = false;
};

struct TransportOptions {
  std::size_t maxBodyBytes = 64 * 1024 * 1024;
  std::size_t maxLineBytes = 16 * 1024 * 1024;
  // A kept-alive connection unused this long is closed, even when no
  // request comes to find it (Go's net/http IdleConnTimeout): a burst's
  // pool of up to maxIdleConnections TLS sessions, about 60 KB each here
  // and as much on the API server, does not stay open for good.
  std::chrono::seconds idleConnectionTtl{60};
  std::size_t maxIdleConnections = 16;
  std::string userAgent = "gpu-placement";
};

class Connection;

// HTTP/1.1 over Boost.Beast, with TLS from OpenSSL: keep-alive connections
// are reused, every exchange has a deadline, and a request that fails on a
// reused connection before any answer is retried once on a fresh one.
class BeastTransport final : public Transport {
 public:
  static base::Result<std::unique_ptr<BeastTransport>, TransportError> create(
      asio::any_io_executor executor, Endpoint endpoint, const TlsOptions& tls,
      TransportOptions options = {});
  ~BeastTransport() override;

  asio::awaitable<TransportResult<HttpResponse>> send(HttpRequest request) override;
  asio::awaitable<TransportResult<StreamResponse>> openStream(HttpRequest request) override;

 private:
  struct Impl;
  BeastTransport(asio::any_io_executor executor, Endpoint endpoint, TransportOptions options);

  asio::awaitable<TransportResult<std::unique_ptr<Connection>>> connect(
      std::chrono::milliseconds timeout);
  std::unique_ptr<Connection> takeIdle();
  void release(std::unique_ptr<Connection> connection, bool keepAlive);
  // Closes the idle connections past their TTL when the oldest's is up.
  void scheduleSweep();
  void closeExpired();

  asio::any_io_executor executor_;
  Endpoint endpoint_;
  TransportOptions options_;
  std::unique_ptr<Impl> impl_;
  std::vector<std::unique_ptr<Connection>> idle_;  // oldest first
  // Expires with the transport: a sweep already due when it goes finds
  // it gone instead of a dangling this.
  std::shared_ptr<char> alive_ = std::make_shared<char>();
};

}  // namespace gpuplacement::kube
