#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "kube/credentials.h"
#include "kube/transport.h"
#include "runtime/asio.h"
#include "runtime/clock.h"
#include "runtime/object_json.h"
#include "runtime/rate_limiter.h"

namespace gpuplacement::kube {

using json = nlohmann::json;

// A request the API server refused, or one that never got an answer
// (status 0). reason is the Kubernetes Status reason when there is one.
struct ApiError {
  unsigned status = 0;
  std::string reason;
  std::string message;
  std::optional<std::chrono::seconds> retryAfter;
  bool timedOut = false;

  bool notFound() const { return status == 404; }
  bool conflict() const { return status == 409; }
  bool alreadyExists() const { return status == 409 && reason == "AlreadyExists"; }
  bool gone() const { return status == 410; }
  bool forbidden() const { return status == 403; }
  std::string describe() const;
};

template <typename T>
using ApiResult = base::Result<T, ApiError>;

// Apply: server-side apply (the path names the fieldManager, and force).
enum class PatchType { Merge, Strategic, Json, Apply };

struct ClientOptions {
  // Client-side limit on requests per second; zero or less disables it.
  double qps = 50;
  int burst = 100;
  // Retries of 429, 503 and 504 answers (and of reads that got no answer).
  int maxRetries = 5;
  std::chrono::milliseconds requestTimeout{std::chrono::seconds(30)};
  std::chrono::milliseconds retryBase{200};
  std::chrono::seconds maxRetryAfter{30};
  // Sent as User-Agent (the API server's audit log records it); empty: the default.
  std::string userAgent;
};

// One finished HTTP exchange, for metrics. code 0: no answer.
struct RequestRecord {
  const char* verb;  // Kubernetes verb: get, list, watch, create, update, patch, delete
  unsigned code;
  std::chrono::nanoseconds latency;
};

// A Kubernetes REST client over a Transport: JSON in and out, credentials,
// a client-side QPS limit, and retries that honour Retry-After.
class KubeClient {
 public:
  KubeClient(std::unique_ptr<Transport> transport, std::unique_ptr<CredentialSource> credentials,
             ClientOptions options, const runtime::Clock& clock);

  // What of an answer is parsed: by default all but metadata.managedFields.
  using Keep = runtime::Keep;

  asio::awaitable<ApiResult<json>> get(std::string path, Keep keep = Keep::AllButManagedFields);
  // A body that is not JSON, such as a service's /metrics through the API
  // server's service proxy.
  asio::awaitable<ApiResult<std::string>> getText(std::string path);
  asio::awaitable<ApiResult<json>> list(std::string pathWithQuery);
  // The same, handing each item to `onItem` while parsing; the answer
  // comes back with an empty "items".
  asio::awaitable<ApiResult<json>> list(std::string pathWithQuery,
                                        const runtime::ListItemSink& onItem);
  asio::awaitable<ApiResult<json>> create(std::string path, const json& body);
  asio::awaitable<ApiResult<json>> update(std::string path, const json& body);
  asio::awaitable<ApiResult<json>> patch(std::string path, const json& body, PatchType type,
                                         Keep keep = Keep::AllButManagedFields);
  // The same with the body already JSON text (a held document is not
  // parsed again to be sent).
  asio::awaitable<ApiResult<json>> patchText(std::string path, std::string body, PatchType type,
                                             Keep keep = Keep::AllButManagedFields);
  asio::awaitable<ApiResult<json>> remove(std::string path);
  // Opens a watch; `path` carries the query (watch=1, resourceVersion, ...).
  // The stream times out after `idleTimeout` without a byte.
  asio::awaitable<ApiResult<std::unique_ptr<LineStream>>> watch(
      std::string path, std::chrono::milliseconds idleTimeout);

  void setObserver(std::function<void(const RequestRecord&)> observer) {
    observer_ = std::move(observer);
  }

 private:
  asio::awaitable<ApiResult<HttpResponse>> execute(const char* verb, HttpRequest request);
  // Parses the answer whole, or a list item by item when onItem is given.
  asio::awaitable<ApiResult<json>> executeJson(const char* verb, HttpRequest request,
                                               const runtime::ListItemSink* onItem = nullptr,
                                               Keep keep = Keep::AllButManagedFields);
  asio::awaitable<void> pace();
  asio::awaitable<void> sleep(std::chrono::nanoseconds duration);
  std::chrono::nanoseconds backoff(int attempt);
  void observe(const char* verb, unsigned code, runtime::MonotonicTime start);

  std::unique_ptr<Transport> transport_;
  std::unique_ptr<CredentialSource> credentials_;
  ClientOptions options_;
  const runtime::Clock& clock_;
  runtime::TokenBucket limiter_;
  std::minstd_rand jitter_;
  std::function<void(const RequestRecord&)> observer_;
};

// Reads a Kubernetes Status (or any body) into an ApiError.
ApiError apiErrorFrom(unsigned status, const std::string& body,
                      std::optional<std::chrono::seconds> retryAfter);

}  // namespace gpuplacement::kube
