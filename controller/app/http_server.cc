#include "app/http_server.h"

#include <algorithm>
#include <cctype>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace gpuplacement::app {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpServer::HttpServer(asio::any_io_executor executor, std::map<std::string, Handler> routes,
                       HttpServeOptions options)
    : executor_(executor),
      acceptor_(executor),
      routes_(std::move(routes)),
      options_(std::move(options)) {}

HttpServer::~HttpServer() {
  stop();
}

base::Result<std::unique_ptr<HttpServer>> HttpServer::listen(asio::any_io_executor executor,
                                                             const std::string& address,
                                                             std::map<std::string, Handler> routes,
                                                             HttpServeOptions options) {
  if (address.empty() || address == "0") {
    return std::unique_ptr<HttpServer>();
  }
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    return base::Error{"address", "\"" + address + "\" is not host:port or :port"};
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned long port = 0;
  try {
    std::size_t used = 0;
    port = std::stoul(address.substr(colon + 1), &used);
    if (used != address.size() - colon - 1 || port > 65535) {
      throw std::invalid_argument("port");
    }
  } catch (const std::exception&) {
    return base::Error{"address", "\"" + address + "\" has an invalid port"};
  }
  boost::system::error_code ec;
  const auto ip = host.empty() ? asio::ip::address(asio::ip::address_v4::any())
                               : asio::ip::make_address(host, ec);
  if (ec) {
    return base::Error{"address", "\"" + host + "\" is not an IP address"};
  }
  std::unique_ptr<HttpServer> server(
      new HttpServer(executor, std::move(routes), std::move(options)));
  const tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
  server->acceptor_.open(endpoint.protocol(), ec);
  if (!ec) {
    server->acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    server->acceptor_.bind(endpoint, ec);
  }
  if (!ec) {
    server->acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  }
  if (ec) {
    return base::Error{"address", "cannot listen on " + address + ": " + ec.message()};
  }
  return server;
}

unsigned short HttpServer::port() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec).port();
}

void HttpServer::stop() {
  stopped_ = true;
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

asio::awaitable<void> HttpServer::run() {
  while (!stopped_) {
    boost::system::error_code ec;
    tcp::socket socket =
        co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopped_) {
        break;
      }
      continue;  // a failed accept (e.g. out of descriptors) must not end the server
    }
    asio::co_spawn(executor_, serve(std::move(socket)), asio::detached);
  }
}

// Deadlines: a client gets this long for the TLS handshake and for each
// request, so an idle or slow connection cannot pin the server.
constexpr std::chrono::seconds kReadDeadline{10};

asio::awaitable<void> HttpServer::serve(tcp::socket socket) {
  boost::system::error_code ec;
  if (!options_.tls) {
    beast::tcp_stream stream(std::move(socket));
    co_await exchange(stream);
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    co_return;
  }
  // The context lives as long as the connection, even if a renewed
  // certificate replaces it for the next one.
  const std::shared_ptr<asio::ssl::context> context = options_.tls();
  beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *context);
  beast::get_lowest_layer(stream).expires_after(kReadDeadline);
  co_await stream.async_handshake(asio::ssl::stream_base::server,
                                  asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) {
    co_await exchange(stream);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
    co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
  }
  beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
}

asio::awaitable<HttpAnswer> HttpServer::respond(HttpRequestHead request) {
  if (request.verb != "get" && request.verb != "head") {
    co_return HttpAnswer{405, "method not allowed\n"};
  }
  const auto route = routes_.find(request.path);
  if (route == routes_.end()) {
    co_return HttpAnswer{404, "not found\n"};
  }
  if (options_.filter) {
    if (auto refused = co_await options_.filter(request)) {
      co_return std::move(*refused);
    }
  }
  co_return route->second();
}

template <typename Stream>
asio::awaitable<void> HttpServer::exchange(Stream& stream) {
  beast::flat_buffer buffer;
  for (int served = 0; served < 100 && !stopped_; ++served) {
    http::request<http::string_body> request;
    beast::get_lowest_layer(stream).expires_after(kReadDeadline);
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, request,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      break;
    }
    HttpRequestHead head;
    head.verb = std::string(request.method_string());
    std::transform(head.verb.begin(), head.verb.end(), head.verb.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    head.path = std::string(request.target());
    if (const auto query = head.path.find('?'); query != std::string::npos) {
      head.path.resize(query);
    }
    head.authorization = std::string(request[http::field::authorization]);
    // No deadline while the filter waits on the API server (its own
    // requests have one).
    beast::get_lowest_layer(stream).expires_never();
    HttpAnswer answer = co_await respond(std::move(head));
    http::response<http::string_body> response{static_cast<http::status>(answer.status),
                                               request.version()};
    response.set(http::field::content_type, answer.contentType);
    response.keep_alive(request.keep_alive());
    if (request.method() != http::verb::head) {
      response.body() = std::move(answer.body);
    }
    response.prepare_payload();
    beast::get_lowest_layer(stream).expires_after(kReadDeadline);
    co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !response.keep_alive()) {
      break;
    }
  }
}

}  // namespace gpuplacement::app
