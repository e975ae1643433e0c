#include "app/http_server.h"

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace gpuplacement::app {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

HttpServer::HttpServer(asio::any_io_executor executor, std::map<std::string, Handler> routes)
    : executor_(executor), acceptor_(executor), routes_(std::move(routes)) {}

HttpServer::~HttpServer() {
  stop();
}

base::Result<std::unique_ptr<HttpServer>> HttpServer::listen(
    asio::any_io_executor executor, const std::string& address,
    std::map<std::string, Handler> routes) {
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
  std::unique_ptr<HttpServer> server(new HttpServer(executor, std::move(routes)));
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

asio::awaitable<void> HttpServer::serve(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (int served = 0; served < 100 && !stopped_; ++served) {
    http::request<http::string_body> request;
    stream.expires_after(std::chrono::seconds(10));
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, request,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      break;
    }
    HttpAnswer answer;
    std::string path(request.target());
    if (const auto query = path.find('?'); query != std::string::npos) {
      path.resize(query);
    }
    const auto route = routes_.find(path);
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      answer = {405, "method not allowed\n"};
    } else if (route == routes_.end()) {
      answer = {404, "not found\n"};
    } else {
      answer = route->second();
    }
    http::response<http::string_body> response{static_cast<http::status>(answer.status),
                                               request.version()};
    response.set(http::field::content_type, answer.contentType);
    response.keep_alive(request.keep_alive());
    if (request.method() != http::verb::head) {
      response.body() = std::move(answer.body);
    }
    response.prepare_payload();
    co_await http::async_write(stream, response, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !response.keep_alive()) {
      break;
    }
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
}

}  // namespace gpuplacement::app
