#include "kube/client.h"

#include "base/json_access.h"
#include "runtime/object_json.h"

namespace gpuplacement::kube {
namespace {

const char* contentTypeOf(PatchType type) {
  switch (type) {
    case PatchType::Merge:
      return "application/merge-patch+json";
    case PatchType::Strategic:
      return "application/strategic-merge-patch+json";
    case PatchType::Json:
      return "application/json-patch+json";
    case PatchType::Apply:
      return "application/apply-patch+yaml";  // JSON is YAML
  }
  return "application/merge-patch+json";
}

HttpRequest makeRequest(Method method, std::string target, std::string body = {},
                        std::string contentType = {}) {
  HttpRequest request;
  request.method = method;
  request.target = std::move(target);
  request.body = std::move(body);
  request.contentType = std::move(contentType);
  return request;
}

ApiError noAnswer(std::string message, bool timedOut = false, std::string reason = {}) {
  ApiError error;
  error.reason = std::move(reason);
  error.message = std::move(message);
  error.timedOut = timedOut;
  return error;
}

// The server did not act on these: safe to send again, whatever the verb.
bool isThrottled(unsigned status) {
  return status == 429 || status == 503 || status == 504;
}

}  // namespace

std::string ApiError::describe() const {
  std::string text = status == 0 ? "no answer" : "HTTP " + std::to_string(status);
  if (!reason.empty()) {
    text += " " + reason;
  }
  if (!message.empty()) {
    text += ": " + message;
  }
  return text;
}

ApiError apiErrorFrom(unsigned status, const std::string& body,
                      std::optional<std::chrono::seconds> retryAfter) {
  ApiError error;
  error.status = status;
  error.retryAfter = retryAfter;
  const auto document = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (base::stringMember(document, "kind") == "Status") {
    error.reason = base::stringMember(document, "reason");
    error.message = base::stringMember(document, "message");
  } else {
    error.message = body.substr(0, 512);
  }
  return error;
}

KubeClient::KubeClient(std::unique_ptr<Transport> transport,
                       std::unique_ptr<CredentialSource> credentials, ClientOptions options,
                       const runtime::Clock& clock)
    : transport_(std::move(transport)),
      credentials_(std::move(credentials)),
      options_(options),
      clock_(clock),
      limiter_(options.qps, options.burst),
      jitter_(std::random_device{}()) {}

asio::awaitable<void> KubeClient::sleep(std::chrono::nanoseconds duration) {
  if (duration <= std::chrono::nanoseconds(0)) {
    co_return;
  }
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_after(duration);
  boost::system::error_code ignored;
  co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
}

asio::awaitable<void> KubeClient::pace() {
  co_await sleep(limiter_.reserve(clock_.monotonicNow()));
}

// Exponential from retryBase, with full jitter so that many clients retrying
// after the same outage spread out.
std::chrono::nanoseconds KubeClient::backoff(int attempt) {
  const auto ceiling = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.retryBase) *
                       (1LL << std::min(attempt, 8));
  std::uniform_int_distribution<std::int64_t> pick(ceiling.count() / 2, ceiling.count());
  return std::chrono::nanoseconds(pick(jitter_));
}

void KubeClient::observe(const char* verb, unsigned code, runtime::MonotonicTime start) {
  if (observer_) {
    observer_(RequestRecord{verb, code, clock_.monotonicNow() - start});
  }
}

asio::awaitable<ApiResult<HttpResponse>> KubeClient::execute(const char* verb,
                                                             HttpRequest request) {
  request.timeout = options_.requestTimeout;
  const bool idempotent = request.method == Method::Get;
  bool reauthenticated = false;
  for (int attempt = 0;; ++attempt) {
    co_await pace();
    auto authorization = co_await credentials_->authorization();
    if (!authorization) {
      co_return noAnswer(authorization.error().describe(), false, "Unauthorized");
    }
    request.authorization = std::move(authorization).value();
    const auto start = clock_.monotonicNow();
    auto response = co_await transport_->send(request);
    if (!response) {
      observe(verb, 0, start);
      if (idempotent && attempt < options_.maxRetries) {
        co_await sleep(backoff(attempt));
        continue;
      }
      co_return noAnswer(response.error().message, response.error().timedOut);
    }
    observe(verb, response->status, start);
    if (response->status == 401 && !reauthenticated) {
      credentials_->invalidate();  // an expired exec or rotated token
      reauthenticated = true;
      continue;
    }
    if (isThrottled(response->status) && attempt < options_.maxRetries) {
      auto delay = backoff(attempt);
      if (response->retryAfter) {
        delay = std::max<std::chrono::nanoseconds>(
            delay, std::min(*response->retryAfter, options_.maxRetryAfter));
      }
      co_await sleep(delay);
      continue;
    }
    if (response->status >= 200 && response->status < 300) {
      co_return std::move(response).value();
    }
    co_return apiErrorFrom(response->status, response->body, response->retryAfter);
  }
}

asio::awaitable<ApiResult<json>> KubeClient::executeJson(const char* verb, HttpRequest request,
                                                         const runtime::ListItemSink* onItem,
                                                         Keep keep) {
  auto response = co_await execute(verb, std::move(request));
  if (!response) {
    co_return std::move(response).error();
  }
  auto document = onItem ? runtime::parseList(response->body, *onItem)
                         : runtime::parseObject(response->body, keep);
  if (document.is_discarded()) {
    ApiError error = noAnswer("the server's answer is not JSON", false, "InvalidResponse");
    error.status = response->status;
    co_return error;
  }
  co_return document;
}

asio::awaitable<ApiResult<json>> KubeClient::get(std::string path, Keep keep) {
  co_return co_await executeJson("get", makeRequest(Method::Get, std::move(path)), nullptr, keep);
}

asio::awaitable<ApiResult<std::string>> KubeClient::getText(std::string path) {
  auto response = co_await execute("get", makeRequest(Method::Get, std::move(path)));
  if (!response) {
    co_return std::move(response).error();
  }
  co_return std::move(response->body);
}

asio::awaitable<ApiResult<json>> KubeClient::list(std::string pathWithQuery) {
  co_return co_await executeJson("list", makeRequest(Method::Get, std::move(pathWithQuery)));
}

asio::awaitable<ApiResult<json>> KubeClient::list(std::string pathWithQuery,
                                                  const runtime::ListItemSink& onItem) {
  co_return co_await executeJson("list", makeRequest(Method::Get, std::move(pathWithQuery)),
                                 &onItem);
}

asio::awaitable<ApiResult<json>> KubeClient::create(std::string path, const json& body) {
  co_return co_await executeJson("create", makeRequest(Method::Post, std::move(path), body.dump()));
}

asio::awaitable<ApiResult<json>> KubeClient::update(std::string path, const json& body) {
  co_return co_await executeJson("update", makeRequest(Method::Put, std::move(path), body.dump()));
}

asio::awaitable<ApiResult<json>> KubeClient::patch(std::string path, const json& body,
                                                   PatchType type, Keep keep) {
  co_return co_await executeJson(
      "patch", makeRequest(Method::Patch, std::move(path), body.dump(), contentTypeOf(type)),
      nullptr, keep);
}

asio::awaitable<ApiResult<json>> KubeClient::patchText(std::string path, std::string body,
                                                       PatchType type, Keep keep) {
  co_return co_await executeJson(
      "patch", makeRequest(Method::Patch, std::move(path), std::move(body), contentTypeOf(type)),
      nullptr, keep);
}

asio::awaitable<ApiResult<json>> KubeClient::remove(std::string path) {
  co_return co_await executeJson("delete", makeRequest(Method::Delete, std::move(path)));
}

asio::awaitable<ApiResult<std::unique_ptr<LineStream>>> KubeClient::watch(
    std::string path, std::chrono::milliseconds idleTimeout) {
  co_await pace();
  auto authorization = co_await credentials_->authorization();
  if (!authorization) {
    co_return noAnswer(authorization.error().describe(), false, "Unauthorized");
  }
  HttpRequest request = makeRequest(Method::Get, std::move(path));
  request.authorization = std::move(authorization).value();
  request.timeout = idleTimeout;
  const auto start = clock_.monotonicNow();
  auto opened = co_await transport_->openStream(std::move(request));
  if (!opened) {
    observe("watch", 0, start);
    co_return noAnswer(opened.error().message, opened.error().timedOut);
  }
  observe("watch", opened->status, start);
  if (opened->status == 401) {
    credentials_->invalidate();
  }
  if (opened->status != 200) {
    co_return apiErrorFrom(opened->status, opened->errorBody, opened->retryAfter);
  }
  co_return std::move(opened->stream);
}

}  // namespace gpuplacement::kube
