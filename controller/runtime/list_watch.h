#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "runtime/asio.h"
#include "runtime/object_json.h"

namespace gpuplacement::runtime {

// What the list/watch machinery needs from a Kubernetes client, and no
// more; kube/ implements it, tests can fake it.
struct ListWatchError {
  unsigned status = 0;  // HTTP status; 0 when there was no answer
  std::string message;
  bool gone() const { return status == 410; }
};

struct ListPage {
  std::string resourceVersion;
  std::string continueToken;
};

class EventStream {
 public:
  virtual ~EventStream() = default;
  // The next line of the watch (one JSON event), nullopt when the server
  // ended the watch normally.
  virtual asio::awaitable<base::Result<std::optional<std::string>, ListWatchError>> next() = 0;
  virtual void close() = 0;
};

class ListWatchClient {
 public:
  virtual ~ListWatchClient() = default;
  virtual asio::awaitable<base::Result<ListPage, ListWatchError>> list(
      const std::string& path, const std::string& continueToken, std::size_t limit,
      const ListItemSink& onItem) = 0;
  virtual asio::awaitable<base::Result<std::unique_ptr<EventStream>, ListWatchError>> watch(
      const std::string& path, const std::string& resourceVersion,
      std::chrono::seconds timeout) = 0;
  // A streaming list: a watch that first sends every current object as
  // ADDED, then a BOOKMARK annotated k8s.io/initial-events-end: "true".
  virtual asio::awaitable<base::Result<std::unique_ptr<EventStream>, ListWatchError>> streamList(
      const std::string& path, std::chrono::seconds timeout) = 0;
};

}  // namespace gpuplacement::runtime
