#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/result.h"
#include "runtime/asio.h"

namespace gpuplacement::app {

struct HttpAnswer {
  unsigned status = 200;
  std::string body;
  std::string contentType = "text/plain; charset=utf-8";
};

// A small HTTP/1.1 server on the event loop for /metrics, /healthz and
// /readyz. GET only; every read has a deadline, so a slow client cannot
// hold a connection.
class HttpServer {
 public:
  using Handler = std::function<HttpAnswer()>;

  // "host:port", ":port" (all interfaces) or "0" to disable (nullptr).
  static base::Result<std::unique_ptr<HttpServer>> listen(asio::any_io_executor executor,
                                                          const std::string& address,
                                                          std::map<std::string, Handler> routes);
  ~HttpServer();

  asio::awaitable<void> run();
  void stop();
  unsigned short port() const;

 private:
  HttpServer(asio::any_io_executor executor, std::map<std::string, Handler> routes);
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);

  asio::any_io_executor executor_;
  asio::ip::tcp::acceptor acceptor_;
  std::map<std::string, Handler> routes_;
  bool stopped_ = false;
};

}  // namespace gpuplacement::app
