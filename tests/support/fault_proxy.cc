#include "support/fault_proxy.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <future>
#include <limits>
#include <list>
#include <optional>
#include <regex>
#include <sstream>

#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include "kube/beast_transport.h"

namespace gpuplacement::testing {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;
using Clock = std::chrono::steady_clock;

const char* faultName(Fault fault) {
  switch (fault) {
    case Fault::Respond:
      return "respond";
    case Fault::ResetBeforeForward:
      return "reset-before-forward";
    case Fault::ResetAfterForward:
      return "reset-after-forward";
    case Fault::Delay:
      return "delay";
    case Fault::TruncateStream:
      return "truncate-stream";
    case Fault::ResetMidStream:
      return "reset-mid-stream";
  }
  return "";
}

bool isWatch(const std::string& target) {
  return target.find("watch=1") != std::string::npos ||
         target.find("watch=true") != std::string::npos;
}

// An RST rather than a FIN: what a crashed peer or a middlebox dropping
// state looks like.
void reset(tcp::socket& socket) {
  beast::error_code ignored;
  socket.set_option(asio::socket_base::linger(true, 0), ignored);
  socket.close(ignored);
}

std::string statusBody(unsigned status, const std::string& reason) {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"injected by the fault proxy","reason":")" +
         reason + R"(","code":)" + std::to_string(status) + "}";
}

std::string headerText(const http::response_header<>& header) {
  std::string text = "HTTP/1.1 " + std::to_string(header.result_int()) + " " +
                     std::string(header.reason()) + "\r\n";
  for (const auto& field : header) {
    text += std::string(field.name_string()) + ": " + std::string(field.value()) + "\r\n";
  }
  return text + "\r\n";
}

}  // namespace

// An exchange whose answer is being streamed (a watch): the commands that
// act on open streams find it here.
struct OpenStream {
  TlsStream* client = nullptr;
  TlsStream* server = nullptr;
  bool stalled = false;
};

struct FaultProxy::Impl {
  asio::io_context context{1};
  ssl::context serverTls{ssl::context::tls_server};
  ssl::context clientTls{ssl::context::tls_client};
  tcp::acceptor acceptor{context};
  kube::Endpoint upstream;
  bool stopping = false;
  std::list<OpenStream> open;  // the proxy thread's only

  mutable std::mutex mutex;  // rules and log, shared with the test thread
  std::vector<FaultRule> rules;
  std::vector<ProxiedRequest> log;

  std::optional<FaultRule> take(const std::string& method, const std::string& target) {
    std::lock_guard lock(mutex);
    for (auto it = rules.begin(); it != rules.end(); ++it) {
      const bool methodMatches = it->method.empty() || it->method == method ||
                                 (it->method == "WATCH" && method == "GET" && isWatch(target));
      if (!methodMatches || target.find(it->path) == std::string::npos) {
        continue;
      }
      FaultRule rule = *it;
      if (it->times > 0 && --it->times == 0) {
        rules.erase(it);
      }
      return rule;
    }
    return std::nullopt;
  }

  std::size_t record(ProxiedRequest request) {
    std::lock_guard lock(mutex);
    log.push_back(std::move(request));
    return log.size() - 1;
  }
  void setStatus(std::size_t index, unsigned status) {
    std::lock_guard lock(mutex);
    log[index].status = status;
  }

  // Runs `command` on the proxy's thread and waits for its answer.
  template <typename F>
  auto onProxyThread(F command) {
    std::packaged_task<decltype(command())()> task(std::move(command));
    auto result = task.get_future();
    asio::post(context, [&task] { task(); });
    return result.get();
  }

  asio::awaitable<void> accept();
  asio::awaitable<void> serve(tcp::socket socket);
  asio::awaitable<bool> exchange(TlsStream& client, std::unique_ptr<TlsStream>& server,
                                 beast::flat_buffer& serverBuffer,
                                 http::request<http::string_body> request);
  asio::awaitable<bool> relayBody(TlsStream& client, TlsStream& server,
                                  beast::flat_buffer& serverBuffer,
                                  http::response_parser<http::buffer_body>& answer,
                                  const std::optional<FaultRule>& fault, bool watch);
  asio::awaitable<std::unique_ptr<TlsStream>> connectUpstream();
};

FaultProxy::FaultProxy(const std::string& upstream, const std::string& pkiDir)
    : impl_(std::make_unique<Impl>()) {
  auto endpoint = kube::parseServerUrl(upstream);
  if (!endpoint) {
    throw std::runtime_error("fault proxy: " + endpoint.error().describe());
  }
  impl_->upstream = *endpoint;
  impl_->serverTls.use_certificate_chain_file(pkiDir + "/apiserver.crt");
  impl_->serverTls.use_private_key_file(pkiDir + "/apiserver.key", ssl::context::pem);
  // The server is the test's own on loopback; the proxy checks nothing of
  // it, the client under test checks the proxy.
  impl_->clientTls.set_verify_mode(ssl::verify_none);
  const tcp::endpoint local(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(local.protocol());
  impl_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  impl_->acceptor.bind(local);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  asio::co_spawn(impl_->context, impl_->accept(), asio::detached);
  thread_ = std::thread([this] { impl_->context.run(); });
}

FaultProxy::~FaultProxy() {
  impl_->onProxyThread([this] {
    impl_->stopping = true;
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    for (auto& stream : impl_->open) {
      reset(beast::get_lowest_layer(*stream.client).socket());
      beast::get_lowest_layer(*stream.server).socket().close(ignored);
    }
    return 0;
  });
  impl_->context.stop();
  thread_.join();
}

std::string FaultProxy::kubeconfigThrough(const std::string& kubeconfig,
                                          const std::string& path) const {
  std::ifstream in(kubeconfig);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string rewritten =
      std::regex_replace(text.str(), std::regex("server: https://[^\\s]+"), "server: " + url());
  std::ofstream(path) << rewritten;
  return path;
}

void FaultProxy::addRule(FaultRule rule) {
  std::lock_guard lock(impl_->mutex);
  impl_->rules.push_back(std::move(rule));
}

void FaultProxy::clearRules() {
  std::lock_guard lock(impl_->mutex);
  impl_->rules.clear();
}

int FaultProxy::rulesLeft() const {
  std::lock_guard lock(impl_->mutex);
  return static_cast<int>(impl_->rules.size());
}

std::vector<ProxiedRequest> FaultProxy::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->log;
}

int FaultProxy::stallOpenStreams() {
  return impl_->onProxyThread([this] {
    for (auto& stream : impl_->open) {
      stream.stalled = true;
    }
    return static_cast<int>(impl_->open.size());
  });
}

int FaultProxy::resetOpenStreams() {
  return impl_->onProxyThread([this] {
    for (auto& stream : impl_->open) {
      reset(beast::get_lowest_layer(*stream.client).socket());
      // Wakes the relay, which may be waiting on the server's next byte.
      beast::error_code ignored;
      beast::get_lowest_layer(*stream.server).socket().close(ignored);
    }
    return static_cast<int>(impl_->open.size());
  });
}

int FaultProxy::openStreams() {
  return impl_->onProxyThread([this] { return static_cast<int>(impl_->open.size()); });
}

asio::awaitable<void> FaultProxy::Impl::accept() {
  for (;;) {
    beast::error_code ec;
    auto socket = co_await acceptor.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      co_return;
    }
    asio::co_spawn(context, serve(std::move(socket)), asio::detached);
  }
}

asio::awaitable<std::unique_ptr<TlsStream>> FaultProxy::Impl::connectUpstream() {
  tcp::resolver resolver(context);
  beast::error_code ec;
  auto addresses = co_await resolver.async_resolve(upstream.host, upstream.port,
                                                   asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    co_return nullptr;
  }
  auto stream = std::make_unique<TlsStream>(context, clientTls);
  beast::get_lowest_layer(*stream).expires_after(std::chrono::seconds(10));
  co_await beast::get_lowest_layer(*stream).async_connect(
      addresses, asio::redirect_error(asio::use_awaitable, ec));
  if (!ec) {
    co_await stream->async_handshake(ssl::stream_base::client,
                                     asio::redirect_error(asio::use_awaitable, ec));
  }
  beast::get_lowest_layer(*stream).expires_never();
  co_return ec ? nullptr : std::move(stream);
}

asio::awaitable<void> FaultProxy::Impl::serve(tcp::socket socket) {
  TlsStream client(std::move(socket), serverTls);
  beast::error_code ec;
  beast::get_lowest_layer(client).expires_after(std::chrono::seconds(10));
  co_await client.async_handshake(ssl::stream_base::server,
                                  asio::redirect_error(asio::use_awaitable, ec));
  beast::get_lowest_layer(client).expires_never();
  std::unique_ptr<TlsStream> server;
  beast::flat_buffer clientBuffer;
  beast::flat_buffer serverBuffer;
  while (!ec && !stopping) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    co_await http::async_read(client, clientBuffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      break;
    }
    const bool keepGoing = co_await exchange(client, server, serverBuffer, parser.release());
    if (!keepGoing) {
      break;
    }
  }
  beast::get_lowest_layer(client).socket().close(ec);
  if (server) {
    beast::get_lowest_layer(*server).socket().close(ec);
  }
}

// One request and its answer; false when the client connection is done.
asio::awaitable<bool> FaultProxy::Impl::exchange(TlsStream& client,
                                                 std::unique_ptr<TlsStream>& server,
                                                 beast::flat_buffer& serverBuffer,
                                                 http::request<http::string_body> request) {
  const std::string method(request.method_string());
  const std::string target(request.target());
  const bool watch = method == "GET" && isWatch(target);
  const auto fault = take(method, target);
  const auto index = record(ProxiedRequest{method, target, watch, Clock::now(), 0,
                                           fault ? faultName(fault->fault) : "",
                                           std::string(request[http::field::user_agent])});
  beast::error_code ec;
  if (fault && fault->fault == Fault::Respond) {
    http::response<http::string_body> answer{static_cast<http::status>(fault->status), 11};
    answer.set(http::field::content_type, "application/json");
    if (fault->retryAfterSeconds >= 0) {
      answer.set(http::field::retry_after, std::to_string(fault->retryAfterSeconds));
    }
    answer.body() =
        statusBody(fault->status, fault->status == 429 ? "TooManyRequests" : "ServiceUnavailable");
    answer.keep_alive(request.keep_alive());
    answer.prepare_payload();
    co_await http::async_write(client, answer, asio::redirect_error(asio::use_awaitable, ec));
    co_return !ec && request.keep_alive();
  }
  if (fault && fault->fault == Fault::ResetBeforeForward) {
    reset(beast::get_lowest_layer(client).socket());
    co_return false;
  }
  std::optional<http::response_parser<http::buffer_body>> parser;
  // A kept-alive connection to the server may have been closed by it
  // meanwhile: one more try on a new one, so the proxy adds no fault of
  // its own.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool reused = server != nullptr;
    if (!server) {
      server = co_await connectUpstream();
      if (!server) {
        break;
      }
    }
    ec = {};
    serverBuffer.clear();
    parser.emplace();
    parser->body_limit(std::numeric_limits<std::uint64_t>::max());
    co_await http::async_write(*server, request, asio::redirect_error(asio::use_awaitable, ec));
    if (!ec) {
      co_await http::async_read_header(*server, serverBuffer, *parser,
                                       asio::redirect_error(asio::use_awaitable, ec));
    }
    if (!ec || !reused || parser->got_some()) {
      break;
    }
    server.reset();
  }
  if (!server || ec) {
    reset(beast::get_lowest_layer(client).socket());
    co_return false;
  }
  auto& answer = *parser;
  setStatus(index, answer.get().result_int());
  if (fault && fault->fault == Fault::ResetAfterForward) {
    reset(beast::get_lowest_layer(client).socket());
    co_return false;
  }
  if (fault && fault->fault == Fault::Delay) {
    asio::steady_timer timer(context, fault->delay);
    co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  const std::string header = headerText(answer.get().base());
  co_await asio::async_write(client, asio::buffer(header),
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    co_return false;
  }
  const bool relayed = co_await relayBody(client, *server, serverBuffer, answer, fault, watch);
  co_return relayed&& answer.keep_alive() && request.keep_alive();
}

// Relays the body piece by piece as it arrives (a watch never ends), in
// the framing the server chose; false when either side broke off.
asio::awaitable<bool> FaultProxy::Impl::relayBody(TlsStream& client, TlsStream& server,
                                                  beast::flat_buffer& serverBuffer,
                                                  http::response_parser<http::buffer_body>& answer,
                                                  const std::optional<FaultRule>& fault,
                                                  bool watch) {
  const bool chunked = answer.chunked();
  auto stream = open.end();
  if (watch) {
    stream = open.insert(open.end(), OpenStream{&client, &server, false});
  }
  const auto forget = [&] {
    if (stream != open.end()) {
      open.erase(stream);
      stream = open.end();
    }
  };
  std::array<char, 16 * 1024> piece;
  beast::error_code ec;
  int pieces = 0;
  while (!answer.is_done() && !stopping) {
    answer.get().body().data = piece.data();
    answer.get().body().size = piece.size();
    co_await http::async_read_some(server, serverBuffer, answer,
                                   asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    if (ec) {
      break;
    }
    const std::size_t size = piece.size() - answer.get().body().size;
    while (stream != open.end() && stream->stalled && !stopping) {
      asio::steady_timer wait(context, std::chrono::milliseconds(50));
      co_await wait.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (size == 0) {
      continue;
    }
    ++pieces;
    std::string frame(piece.data(), size);
    if (chunked) {
      char length[32];
      std::snprintf(length, sizeof length, "%zx\r\n", size);
      frame = length + frame + "\r\n";
    }
    if (fault && fault->fault == Fault::TruncateStream) {
      // The chunk's header promises `size` bytes; half of them come.
      frame.resize(frame.size() - size / 2 - 2);
      co_await asio::async_write(client, asio::buffer(frame),
                                 asio::redirect_error(asio::use_awaitable, ec));
      client.next_layer().socket().shutdown(tcp::socket::shutdown_both, ec);
      forget();
      co_return false;
    }
    co_await asio::async_write(client, asio::buffer(frame),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      break;
    }
    if (fault && fault->fault == Fault::ResetMidStream && pieces == 1) {
      reset(beast::get_lowest_layer(client).socket());
      forget();
      co_return false;
    }
  }
  forget();
  if (ec || stopping) {
    reset(beast::get_lowest_layer(client).socket());
    co_return false;
  }
  if (chunked) {
    static const std::string last = "0\r\n\r\n";
    co_await asio::async_write(client, asio::buffer(last),
                               asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return !ec;
}

std::string exceedsRate(const std::vector<ProxiedRequest>& requests, double qps, int burst,
                        int slack) {
  std::vector<Clock::time_point> times;
  for (const auto& request : requests) {
    times.push_back(request.at);
  }
  std::sort(times.begin(), times.end());
  for (std::size_t i = 0; i < times.size(); ++i) {
    for (std::size_t j = i; j < times.size(); ++j) {
      const double seconds = std::chrono::duration<double>(times[j] - times[i]).count();
      const double allowed = burst + qps * seconds + slack;
      if (static_cast<double>(j - i + 1) > allowed) {
        return std::to_string(j - i + 1) + " requests within " + std::to_string(seconds) +
               " s (allowed " + std::to_string(allowed) + ")";
      }
    }
  }
  return "";
}

}  // namespace gpuplacement::testing
