#include "app/policy_engines.h"

namespace gpuplacement::app {

PolicyEngines::PolicyEngines(std::shared_ptr<const core::Catalog> catalog,
                             std::shared_ptr<const core::RuleSet> rules)
    : catalog_(std::move(catalog)), rules_(std::move(rules)) {
  // The catalog and rules were checked at start-up: this cannot fail.
  builtin_ = InForce{0, *core::PlacementEngine::create(catalog_, rules_, core::Policy{})};
}

bool PolicyEngines::update(const std::string& name, const PolicyObject* current,
                           std::string& problem) {
  if (!current) {
    engines_.erase(name);
    return true;
  }
  if (!current->policy) {
    // The last good version stays in force; with none, the workloads of
    // this policy now read "invalid" instead of "not found".
    return engines_.count(name) == 0;
  }
  const auto existing = engines_.find(name);
  if (existing != engines_.end() && existing->second.generation == current->generation) {
    return false;
  }
  auto engine = core::PlacementEngine::create(catalog_, rules_, *current->policy);
  if (!engine) {
    problem = engine.error().describe();
    return false;
  }
  engines_[name] = InForce{current->generation, *engine};
  return true;
}

std::shared_ptr<const core::PlacementEngine> PolicyEngines::engine(const std::string& name) const {
  if (const auto it = engines_.find(name); it != engines_.end()) {
    return it->second.engine;
  }
  return name == "default" ? builtin_.engine : nullptr;
}

void PolicyEngines::reprice(std::shared_ptr<const core::Catalog> catalog,
                            std::shared_ptr<const core::OfferingPrices> offerings) {
  catalog_ = std::move(catalog);
  offerings_ = std::move(offerings);
  // The same policies built before on a catalog of the same types: this
  // cannot fail.
  builtin_.engine = *core::PlacementEngine::create(catalog_, rules_, core::Policy{});
  for (auto& [name, inForce] : engines_) {
    if (auto engine = core::PlacementEngine::create(catalog_, rules_, inForce.engine->policy())) {
      inForce.engine = *engine;
    }
  }
  clusterViews_.clear();
}

void PolicyEngines::setKarpenterPrices(const core::KarpenterPricesCondition& condition) {
  if (karpenterPrices_ != condition) {
    karpenterPrices_ = condition;
    clusterViews_.clear();
  }
}

core::PolicyView PolicyEngines::view(const std::string& name, const PolicyObject* object) const {
  core::PolicyView view;
  const InForce* inForce = nullptr;
  if (const auto it = engines_.find(name); it != engines_.end()) {
    inForce = &it->second;
  } else if (name == "default") {
    inForce = &builtin_;  // what was in force before anyone wrote one
  }
  if (inForce) {
    view.engine = inForce->engine.get();
    view.generation = inForce->generation;
    return view;
  }
  view.reason = object ? "PolicyInvalid" : "PolicyNotFound";
  view.problem = object ? "PlacementPolicy " + name + " is invalid (" + object->error.describe() +
                              ") and no earlier version of it was accepted"
                        : "PlacementPolicy " + name + " does not exist";
  return view;
}

std::shared_ptr<const core::ClusterView> PolicyEngines::clusterView(
    const std::string& name, const core::PolicyView& view, const ClusterViewCaches& cluster) const {
  if (!view.engine) {
    clusterViews_.erase(name);
    return nullptr;
  }
  const auto stamp = cluster.stamp();
  auto& cached = clusterViews_[name];
  const bool sameEngine =
      cached.view && cached.engine == view.engine && cached.generation == view.generation;
  if (sameEngine && cached.stamp == stamp) {
    return cached.view;
  }
  const auto& engine = *view.engine;
  const auto started = clock_ ? clock_->monotonicNow() : runtime::MonotonicTime{};
  const auto observe = [&](ViewWork work) {
    if (observeView_) {
      observeView_(work, std::chrono::duration<double>(clock_->monotonicNow() - started).count());
    }
  };
  if (sameEngine && stamp.onlyRoomMovedSince(cached.stamp)) {
    if (const auto moved = cluster.nodesWithRoomMovedSince(cached.stamp.room)) {
      // A reconcile waiting on a write may hold the view: it keeps its own.
      if (cached.view.use_count() > 1) {
        cached.view = std::make_shared<core::ClusterView>(*cached.view);
      }
      for (const auto& node : *moved) {
        const auto entry = cluster.node(node);
        cached.view->capacity.recount(
            node, entry ? core::shareOf(*entry, engine.catalog(), engine.policy()) : std::nullopt);
      }
      cached.stamp = stamp;
      observe(ViewWork::Recount);
      return cached.view;
    }
  }
  auto state = cluster.state();
  state.offerings = offerings_;
  state.karpenterPrices = karpenterPrices_;
  cached = {view.engine, view.generation, stamp,
            std::make_shared<core::ClusterView>(
                core::clusterViewOf(state, engine.catalog(), engine.policy()))};
  observe(ViewWork::Whole);
  return cached.view;
}

void PolicyEngines::observeViews(const runtime::Clock& clock,
                                 std::function<void(ViewWork work, double seconds)> observe) {
  clock_ = &clock;
  observeView_ = std::move(observe);
}

std::optional<std::int64_t> PolicyEngines::generationInForce(const std::string& name) const {
  if (const auto it = engines_.find(name); it != engines_.end()) {
    return it->second.generation;
  }
  return std::nullopt;
}

std::map<std::string, std::int64_t> PolicyEngines::generations() const {
  std::map<std::string, std::int64_t> generations{{"default", 0}};
  for (const auto& [name, inForce] : engines_) {
    generations[name] = inForce.generation;
  }
  return generations;
}

}  // namespace gpuplacement::app
