#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "runtime/asio.h"

namespace gpuplacement::testing {

// A scripted HTTP/1.1 server on loopback, for the faults a real API server
// will not produce on demand: 429 with Retry-After, 503s, connections
// dropped mid-stream, garbage. Never a stand-in for the real one.
class FakeApiServer {
 public:
  struct Request {
    std::string method;
    std::string target;
    std::string body;
    std::string authorization;
    int connection = 0;  // which accepted connection carried it
  };

  struct Response {
    unsigned status = 200;
    std::string body;
    std::map<std::string, std::string> headers;
    // A streamed (chunked) answer, one chunk per entry, sent with pauses.
    std::vector<std::string> chunks;
    std::chrono::milliseconds chunkPause{10};
    bool endStream = true;          // false: drop the connection instead of ending the body
    bool holdOpen = false;          // keep the stream open, silent, until the server stops
    bool dropBeforeAnswer = false;  // close the connection without answering
    bool closeAfter = false;        // answer, then close (no keep-alive)
  };

  using Handler = std::function<Response(const Request&)>;

  FakeApiServer(asio::io_context& context, Handler handler)
      : context_(context),
        acceptor_(context, {asio::ip::make_address("127.0.0.1"), 0}),
        handler_(std::move(handler)) {
    asio::co_spawn(context_, accept(), asio::detached);
  }

  ~FakeApiServer() { stop(); }

  void stop() {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (auto* socket : open_) {
      socket->close(ignored);
    }
    for (auto* timer : open_timers_) {
      timer->cancel();
    }
  }

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }
  const std::vector<Request>& requests() const { return requests_; }
  int connections() const { return connections_; }   // accepted, ever
  std::size_t open() const { return open_.size(); }  // not yet closed by either side

 private:
  asio::awaitable<void> accept() {
    for (;;) {
      boost::system::error_code ec;
      auto socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        co_return;
      }
      asio::co_spawn(context_, serve(std::move(socket), ++connections_), asio::detached);
    }
  }

  asio::awaitable<void> serve(asio::ip::tcp::socket socket, int connection) {
    namespace beast = boost::beast;
    namespace http = beast::http;
    open_.push_back(&socket);
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> request;
      boost::system::error_code ec;
      co_await http::async_read(socket, buffer, request,
                                asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        break;
      }
      Request seen{std::string(request.method_string()), std::string(request.target()),
                   request.body(), std::string(request[http::field::authorization]), connection};
      requests_.push_back(seen);
      const Response answer = handler_(seen);
      if (answer.dropBeforeAnswer) {
        break;
      }
      if (answer.chunks.empty()) {
        http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
        response.body() = answer.body;
        response.set(http::field::content_type, "application/json");
        for (const auto& [name, value] : answer.headers) {
          response.set(name, value);
        }
        response.keep_alive(!answer.closeAfter);
        response.prepare_payload();
        co_await http::async_write(socket, response, asio::redirect_error(asio::use_awaitable, ec));
        if (ec || answer.closeAfter) {
          break;
        }
        continue;
      }
      // A chunked stream, as watches are.
      std::string head = "HTTP/1.1 " + std::to_string(answer.status) +
                         " OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
                         "chunked\r\n\r\n";
      co_await asio::async_write(socket, asio::buffer(head),
                                 asio::redirect_error(asio::use_awaitable, ec));
      for (const auto& chunk : answer.chunks) {
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
        const std::string frame = size + chunk + "\r\n";
        co_await asio::async_write(socket, asio::buffer(frame),
                                   asio::redirect_error(asio::use_awaitable, ec));
        asio::steady_timer pause(context_, answer.chunkPause);
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      if (answer.holdOpen) {
        asio::steady_timer idle(context_, std::chrono::minutes(10));
        open_timers_.push_back(&idle);
        co_await idle.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        std::erase(open_timers_, &idle);
        break;
      }
      if (!answer.endStream) {
        break;
      }
      const std::string last = "0\r\n\r\n";
      co_await asio::async_write(socket, asio::buffer(last),
                                 asio::redirect_error(asio::use_awaitable, ec));
    }
    boost::system::error_code ignored;
    socket.close(ignored);
    std::erase(open_, &socket);
  }

  asio::io_context& context_;
  asio::ip::tcp::acceptor acceptor_;
  Handler handler_;
  std::vector<Request> requests_;
  std::vector<asio::ip::tcp::socket*> open_;
  std::vector<asio::steady_timer*> open_timers_;
  int connections_ = 0;
};

}  // namespace gpuplacement::testing
