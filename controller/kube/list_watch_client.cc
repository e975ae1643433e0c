#include "kube/list_watch_client.h"

#include <cctype>
#include <cstdio>

#include "base/json_access.h"

namespace gpuplacement::kube {
namespace {

runtime::ListWatchError toListWatchError(const ApiError& error) {
  return runtime::ListWatchError{error.status, error.describe()};
}

class KubeEventStream final : public runtime::EventStream {
 public:
  explicit KubeEventStream(std::unique_ptr<LineStream> stream) : stream_(std::move(stream)) {}

  asio::awaitable<base::Result<std::optional<std::string>, runtime::ListWatchError>> next()
      override {
    auto line = co_await stream_->nextLine();
    if (!line) {
      co_return runtime::ListWatchError{0, line.error().message};
    }
    co_return std::move(line).value();
  }

  void close() override { stream_->close(); }

 private:
  std::unique_ptr<LineStream> stream_;
};

}  // namespace

std::string urlEncode(const std::string& value) {
  std::string encoded;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      encoded.push_back(static_cast<char>(c));
    } else {
      char escape[4];
      std::snprintf(escape, sizeof escape, "%%%02X", c);
      encoded += escape;
    }
  }
  return encoded;
}

namespace {

// The path's own query (a selector) comes first; ours is added to it.
std::string withQuery(const std::string& path, const std::string& query) {
  return path + (path.find('?') == std::string::npos ? "?" : "&") + query;
}

}  // namespace

asio::awaitable<base::Result<runtime::ListPage, runtime::ListWatchError>> KubeListWatchClient::list(
    const std::string& path, const std::string& continueToken, std::size_t limit,
    const runtime::ListItemSink& onItem) {
  std::string target = withQuery(path, "limit=" + std::to_string(limit));
  if (!continueToken.empty()) {
    target += "&continue=" + urlEncode(continueToken);
  }
  auto response = co_await client_.list(target, onItem);
  if (!response) {
    co_return toListWatchError(response.error());
  }
  const auto& document = *response;
  runtime::ListPage page;
  if (!document.is_object() || !document.contains("items") || !document["items"].is_array()) {
    co_return runtime::ListWatchError{0, "the list answer has no items"};
  }
  if (const auto metadata = document.find("metadata");
      metadata != document.end() && metadata->is_object()) {
    page.resourceVersion = base::stringMember(*metadata, "resourceVersion");
    page.continueToken = base::stringMember(*metadata, "continue");
  }
  co_return page;
}

asio::awaitable<base::Result<std::unique_ptr<runtime::EventStream>, runtime::ListWatchError>>
KubeListWatchClient::watch(const std::string& path, const std::string& resourceVersion,
                           std::chrono::seconds timeout) {
  const std::string target = withQuery(
      path, "watch=1&allowWatchBookmarks=true&resourceVersion=" + urlEncode(resourceVersion) +
                "&timeoutSeconds=" + std::to_string(timeout.count()));
  co_return co_await openWatch(target, timeout);
}

asio::awaitable<base::Result<std::unique_ptr<runtime::EventStream>, runtime::ListWatchError>>
KubeListWatchClient::streamList(const std::string& path, std::chrono::seconds timeout) {
  // No resourceVersion with NotOlderThan: a consistent start, as fresh as
  // a quorum read.
  const std::string target =
      withQuery(path,
                "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                "&allowWatchBookmarks=true&timeoutSeconds=" +
                    std::to_string(timeout.count()));
  co_return co_await openWatch(target, timeout);
}

asio::awaitable<base::Result<std::unique_ptr<runtime::EventStream>, runtime::ListWatchError>>
KubeListWatchClient::openWatch(const std::string& target, std::chrono::seconds timeout) {
  // The server ends the watch after `timeout`; give it 30 s more before the
  // client decides the connection is dead.
  auto stream = co_await client_.watch(target, timeout + std::chrono::seconds(30));
  if (!stream) {
    co_return toListWatchError(stream.error());
  }
  co_return std::unique_ptr<runtime::EventStream>(
      std::make_unique<KubeEventStream>(std::move(stream).value()));
}

}  // namespace gpuplacement::kube
