#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "runtime/asio.h"

namespace gpuplacement::runtime {

// What the list/watch machinery needs from a Kubernetes client, and no
// more; kube/ implements it, tests can fake it.
struct ListWatchError {
  unsigned status = 0;  // HTTP status; 0 when there was no answer
  std::string message;
  bool gone() const { return status == 410; }
};

struct ListPage {
  nlohmann::json items;  // array of objects
  std::string resourceVersion;
  std::string continueToken;
};

class EventStream {
 public:
  virtual ~EventStream() = default;
  // The next line of the watch (one JSON event), nullopt when the server
  // ended the watch normally.
  virtual asio::awaitable<core::Result<std::optional<std::string>, ListWatchError>> next() = 0;
  virtual void close() = 0;
};

class ListWatchClient {
 public:
  virtual ~ListWatchClient() = default;
  virtual asio::awaitable<core::Result<ListPage, ListWatchError>> list(
      const std::string& path, const std::string& continueToken, std::size_t limit) = 0;
  virtual asio::awaitable<core::Result<std::unique_ptr<EventStream>, ListWatchError>> watch(
      const std::string& path, const std::string& resourceVersion,
      std::chrono::seconds timeout) = 0;
};

}  // namespace gpuplacement::runtime
