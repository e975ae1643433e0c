#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "runtime/asio.h"

namespace gpuplacement::kube {

enum class Method { Get, Post, Put, Patch, Delete };
const char* methodName(Method method);

struct HttpRequest {
  Method method = Method::Get;
  // Path and query, e.g. "/api/v1/namespaces?limit=500".
  std::string target;
  std::string body;
  std::string contentType;
  std::string authorization;
  // For send(): the whole exchange. For openStream(): the headers, then each
  // read, so a quiet stream ends after this long without a byte.
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;
  // From a Retry-After header given in seconds (what the API server sends).
  std::optional<std::chrono::seconds> retryAfter;
};

// The request never got an HTTP answer: refused, reset, TLS failure, timeout.
struct TransportError {
  std::string message;
  bool timedOut = false;
};

template <typename T>
using TransportResult = base::Result<T, TransportError>;

// A response body read line by line, as watch streams are.
class LineStream {
 public:
  virtual ~LineStream() = default;
  // The next line without its newline; nullopt once the body has ended.
  virtual asio::awaitable<TransportResult<std::optional<std::string>>> nextLine() = 0;
  // Ends the stream; a pending nextLine() returns an error.
  virtual void close() = 0;
};

struct StreamResponse {
  unsigned status = 0;
  // Set when status is 200.
  std::unique_ptr<LineStream> stream;
  // The whole body otherwise, usually a Kubernetes Status.
  std::string errorBody;
  std::optional<std::chrono::seconds> retryAfter;
};

// The operator's only way to reach the API server: small enough to fake for
// fault injection, with the HTTP library kept behind it.
class Transport {
 public:
  virtual ~Transport() = default;
  virtual asio::awaitable<TransportResult<HttpResponse>> send(HttpRequest request) = 0;
  virtual asio::awaitable<TransportResult<StreamResponse>> openStream(HttpRequest request) = 0;
};

}  // namespace gpuplacement::kube
