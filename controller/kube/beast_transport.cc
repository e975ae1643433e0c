#include "kube/beast_transport.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/version.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace gpuplacement::kube {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

const char* methodName(Method method) {
  switch (method) {
    case Method::Get:
      return "GET";
    case Method::Post:
      return "POST";
    case Method::Put:
      return "PUT";
    case Method::Patch:
      return "PATCH";
    case Method::Delete:
      return "DELETE";
  }
  return "GET";
}

namespace {

http::verb beastVerb(Method method) {
  switch (method) {
    case Method::Get:
      return http::verb::get;
    case Method::Post:
      return http::verb::post;
    case Method::Put:
      return http::verb::put;
    case Method::Patch:
      return http::verb::patch;
    case Method::Delete:
      return http::verb::delete_;
  }
  return http::verb::get;
}

bool isIpLiteral(const std::string& host) {
  beast::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::optional<std::chrono::seconds> parseRetryAfter(beast::string_view value) {
  unsigned seconds = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || end != value.data() + value.size()) {
    return std::nullopt;  // an HTTP date; the API server never sends one
  }
  return std::chrono::seconds(seconds);
}

std::string describe(const beast::error_code& ec) {
  if (ec == beast::error::timeout) {
    return "timed out";
  }
  return ec.message();
}

// A connection that failed this way never delivered the request to a live
// peer: the server had closed the idle keep-alive connection first.
bool isStaleConnectionError(const beast::error_code& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == ssl::error::stream_truncated;
}

}  // namespace

base::Result<Endpoint> parseServerUrl(const std::string& url) {
  Endpoint endpoint;
  std::string rest;
  if (url.rfind("https://", 0) == 0) {
    rest = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    endpoint.tls = false;
    rest = url.substr(7);
  } else {
    return base::Error{"server", "\"" + url + "\" must start with https:// or http://"};
  }
  const auto slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) {
    endpoint.pathPrefix = rest.substr(slash);
    while (!endpoint.pathPrefix.empty() && endpoint.pathPrefix.back() == '/') {
      endpoint.pathPrefix.pop_back();
    }
  }
  std::string port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:6443
    const auto close = authority.find(']');
    if (close == std::string::npos) {
      return base::Error{"server", "\"" + url + "\" has an unterminated IPv6 address"};
    }
    endpoint.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') {
        return base::Error{"server", "\"" + url + "\" has text after the IPv6 address"};
      }
      port = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.rfind(':');
    endpoint.host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
    }
  }
  if (endpoint.host.empty()) {
    return base::Error{"server", "\"" + url + "\" has no host"};
  }
  if (!port.empty()) {
    unsigned number = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (ec != std::errc() || end != port.data() + port.size() || number == 0 || number > 65535) {
      return base::Error{"server", "\"" + url + "\" has an invalid port"};
    }
  }
  endpoint.port = port.empty() ? (endpoint.tls ? "443" : "80") : port;
  return endpoint;
}

// One keep-alive connection, plain or TLS. The buffer holds bytes read past
// the last message and belongs with the socket.
class Connection {
 public:
  virtual ~Connection() = default;
  virtual asio::awaitable<beast::error_code> connect(const tcp::resolver::results_type& addresses,
                                                     std::chrono::milliseconds timeout) = 0;
  virtual asio::awaitable<beast::error_code> write(http::request<http::string_body>& request) = 0;
  virtual asio::awaitable<beast::error_code> read(
      http::response_parser<http::string_body>& parser) = 0;
  virtual asio::awaitable<beast::error_code> readHeader(
      http::response_parser<http::buffer_body>& parser) = 0;
  virtual asio::awaitable<beast::error_code> readSome(
      http::response_parser<http::buffer_body>& parser) = 0;
  virtual void expiresAfter(std::chrono::milliseconds timeout) = 0;
  virtual void close() = 0;

  Clock::time_point lastUsed{};

 protected:
  beast::flat_buffer buffer_;
};

namespace {

template <typename Stream>
class StreamConnection final : public Connection {
 public:
  template <typename... Args>
  explicit StreamConnection(Args&&... args) : stream_(std::forward<Args>(args)...) {}

  asio::awaitable<beast::error_code> connect(const tcp::resolver::results_type& addresses,
                                             std::chrono::milliseconds timeout) override {
    beast::error_code ec;
    auto& tcpStream = beast::get_lowest_layer(stream_);
    tcpStream.expires_after(timeout);
    co_await tcpStream.async_connect(addresses, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      co_return ec;
    }
    tcpStream.socket().set_option(tcp::no_delay(true), ec);
    if constexpr (!std::is_same_v<Stream, beast::tcp_stream>) {
      co_await stream_.async_handshake(ssl::stream_base::client,
                                       asio::redirect_error(asio::use_awaitable, ec));
    }
    co_return ec;
  }

  asio::awaitable<beast::error_code> write(http::request<http::string_body>& request) override {
    beast::error_code ec;
    co_await http::async_write(stream_, request, asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  asio::awaitable<beast::error_code> read(
      http::response_parser<http::string_body>& parser) override {
    beast::error_code ec;
    co_await http::async_read(stream_, buffer_, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  asio::awaitable<beast::error_code> readHeader(
      http::response_parser<http::buffer_body>& parser) override {
    beast::error_code ec;
    co_await http::async_read_header(stream_, buffer_, parser,
                                     asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  asio::awaitable<beast::error_code> readSome(
      http::response_parser<http::buffer_body>& parser) override {
    beast::error_code ec;
    co_await http::async_read_some(stream_, buffer_, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::need_buffer) {
      ec = {};
    }
    co_return ec;
  }

  void expiresAfter(std::chrono::milliseconds timeout) override {
    beast::get_lowest_layer(stream_).expires_after(timeout);
  }

  void close() override {
    auto& socket = beast::get_lowest_layer(stream_).socket();
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  Stream& stream() { return stream_; }

 private:
  Stream stream_;
};

using PlainConnection = StreamConnection<beast::tcp_stream>;
using TlsConnection = StreamConnection<beast::ssl_stream<beast::tcp_stream>>;

class BeastLineStream final : public LineStream {
 public:
  BeastLineStream(std::unique_ptr<Connection> connection,
                  std::unique_ptr<http::response_parser<http::buffer_body>> parser,
                  std::chrono::milliseconds idleTimeout, std::size_t maxLineBytes)
      : connection_(std::move(connection)),
        parser_(std::move(parser)),
        idleTimeout_(idleTimeout),
        maxLineBytes_(maxLineBytes),
        chunk_(64 * 1024) {}

  ~BeastLineStream() override { close(); }

  asio::awaitable<TransportResult<std::optional<std::string>>> nextLine() override {
    for (;;) {
      const auto newline = pending_.find('\n', scanned_);
      if (newline != std::string::npos) {
        std::string line = pending_.substr(consumed_, newline - consumed_);
        consumed_ = scanned_ = newline + 1;
        if (consumed_ > pending_.size() / 2) {
          pending_.erase(0, consumed_);
          consumed_ = scanned_ = 0;
        }
        co_return std::optional<std::string>(std::move(line));
      }
      scanned_ = pending_.size();
      if (closed_) {
        co_return TransportError{"stream closed"};
      }
      if (parser_->is_done()) {
        if (consumed_ < pending_.size()) {
          std::string last = pending_.substr(consumed_);
          pending_.clear();
          consumed_ = scanned_ = 0;
          co_return std::optional<std::string>(std::move(last));
        }
        co_return std::optional<std::string>();
      }
      if (pending_.size() - consumed_ > maxLineBytes_) {
        close();
        co_return TransportError{"a line of the response exceeds " + std::to_string(maxLineBytes_) +
                                 " bytes"};
      }
      auto& body = parser_->get().body();
      body.data = chunk_.data();
      body.size = chunk_.size();
      connection_->expiresAfter(idleTimeout_);
      const auto ec = co_await connection_->readSome(*parser_);
      if (ec) {
        close();
        co_return TransportError{"reading the stream: " + describe(ec),
                                 ec == beast::error::timeout};
      }
      pending_.append(chunk_.data(), chunk_.size() - body.size);
    }
  }

  void close() override {
    if (!closed_) {
      closed_ = true;
      connection_->close();
    }
  }

 private:
  std::unique_ptr<Connection> connection_;
  std::unique_ptr<http::response_parser<http::buffer_body>> parser_;
  std::chrono::milliseconds idleTimeout_;
  std::size_t maxLineBytes_;
  std::vector<char> chunk_;
  std::string pending_;
  std::size_t consumed_ = 0;  // bytes of pending_ already returned
  std::size_t scanned_ = 0;   // bytes of pending_ known to hold no newline
  bool closed_ = false;
};

}  // namespace

struct BeastTransport::Impl {
  explicit Impl(asio::any_io_executor executor)
      : resolver(executor), sweeper(executor), tls(ssl::context::tls_client) {}
  tcp::resolver resolver;
  asio::steady_timer sweeper;
  bool sweeping = false;
  ssl::context tls;
  std::string verifyName;  // the name or IP the server certificate must carry
  bool verify = true;
};

BeastTransport::BeastTransport(asio::any_io_executor executor, Endpoint endpoint,
                               TransportOptions options)
    : executor_(executor),
      endpoint_(std::move(endpoint)),
      options_(std::move(options)),
      impl_(std::make_unique<Impl>(executor)) {}

BeastTransport::~BeastTransport() {
  for (auto& connection : idle_) {
    connection->close();
  }
}

base::Result<std::unique_ptr<BeastTransport>, TransportError> BeastTransport::create(
    asio::any_io_executor executor, Endpoint endpoint, const TlsOptions& tls,
    TransportOptions options) {
  std::unique_ptr<BeastTransport> transport(
      new BeastTransport(executor, std::move(endpoint), std::move(options)));
  if (!transport->endpoint_.tls) {
    return transport;
  }
  auto& context = transport->impl_->tls;
  beast::error_code ec;
  context.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                      ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  if (tls.insecureSkipVerify) {
    transport->impl_->verify = false;
    context.set_verify_mode(ssl::verify_none);
  } else {
    context.set_verify_mode(ssl::verify_peer);
    if (tls.caPem.empty()) {
      context.set_default_verify_paths(ec);
    } else {
      context.add_certificate_authority(asio::buffer(tls.caPem), ec);
    }
    if (ec) {
      return TransportError{"loading the certificate authority: " + ec.message()};
    }
  }
  if (!tls.clientCertPem.empty() || !tls.clientKeyPem.empty()) {
    context.use_certificate_chain(asio::buffer(tls.clientCertPem), ec);
    if (ec) {
      return TransportError{"loading the client certificate: " + ec.message()};
    }
    context.use_private_key(asio::buffer(tls.clientKeyPem), ssl::context::pem, ec);
    if (ec) {
      return TransportError{"loading the client key: " + ec.message()};
    }
  }
  transport->impl_->verifyName =
      tls.serverName.empty() ? transport->endpoint_.host : tls.serverName;
  return transport;
}

asio::awaitable<TransportResult<std::unique_ptr<Connection>>> BeastTransport::connect(
    std::chrono::milliseconds timeout) {
  beast::error_code ec;
  auto addresses = co_await impl_->resolver.async_resolve(
      endpoint_.host, endpoint_.port, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) {
    co_return TransportError{"resolving " + endpoint_.host + ": " + ec.message()};
  }
  std::unique_ptr<Connection> connection;
  SSL* tlsHandle = nullptr;
  if (endpoint_.tls) {
    auto tlsConnection = std::make_unique<TlsConnection>(executor_, impl_->tls);
    SSL* handle = tlsConnection->stream().native_handle();
    tlsHandle = handle;
    const std::string& name = impl_->verifyName;
    const bool nameIsIp = isIpLiteral(name);
    if (!nameIsIp) {
      SSL_set_tlsext_host_name(handle, name.c_str());
    }
    if (impl_->verify) {
      const int set = nameIsIp ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(handle), name.c_str())
                               : SSL_set1_host(handle, name.c_str());
      if (set != 1) {
        co_return TransportError{"cannot verify the server as \"" + name + "\""};
      }
    }
    connection = std::move(tlsConnection);
  } else {
    connection = std::make_unique<PlainConnection>(executor_);
  }
  ec = co_await connection->connect(addresses, timeout);
  if (ec) {
    std::string why = describe(ec);
    // OpenSSL's error says only "certificate verify failed"; the
    // verification result says why (wrong CA, host name mismatch, expired).
    if (tlsHandle && SSL_get_verify_result(tlsHandle) != X509_V_OK) {
      why += ": " + std::string(X509_verify_cert_error_string(SSL_get_verify_result(tlsHandle)));
      if (SSL_get_verify_result(tlsHandle) == X509_V_ERR_HOSTNAME_MISMATCH) {
        why += " (the certificate is not for \"" + impl_->verifyName + "\")";
      }
    }
    co_return TransportError{"connecting to " + endpoint_.host + ":" + endpoint_.port + ": " + why,
                             ec == beast::error::timeout};
  }
  co_return std::move(connection);
}

std::unique_ptr<Connection> BeastTransport::takeIdle() {
  const auto now = Clock::now();
  while (!idle_.empty()) {
    auto connection = std::move(idle_.back());
    idle_.pop_back();
    if (now - connection->lastUsed < options_.idleConnectionTtl) {
      return connection;
    }
    connection->close();
  }
  return nullptr;
}

void BeastTransport::release(std::unique_ptr<Connection> connection, bool keepAlive) {
  if (!keepAlive || idle_.size() >= options_.maxIdleConnections) {
    connection->close();
    return;
  }
  connection->lastUsed = Clock::now();
  idle_.push_back(std::move(connection));
  scheduleSweep();
}

void BeastTransport::scheduleSweep() {
  if (impl_->sweeping || idle_.empty()) {
    return;
  }
  impl_->sweeping = true;
  impl_->sweeper.expires_at(idle_.front()->lastUsed + options_.idleConnectionTtl);
  impl_->sweeper.async_wait([this, alive = std::weak_ptr<char>(alive_)](beast::error_code ec) {
    if (ec || alive.expired()) {
      return;
    }
    impl_->sweeping = false;
    closeExpired();
    scheduleSweep();
  });
}

void BeastTransport::closeExpired() {
  const auto now = Clock::now();
  const auto fresh = std::find_if(idle_.begin(), idle_.end(), [&](const auto& connection) {
    return now - connection->lastUsed < options_.idleConnectionTtl;
  });
  for (auto it = idle_.begin(); it != fresh; ++it) {
    (*it)->close();
  }
  idle_.erase(idle_.begin(), fresh);
}

namespace {

http::request<http::string_body> buildRequest(const HttpRequest& request, const Endpoint& endpoint,
                                              const std::string& userAgent) {
  http::request<http::string_body> message{beastVerb(request.method),
                                           endpoint.pathPrefix + request.target, 11};
  message.set(http::field::host, endpoint.host);
  message.set(http::field::user_agent, userAgent);
  message.set(http::field::accept, "application/json");
  if (!request.authorization.empty()) {
    message.set(http::field::authorization, request.authorization);
  }
  if (!request.body.empty() || request.method == Method::Post || request.method == Method::Put ||
      request.method == Method::Patch) {
    message.set(http::field::content_type,
                request.contentType.empty() ? "application/json" : request.contentType);
    message.body() = request.body;
    message.prepare_payload();
  }
  message.keep_alive(true);
  return message;
}

template <typename Fields>
std::optional<std::chrono::seconds> retryAfterOf(const Fields& fields) {
  const auto it = fields.find(http::field::retry_after);
  if (it == fields.end()) {
    return std::nullopt;
  }
  return parseRetryAfter(it->value());
}

}  // namespace

asio::awaitable<TransportResult<HttpResponse>> BeastTransport::send(HttpRequest request) {
  auto message = buildRequest(request, endpoint_, options_.userAgent);
  for (int attempt = 0;; ++attempt) {
    auto connection = attempt == 0 ? takeIdle() : nullptr;
    const bool reused = connection != nullptr;
    if (!connection) {
      auto connected = co_await connect(request.timeout);
      if (!connected) {
        co_return std::move(connected).error();
      }
      connection = std::move(connected).value();
    }
    connection->expiresAfter(request.timeout);
    auto ec = co_await connection->write(message);
    const bool written = !ec;
    http::response_parser<http::string_body> parser;
    parser.body_limit(options_.maxBodyBytes);
    if (!ec) {
      ec = co_await connection->read(parser);
    }
    if (ec) {
      connection->close();
      // A keep-alive connection the server had closed: send again on a new
      // one. Only reads are resent once the request went out, since the
      // server may have acted on a write (as Go's net/http does).
      const bool resend =
          reused && isStaleConnectionError(ec) && (!written || request.method == Method::Get);
      if (resend) {
        continue;
      }
      co_return TransportError{
          std::string(methodName(request.method)) + " " + request.target + ": " + describe(ec),
          ec == beast::error::timeout};
    }
    auto response = parser.release();
    HttpResponse result;
    result.status = response.result_int();
    result.retryAfter = retryAfterOf(response);
    result.body = std::move(response.body());
    release(std::move(connection), response.keep_alive());
    co_return result;
  }
}

asio::awaitable<TransportResult<StreamResponse>> BeastTransport::openStream(HttpRequest request) {
  auto message = buildRequest(request, endpoint_, options_.userAgent);
  // A stream holds its connection for its whole life, so it gets a new one.
  auto connected = co_await connect(request.timeout);
  if (!connected) {
    co_return std::move(connected).error();
  }
  auto connection = std::move(connected).value();
  connection->expiresAfter(request.timeout);
  auto ec = co_await connection->write(message);
  auto parser = std::make_unique<http::response_parser<http::buffer_body>>();
  // A watch body never ends by size. Not boost::none: Boost 1.74 compares
  // a Content-Length against an empty limit as "exceeded", which turned
  // every error answer to a watch into a transport error.
  parser->body_limit(std::numeric_limits<std::uint64_t>::max());
  if (!ec) {
    ec = co_await connection->readHeader(*parser);
  }
  if (ec) {
    connection->close();
    co_return TransportError{"opening " + request.target + ": " + describe(ec),
                             ec == beast::error::timeout};
  }
  StreamResponse result;
  result.status = parser->get().result_int();
  result.retryAfter = retryAfterOf(parser->get());
  auto stream = std::make_unique<BeastLineStream>(std::move(connection), std::move(parser),
                                                  request.timeout, options_.maxLineBytes);
  if (result.status == 200) {
    result.stream = std::move(stream);
    co_return result;
  }
  // An error answer: read its (small) body, usually a Kubernetes Status.
  for (;;) {
    auto line = co_await stream->nextLine();
    if (!line || !line.value()) {
      break;
    }
    result.errorBody += *line.value();
    if (result.errorBody.size() > options_.maxBodyBytes) {
      break;
    }
  }
  co_return result;
}

}  // namespace gpuplacement::kube
