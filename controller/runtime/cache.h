#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/informer.h"
#include "runtime/key_index.h"

namespace gpuplacement::runtime {

// What one watched resource is and where it is read.
struct ResourceSpec {
  std::string resource;  // "deployments": its logs and its metrics' label
  // The collection's path in one namespace ("" for all, or for a
  // cluster-scoped resource); may carry a query such as a selector.
  std::function<std::string(const std::string& ns)> path;
  bool namespaced = true;
  // The operator cannot work without it: readiness waits for it and health
  // counts its failures. The others it works without, and says so.
  bool required = true;
};

// What a cache says of itself whatever its type: for readiness, health and
// metrics over every watched resource at once (CacheSet).
class WatchedResource {
 public:
  struct Counts {
    double lists = 0;    // full lists: 1 at start, then one per 410 Gone
    double relists = 0;  // lists after each informer's first
    double events = 0;   // watch events applied
    double objects = 0;  // objects cached
  };

  virtual ~WatchedResource() = default;
  // How one informer of it fares (one per namespace watched).
  struct InformerHealth {
    bool synced = false;
    std::optional<unsigned> lastFailure;  // HTTP status; cleared by a success
    int consecutiveFailures = 0;
    // Refused (401, 403) or not served (404): retrying will not change
    // that soon.
    bool refused() const {
      return !synced && lastFailure &&
             (*lastFailure == 401 || *lastFailure == 403 || *lastFailure == 404);
    }
  };

  virtual const ResourceSpec& spec() const = 0;
  // Every informer has its first full list.
  virtual bool synced() const = 0;
  virtual std::vector<InformerHealth> informers() const = 0;
  // Why it cannot be read: "cannot list jobs (HTTP 403)", "cannot list
  // jobs in ml yet"; empty when synced.
  virtual std::string unreadable() const = 0;
  virtual Counts counts() const = 0;
  virtual void start() = 0;  // spawns its informers on the executor
  virtual void stop() = 0;
  virtual asio::awaitable<void> waitForSync() = 0;
};

// A typed cache of one resource, over one namespace, several (one informer
// each, found through a map by the key's namespace) or all: what
// controller-runtime's cache and kube-rs's reflector::Store give a
// reconciler. Indexes (controller-runtime's FieldIndexer) are kept up to
// date before any handler runs, so a handler reads them as they now are.
template <typename T>
class Cache final : public WatchedResource {
 public:
  using Handler = typename Informer<T>::Handler;
  using Projector = typename Informer<T>::Projector;
  using Logger = typename Informer<T>::Logger;

  // The keys an object is filed under, as object keys are: "ns/name".
  template <typename K>
  class Index {
   public:
    std::vector<std::string> of(const K& key) const { return pairs_.of(key); }
    std::size_t size() const { return pairs_.size(); }

   private:
    friend class Cache;
    void file(const K& filed, const std::string& key) { pairs_.add(filed, key); }
    void unfile(const K& filed, const std::string& key) { pairs_.remove(filed, key); }
    KeyIndex<K, std::string> pairs_;
  };

  // How many objects an index would file under each key, without which:
  // for a figure that names none of them, at a count a key instead of a
  // pair an object.
  template <typename K>
  class Tally {
   public:
    std::size_t of(const K& key) const {
      const auto found = counts_.find(key);
      return found == counts_.end() ? 0 : found->second;
    }

   private:
    friend class Cache;
    void file(const K& filed, const std::string&) { ++counts_[filed]; }
    void unfile(const K& filed, const std::string&) {
      if (const auto found = counts_.find(filed); found != counts_.end() && --found->second == 0) {
        counts_.erase(found);
      }
    }
    std::unordered_map<K, std::size_t> counts_;
  };

  Cache(asio::any_io_executor executor, ListWatchClient& client, const InformerOptions& base,
        const std::vector<std::string>& namespaces, ResourceSpec spec, Projector project,
        const Clock& clock, const Logger& log)
      : executor_(std::move(executor)), spec_(std::move(spec)) {
    std::vector<std::string> scopes;
    if (spec_.namespaced) {
      scopes = namespaces;
    }
    if (scopes.empty()) {
      scopes.push_back("");
    }
    for (const auto& ns : scopes) {
      auto options = base;
      options.resource = ns.empty() ? spec_.resource : spec_.resource + " in " + ns;
      options.path = spec_.path(ns);
      auto& informer = informers_.emplace_back(
          std::make_unique<Informer<T>>(executor_, client, options, project, clock));
      informer->setLogger(log);
      informer->addHandler([this](const std::string& key, const T* previous, const T* current) {
        changed(key, previous, current);
      });
      if (!ns.empty()) {
        byNamespace_.emplace(ns, informer.get());
      }
    }
  }

  Cache(const Cache&) = delete;  // its informers' handlers point at it
  Cache& operator=(const Cache&) = delete;

  const T* get(const std::string& key) const {
    const auto* found = informerOf(key);
    return found ? found->store().get(key) : nullptr;
  }
  const Cached<T>* entry(const std::string& key) const {
    const auto* found = informerOf(key);
    return found ? found->store().entry(key) : nullptr;
  }
  std::string resourceVersion(const std::string& key) const {
    const auto* found = entry(key);
    return found ? found->resourceVersion : std::string();
  }
  std::size_t size() const {
    std::size_t total = 0;
    for (const auto& informer : informers_) {
      total += informer->store().size();
    }
    return total;
  }
  template <typename F>
  void forEach(F&& visit) const {
    for (const auto& informer : informers_) {
      informer->store().forEach(visit);
    }
  }

  // Handlers run in the order added, after the indexes; (key, old, new),
  // old null for an addition and new null for a deletion.
  void addHandler(Handler handler) { handlers_.push_back(std::move(handler)); }

  // Files each object under what `keysOf(key, object)` gives: a
  // std::optional<K> or a std::vector<K>. Before the first event.
  template <typename K, typename KeysOf>
  const Index<K>& index(KeysOf keysOf) {
    return file<Index<K>, K>(std::move(keysOf));
  }
  // Counts the objects under what `keysOf` gives, as index() would file
  // them (each key once per object). Before the first event.
  template <typename K, typename KeysOf>
  const Tally<K>& tally(KeysOf keysOf) {
    return file<Tally<K>, K>(std::move(keysOf));
  }

  const ResourceSpec& spec() const override { return spec_; }
  bool synced() const override {
    for (const auto& informer : informers_) {
      if (!informer->synced()) {
        return false;
      }
    }
    return true;
  }
  std::vector<InformerHealth> informers() const override {
    std::vector<InformerHealth> health;
    for (const auto& informer : informers_) {
      health.push_back({informer->synced(), informer->state().lastFailure(),
                        informer->state().consecutiveFailures()});
    }
    return health;
  }
  std::string unreadable() const override {
    for (const auto& informer : informers_) {
      if (!informer->synced()) {
        const auto failure = informer->state().lastFailure();
        return "cannot list " + informer->options().resource +
               (failure ? " (HTTP " + std::to_string(*failure) + ")" : std::string(" yet"));
      }
    }
    return "";
  }
  Counts counts() const override {
    Counts counts;
    for (const auto& informer : informers_) {
      counts.lists += informer->state().lists();
      counts.relists += std::max(0, informer->state().lists() - 1);
      counts.events += static_cast<double>(informer->events());
      counts.objects += static_cast<double>(informer->store().size());
    }
    return counts;
  }
  void start() override {
    for (const auto& informer : informers_) {
      asio::co_spawn(executor_, informer->run(), asio::detached);
    }
  }
  void stop() override {
    for (const auto& informer : informers_) {
      informer->stop();
    }
  }
  asio::awaitable<void> waitForSync() override {
    for (const auto& informer : informers_) {
      co_await informer->waitForSync();
    }
  }

 private:
  struct AnyIndex {
    virtual ~AnyIndex() = default;
    virtual void update(const std::string& key, const T* previous, const T* current) = 0;
  };
  // Kept: an Index<K> or a Tally<K>.
  template <typename Kept, typename K, typename KeysOf>
  struct Filed final : AnyIndex {
    explicit Filed(KeysOf keys) : keysOf(std::move(keys)) {}
    void update(const std::string& key, const T* previous, const T* current) override {
      using Keys = decltype(keysOf(key, *current));
      const Keys before = previous ? keysOf(key, *previous) : Keys{};
      const Keys after = current ? keysOf(key, *current) : Keys{};
      if (before == after) {
        return;
      }
      forEachKey(before, [&](const K& filed) { kept.unfile(filed, key); });
      forEachKey(after, [&](const K& filed) { kept.file(filed, key); });
    }
    template <typename F>
    static void forEachKey(const std::optional<K>& keys, F&& visit) {
      if (keys) {
        visit(*keys);
      }
    }
    template <typename F>
    static void forEachKey(const std::vector<K>& keys, F&& visit) {
      for (const auto& filed : keys) {
        visit(filed);
      }
    }
    KeysOf keysOf;
    Kept kept;
  };

  template <typename Kept, typename K, typename KeysOf>
  const Kept& file(KeysOf keysOf) {
    auto owned = std::make_unique<Filed<Kept, K, KeysOf>>(std::move(keysOf));
    const auto& kept = owned->kept;
    indexes_.push_back(std::move(owned));
    return kept;
  }

  const Informer<T>* informerOf(const std::string& key) const {
    if (byNamespace_.empty()) {
      return informers_.front().get();
    }
    const auto slash = key.find('/');
    if (slash == std::string::npos) {
      return nullptr;
    }
    const auto found = byNamespace_.find(std::string_view(key).substr(0, slash));
    return found == byNamespace_.end() ? nullptr : found->second;
  }

  void changed(const std::string& key, const T* previous, const T* current) {
    for (const auto& index : indexes_) {
      index->update(key, previous, current);
    }
    for (const auto& handler : handlers_) {
      handler(key, previous, current);
    }
  }

  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view text) const noexcept {
      return std::hash<std::string_view>{}(text);
    }
  };

  asio::any_io_executor executor_;
  ResourceSpec spec_;
  std::vector<std::unique_ptr<Informer<T>>> informers_;  // one per namespace watched
  std::unordered_map<std::string, const Informer<T>*, StringHash, std::equal_to<>> byNamespace_;
  std::vector<std::unique_ptr<AnyIndex>> indexes_;
  std::vector<Handler> handlers_;
};

}  // namespace gpuplacement::runtime
