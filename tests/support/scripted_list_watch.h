#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/list_watch.h"

namespace gpuplacement::testing {

using runtime::EventStream;
using runtime::ListPage;
using runtime::ListWatchError;

// The bookmark that ends a streaming list's initial events (sendInitialEvents),
// as a watch line.
inline std::string initialEventsEnd(const std::string& resourceVersion) {
  return nlohmann::json{{"type", "BOOKMARK"},
                        {"object",
                         {{"metadata",
                           {{"resourceVersion", resourceVersion},
                            {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}}
      .dump();
}

// A scripted API server: list pages and watch streams in order. When the
// script runs out, `onExhausted` runs (the test stops the informer there).
class ScriptedListWatch final : public runtime::ListWatchClient {
 public:
  struct ScriptedPage {
    std::vector<nlohmann::json> items;
    std::string resourceVersion;
    std::string continueToken;
  };
  using ListAnswer = base::Result<ScriptedPage, ListWatchError>;
  struct WatchScript {
    std::optional<ListWatchError> refuse;  // HTTP error instead of a stream
    std::vector<std::string> lines;
    std::optional<ListWatchError> breakWith;  // stream error after the lines
  };

  std::deque<ListAnswer> lists;
  std::deque<WatchScript> watches;
  std::deque<WatchScript> streamingLists;
  std::vector<std::string> listCalls;   // continue tokens
  std::vector<std::string> watchCalls;  // resource versions
  int streamingListCalls = 0;
  std::function<void()> onExhausted;

  asio::awaitable<base::Result<ListPage, ListWatchError>> list(
      const std::string&, const std::string& continueToken, std::size_t,
      const runtime::ListItemSink& onItem) override {
    listCalls.push_back(continueToken);
    if (lists.empty()) {
      onExhausted();
      co_return ListWatchError{503, "script exhausted"};
    }
    auto answer = std::move(lists.front());
    lists.pop_front();
    if (!answer) {
      co_return answer.error();
    }
    for (auto& item : answer->items) {
      onItem(item);
    }
    co_return ListPage{answer->resourceVersion, answer->continueToken};
  }

  asio::awaitable<base::Result<std::unique_ptr<EventStream>, ListWatchError>> watch(
      const std::string&, const std::string& resourceVersion, std::chrono::seconds) override {
    watchCalls.push_back(resourceVersion);
    co_return open(watches);
  }

  asio::awaitable<base::Result<std::unique_ptr<EventStream>, ListWatchError>> streamList(
      const std::string&, std::chrono::seconds) override {
    ++streamingListCalls;
    co_return open(streamingLists);
  }

 private:
  base::Result<std::unique_ptr<EventStream>, ListWatchError> open(
      std::deque<WatchScript>& scripts) {
    if (scripts.empty()) {
      onExhausted();
      return ListWatchError{503, "script exhausted"};
    }
    auto script = std::move(scripts.front());
    scripts.pop_front();
    if (script.refuse) {
      return *script.refuse;
    }
    return std::unique_ptr<EventStream>(std::make_unique<Stream>(std::move(script)));
  }

  class Stream final : public EventStream {
   public:
    explicit Stream(WatchScript script) : script_(std::move(script)) {}
    asio::awaitable<base::Result<std::optional<std::string>, ListWatchError>> next() override {
      if (next_ < script_.lines.size()) {
        co_return std::optional<std::string>(script_.lines[next_++]);
      }
      if (script_.breakWith) {
        co_return *script_.breakWith;
      }
      co_return std::optional<std::string>();
    }
    void close() override {}

   private:
    WatchScript script_;
    std::size_t next_ = 0;
  };
};

// One scripted server per collection path: what a cache of several
// namespaces (one informer each) lists and watches.
class ScriptedListWatchByPath final : public runtime::ListWatchClient {
 public:
  std::map<std::string, ScriptedListWatch> paths;

  asio::awaitable<base::Result<ListPage, ListWatchError>> list(
      const std::string& path, const std::string& continueToken, std::size_t limit,
      const runtime::ListItemSink& onItem) override {
    co_return co_await paths.at(path).list(path, continueToken, limit, onItem);
  }
  asio::awaitable<base::Result<std::unique_ptr<EventStream>, ListWatchError>> watch(
      const std::string& path, const std::string& resourceVersion,
      std::chrono::seconds timeout) override {
    co_return co_await paths.at(path).watch(path, resourceVersion, timeout);
  }
  asio::awaitable<base::Result<std::unique_ptr<EventStream>, ListWatchError>> streamList(
      const std::string& path, std::chrono::seconds timeout) override {
    co_return co_await paths.at(path).streamList(path, timeout);
  }
};

inline ScriptedListWatch::ScriptedPage page(std::vector<nlohmann::json> items, std::string rv,
                                            std::string continueToken = "") {
  return {std::move(items), std::move(rv), std::move(continueToken)};
}

}  // namespace gpuplacement::testing
