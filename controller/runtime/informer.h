#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_access.h"
#include "runtime/asio.h"
#include "runtime/clock.h"
#include "runtime/list_watch.h"
#include "runtime/object_json.h"
#include "runtime/signal.h"
#include "runtime/watch_state.h"

namespace gpuplacement::runtime {

// The key of an object: "namespace/name", or "name" when cluster-scoped.
std::string objectKey(const nlohmann::json& object);

// What the informer keeps per object: the projection the controller needs
// (never the whole object) and the resourceVersion it came from.
template <typename T>
struct Cached {
  std::string resourceVersion;
  T value;
};

// Read-only to everyone but its informer ("never modify objects from the
// store"). Single-threaded like the rest of the event loop.
template <typename T>
class Store {
 public:
  const T* get(const std::string& key) const {
    const auto it = items_.find(key);
    return it == items_.end() ? nullptr : &it->second.value;
  }
  const Cached<T>* entry(const std::string& key) const {
    const auto it = items_.find(key);
    return it == items_.end() ? nullptr : &it->second;
  }
  std::size_t size() const { return items_.size(); }
  template <typename F>
  void forEach(F&& visit) const {
    for (const auto& [key, entry] : items_) {
      visit(key, entry.value);
    }
  }

 private:
  template <typename>
  friend class Informer;
  std::unordered_map<std::string, Cached<T>> items_;
};

struct InformerOptions {
  std::string resource;  // for logs and metrics, e.g. "deployments"
  std::string path;      // e.g. "/apis/apps/v1/deployments"; may carry a selector query
  std::size_t pageSize = 500;
  // The server ends each watch after a random time in [min, 2*min), as
  // client-go does, so many clients do not reconnect in step.
  std::chrono::seconds minWatchTimeout{300};
  WatchState::Backoff backoff;
  // Try a streaming list first (see WatchState); paged LISTs if refused.
  bool streamingList = true;
};

// Lists, then watches, one resource into a Store, and tells handlers what
// changed: (key, old, new), with old null for an addition and new null for
// a deletion. Handlers must not suspend; they enqueue work.
template <typename T>
class Informer {
 public:
  using Projector = std::function<T(const nlohmann::json& object)>;
  using Handler = std::function<void(const std::string& key, const T* previous, const T* current)>;
  using Logger = std::function<void(const std::string& message)>;

  Informer(asio::any_io_executor executor, ListWatchClient& client, InformerOptions options,
           Projector project, const Clock& clock)
      : executor_(std::move(executor)),
        client_(client),
        options_(std::move(options)),
        project_(std::move(project)),
        clock_(clock),
        state_(options_.backoff, options_.streamingList),
        random_(std::random_device{}()) {}

  void addHandler(Handler handler) { handlers_.push_back(std::move(handler)); }
  void setLogger(Logger logger) { log_ = std::move(logger); }

  const Store<T>& store() const { return store_; }
  bool synced() const { return state_.synced(); }
  const WatchState& state() const { return state_; }
  const InformerOptions& options() const { return options_; }
  // Watch events applied since the start (ADDED, MODIFIED, DELETED; not
  // bookmarks nor a list's objects): the traffic the cache reads.
  std::uint64_t events() const { return events_; }

  // Runs until stop().
  asio::awaitable<void> run();
  void stop();
  // Returns once the first full list is in the store (or on stop).
  asio::awaitable<void> waitForSync();

 private:
  asio::awaitable<void> listPage(const std::string& continueToken);
  asio::awaitable<void> streamList();
  asio::awaitable<void> watch(const std::string& resourceVersion);
  // Reads a watch stream (or a streaming list, then its watch) to its end.
  asio::awaitable<void> consume(std::unique_ptr<EventStream> stream);
  // The stream failed: a streaming list in progress starts over, a watch
  // resumes (both after a backoff; 410 lists at once).
  void streamFailed(unsigned status) {
    state_.streamFailed(status, clock_.monotonicNow(), jitter());
  }
  // An object of a list in progress (a page or a streaming list's events).
  void keepPending(const nlohmann::json& object, std::string resourceVersion) {
    pending_[objectKey(object)] = Cached<T>{std::move(resourceVersion), project_(object)};
  }
  // The list is complete: into the store, and wake waitForSync().
  void completeList();
  std::chrono::seconds watchTimeout() {
    return options_.minWatchTimeout +
           std::chrono::seconds(static_cast<std::int64_t>(
               jitter() * static_cast<double>(options_.minWatchTimeout.count())));
  }
  asio::awaitable<void> wait(MonotonicTime until);
  // Applies one watch event; false if the stream must be abandoned.
  bool applyEvent(const std::string& line);
  void upsert(const std::string& key, std::string resourceVersion, T value);
  void erase(const std::string& key);
  void replaceAll();
  void notify(const std::string& key, const T* previous, const T* current) {
    for (auto& handler : handlers_) {
      handler(key, previous, current);
    }
  }
  double jitter() { return std::uniform_real_distribution<double>(0, 1)(random_); }
  void log(const std::string& message) {
    if (log_) {
      log_(options_.resource + ": " + message);
    }
  }

  asio::any_io_executor executor_;
  ListWatchClient& client_;
  InformerOptions options_;
  Projector project_;
  const Clock& clock_;
  WatchState state_;
  Store<T> store_;
  // The objects of a list in progress (pages or a streaming list's
  // events), moved into the store when it completes. Empty between lists:
  // a list that fails or is cut short clears it.
  std::unordered_map<std::string, Cached<T>> pending_;
  std::vector<Handler> handlers_;
  Logger log_;
  std::minstd_rand random_;
  bool stopped_ = false;
  std::uint64_t events_ = 0;
  EventStream* activeStream_ = nullptr;
  Signal stopping_{clock_};  // cuts a backoff wait short
  Signal synced_;            // wakes waitForSync()
};

template <typename T>
asio::awaitable<void> Informer<T>::run() {
  while (!stopped_) {
    const auto step = state_.next();
    switch (step.kind) {
      case WatchState::StepKind::StreamList:
        co_await streamList();
        break;
      case WatchState::StepKind::ListPage:
        co_await listPage(step.continueToken);
        break;
      case WatchState::StepKind::Watch:
        co_await watch(step.resourceVersion);
        break;
      case WatchState::StepKind::Wait:
        co_await wait(step.until);
        break;
    }
  }
  synced_.notifyAll();
}

template <typename T>
void Informer<T>::stop() {
  stopped_ = true;
  if (activeStream_) {
    activeStream_->close();
  }
  stopping_.notifyAll();
  synced_.notifyAll();
}

template <typename T>
asio::awaitable<void> Informer<T>::waitForSync() {
  while (!state_.synced() && !stopped_) {
    co_await synced_.wait();
  }
}

template <typename T>
asio::awaitable<void> Informer<T>::listPage(const std::string& continueToken) {
  const ListItemSink keep = [this](nlohmann::json& object) {
    const auto* metadata = object.contains("metadata") ? &object.at("metadata") : nullptr;
    if (!metadata || !metadata->is_object()) {
      return;  // nothing to key it by; the API server never sends this
    }
    keepPending(object, base::stringMember(*metadata, "resourceVersion"));
  };
  auto page = co_await client_.list(options_.path, continueToken, options_.pageSize, keep);
  if (stopped_) {
    co_return;
  }
  if (!page) {
    log("list failed (" + std::to_string(page.error().status) + "): " + page.error().message);
    pending_.clear();
    state_.listFailed(page.error().status, clock_.monotonicNow(), jitter());
    co_return;
  }
  if (state_.pageReceived(page->continueToken, page->resourceVersion)) {
    completeList();
  }
}

template <typename T>
void Informer<T>::completeList() {
  replaceAll();
  synced_.notifyAll();
}

template <typename T>
asio::awaitable<void> Informer<T>::streamList() {
  auto opened = co_await client_.streamList(options_.path, watchTimeout());
  if (stopped_) {
    co_return;
  }
  if (!opened) {
    const unsigned status = opened.error().status;
    if (status == 400 || status == 422) {
      log("the server offers no streaming list (" + std::to_string(status) + ": " +
          opened.error().message + "); listing in pages from now on");
      state_.streamingListRefused();
      co_return;
    }
    log("streaming list failed (" + std::to_string(status) + "): " + opened.error().message);
    state_.listFailed(status, clock_.monotonicNow(), jitter());
    co_return;
  }
  co_await consume(std::move(opened).value());
}

template <typename T>
void Informer<T>::replaceAll() {
  if (store_.items_.empty()) {
    // The first list: take the pages' entries as they are, without a
    // second copy of every object.
    store_.items_.swap(pending_);
    for (const auto& [key, entry] : store_.items_) {
      notify(key, nullptr, &entry.value);
    }
    return;
  }
  // Deletions the watch missed: in the store, not in the new list.
  std::vector<std::string> gone;
  for (const auto& [key, entry] : store_.items_) {
    if (!pending_.count(key)) {
      gone.push_back(key);
    }
  }
  for (const auto& key : gone) {
    erase(key);
  }
  for (auto& [key, entry] : pending_) {
    const auto* existing = store_.entry(key);
    if (existing && existing->resourceVersion == entry.resourceVersion) {
      continue;  // unchanged: no notification
    }
    upsert(key, std::move(entry.resourceVersion), std::move(entry.value));
  }
  pending_.clear();
}

template <typename T>
void Informer<T>::upsert(const std::string& key, std::string resourceVersion, T value) {
  auto it = store_.items_.find(key);
  if (it == store_.items_.end()) {
    it = store_.items_.emplace(key, Cached<T>{std::move(resourceVersion), std::move(value)}).first;
    notify(key, nullptr, &it->second.value);
    return;
  }
  T previous = std::move(it->second.value);
  it->second = Cached<T>{std::move(resourceVersion), std::move(value)};
  notify(key, &previous, &it->second.value);
}

template <typename T>
void Informer<T>::erase(const std::string& key) {
  const auto it = store_.items_.find(key);
  if (it == store_.items_.end()) {
    return;
  }
  T previous = std::move(it->second.value);
  store_.items_.erase(it);
  notify(key, &previous, nullptr);
}

template <typename T>
bool Informer<T>::applyEvent(const std::string& line) {
  const auto event = parseObject(line);
  if (!event.is_object() || !event.contains("type") || !event["type"].is_string() ||
      !event.contains("object") || !event["object"].is_object()) {
    log("ignoring a malformed watch event; restarting the watch");
    streamFailed(0);
    return false;
  }
  const std::string type = event["type"];
  const auto& object = event["object"];
  if (type == "ERROR") {
    // A Status in the stream; 410 Expired means the resume point is gone.
    const auto code = static_cast<unsigned>(base::integerMember(object, "code"));
    log("watch error " + std::to_string(code) + ": " + base::stringMember(object, "message"));
    streamFailed(code);
    return false;
  }
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) {
    streamFailed(0);
    return false;
  }
  std::string resourceVersion = base::stringMember(*metadata, "resourceVersion");
  if (state_.phase() == WatchState::Phase::Listing) {  // a streaming list's objects
    if (type == "BOOKMARK") {
      const auto& annotations = base::memberOf(*metadata, "annotations");
      if (base::stringMember(annotations, "k8s.io/initial-events-end") == "true") {
        state_.initialEventsEnded(resourceVersion);
        completeList();
      }
    } else if (type == "ADDED" || type == "MODIFIED") {
      keepPending(object, std::move(resourceVersion));
    } else if (type == "DELETED") {
      pending_.erase(objectKey(object));
    }
    return true;
  }
  if (type == "BOOKMARK") {
    state_.eventReceived(resourceVersion);
    return true;
  }
  const std::string key = objectKey(object);
  ++events_;
  if (type == "ADDED" || type == "MODIFIED") {
    upsert(key, resourceVersion, project_(object));
  } else if (type == "DELETED") {
    erase(key);
  } else {
    log("ignoring a watch event of unknown type " + type);
  }
  state_.eventReceived(resourceVersion);
  return true;
}

template <typename T>
asio::awaitable<void> Informer<T>::watch(const std::string& resourceVersion) {
  auto opened = co_await client_.watch(options_.path, resourceVersion, watchTimeout());
  if (stopped_) {
    co_return;
  }
  if (!opened) {
    log("watch failed (" + std::to_string(opened.error().status) + "): " + opened.error().message);
    state_.watchFailed(opened.error().status, clock_.monotonicNow(), jitter());
    co_return;
  }
  co_await consume(std::move(opened).value());
}

template <typename T>
asio::awaitable<void> Informer<T>::consume(std::unique_ptr<EventStream> stream) {
  activeStream_ = stream.get();
  state_.streamOpened();
  for (;;) {
    auto line = co_await stream->next();
    if (stopped_) {
      break;
    }
    if (!line) {
      log("watch interrupted: " + line.error().message);
      streamFailed(line.error().status);
      break;
    }
    if (!*line) {
      // The server's timeout (resume from the last rv), or a streaming list
      // ended before its end bookmark (a server going away: one paged list).
      if (state_.phase() == WatchState::Phase::Listing) {
        log("the streaming list ended before its last object; listing in pages");
      }
      state_.streamEnded();
      break;
    }
    if ((*line)->empty()) {
      continue;
    }
    if (!applyEvent(**line)) {
      break;
    }
  }
  pending_.clear();  // what a streaming list cut short had gathered
  activeStream_ = nullptr;
  stream->close();
}

template <typename T>
asio::awaitable<void> Informer<T>::wait(MonotonicTime until) {
  if (!stopped_) {
    co_await stopping_.waitUntil(until);
  }
  state_.waited();
}

}  // namespace gpuplacement::runtime
