#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "base/result.h"
#include "runtime/asio.h"

namespace gpuplacement::app {

struct HttpAnswer {
  unsigned status = 200;
  std::string body;
  std::string contentType = "text/plain; charset=utf-8";
};

// What a filter sees of a request.
struct HttpRequestHead {
  std::string verb;           // the method in lower case, as Kubernetes names verbs: "get"
  std::string path;           // without the query
  std::string authorization;  // the Authorization header, empty when absent
};

struct HttpServeOptions {
  // HTTPS with the context this gives for each new connection (so a renewed
  // certificate serves the next one); empty: plain HTTP.
  std::function<std::shared_ptr<asio::ssl::context>()> tls;
  // Runs before a routed request's handler; an answer it gives is sent
  // instead (controller-runtime's metrics Filter). It may wait on the API
  // server: other connections are served meanwhile.
  std::function<asio::awaitable<std::optional<HttpAnswer>>(HttpRequestHead)> filter;
};

// A small HTTP/1.1 server on the event loop for /metrics, /healthz and
// /readyz, plain or over TLS. GET and HEAD only; every read and the TLS
// handshake have a deadline, so a slow client cannot hold a connection.
class HttpServer {
 public:
  using Handler = std::function<HttpAnswer()>;

  // "host:port", ":port" (all interfaces) or "0" to disable (nullptr).
  static base::Result<std::unique_ptr<HttpServer>> listen(asio::any_io_executor executor,
                                                          const std::string& address,
                                                          std::map<std::string, Handler> routes,
                                                          HttpServeOptions options = {});
  ~HttpServer();

  asio::awaitable<void> run();
  void stop();
  unsigned short port() const;

 private:
  HttpServer(asio::any_io_executor executor, std::map<std::string, Handler> routes,
             HttpServeOptions options);
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);
  // Request after request on one connection, plain or TLS.
  template <typename Stream>
  asio::awaitable<void> exchange(Stream& stream);
  // The route's answer, or the filter's refusal.
  asio::awaitable<HttpAnswer> respond(HttpRequestHead request);

  asio::any_io_executor executor_;
  asio::ip::tcp::acceptor acceptor_;
  std::map<std::string, Handler> routes_;
  HttpServeOptions options_;
  bool stopped_ = false;
};

}  // namespace gpuplacement::app
