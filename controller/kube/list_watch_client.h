#pragma once

#include "kube/client.h"
#include "runtime/list_watch.h"

namespace gpuplacement::kube {

// Percent-encodes a query parameter value (continue tokens are base64).
std::string urlEncode(const std::string& value);

// The informers' view of the API server, over KubeClient: streaming and
// paged LIST, WATCH with bookmarks and a server-side timeout.
class KubeListWatchClient final : public runtime::ListWatchClient {
 public:
  explicit KubeListWatchClient(KubeClient& client) : client_(client) {}

  asio::awaitable<base::Result<runtime::ListPage, runtime::ListWatchError>> list(
      const std::string& path, const std::string& continueToken, std::size_t limit,
      const runtime::ListItemSink& onItem) override;
  asio::awaitable<base::Result<std::unique_ptr<runtime::EventStream>, runtime::ListWatchError>>
  watch(const std::string& path, const std::string& resourceVersion,
        std::chrono::seconds timeout) override;
  asio::awaitable<base::Result<std::unique_ptr<runtime::EventStream>, runtime::ListWatchError>>
  streamList(const std::string& path, std::chrono::seconds timeout) override;

 private:
  asio::awaitable<base::Result<std::unique_ptr<runtime::EventStream>, runtime::ListWatchError>>
  openWatch(const std::string& target, std::chrono::seconds timeout);

  KubeClient& client_;
};

}  // namespace gpuplacement::kube
