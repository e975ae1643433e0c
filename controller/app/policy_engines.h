#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "app/cached_objects.h"
#include "app/cluster_view_caches.h"
#include "core/catalog/offering_prices.h"
#include "core/decide/cluster_cost.h"
#include "core/decide/engine.h"
#include "core/plan/workload_plan.h"
#include "runtime/clock.h"

namespace gpuplacement::app {

// The placement engine in force per PlacementPolicy: the last version of
// each policy that was valid (an invalid edit leaves it in force), and the
// built-in policy behind "default" until someone writes one.
class PolicyEngines {
 public:
  PolicyEngines(std::shared_ptr<const core::Catalog> catalog,
                std::shared_ptr<const core::RuleSet> rules);

  // A policy arrived, changed or was deleted (`current` null). True when
  // what its workloads read changed (the engine in force, or why there is
  // none), so they must be reconciled.
  // An invalid version leaves the last good one in force; `problem` says
  // what went wrong when the engine could not be built.
  bool update(const std::string& name, const PolicyObject* current, std::string& problem);

  // The engine for a workload's policy, or why there is none. `object` is
  // the cached policy of that name, if any (to say why it is not in force).
  core::PolicyView view(const std::string& name, const PolicyObject* object) const;

  // What the policy in force (`view`, from view()) sees of the cluster,
  // shared by every decision until the cluster stamp or the engine in
  // force moves. When only the room on some nodes moved (pods came and
  // went), those nodes are recounted; otherwise it is computed again
  // whole. Null without an engine.
  std::shared_ptr<const core::ClusterView> clusterView(const std::string& name,
                                                       const core::PolicyView& view,
                                                       const ClusterViewCaches& cluster) const;

  // The engine view() points at, held by a reconcile while it waits on the
  // API server: a repricing replaces the engines in force meanwhile.
  std::shared_ptr<const core::PlacementEngine> engine(const std::string& name) const;

  // Karpenter's prices arrived or changed: every engine in force is built
  // again on `catalog` (the catalog priced by them), and the cluster views
  // learn which offerings Karpenter will not launch.
  void reprice(std::shared_ptr<const core::Catalog> catalog,
               std::shared_ptr<const core::OfferingPrices> offerings);
  // The catalog every engine is built on: priced as Karpenter weighs it.
  const std::shared_ptr<const core::Catalog>& catalog() const { return catalog_; }
  // How Karpenter's prices read now (the KarpenterPrices condition).
  void setKarpenterPrices(const core::KarpenterPricesCondition& condition);

  enum class ViewWork : std::uint8_t { Whole, Recount };
  // Told how long each computation or recount of a cluster view took (a
  // metric).
  void observeViews(const runtime::Clock& clock,
                    std::function<void(ViewWork work, double seconds)> observe);

  // The generation in force, if any version of the policy is.
  std::optional<std::int64_t> generationInForce(const std::string& name) const;
  // Policy name -> generation in force (the built-in "default" is 0).
  std::map<std::string, std::int64_t> generations() const;

 private:
  struct InForce {
    std::int64_t generation = 0;
    std::shared_ptr<const core::PlacementEngine> engine;
  };

  std::shared_ptr<const core::Catalog> catalog_;
  std::shared_ptr<const core::RuleSet> rules_;
  struct ClusterViewOf {
    const core::PlacementEngine* engine = nullptr;
    std::int64_t generation = 0;
    ClusterViewCaches::Stamp stamp;
    std::shared_ptr<core::ClusterView> view;  // recounted in place when no one else holds it
  };

  std::shared_ptr<const core::OfferingPrices> offerings_;          // null: not read
  std::optional<core::KarpenterPricesCondition> karpenterPrices_;  // nullopt: not read
  InForce builtin_;                                                // generation 0
  std::map<std::string, InForce> engines_;
  mutable std::map<std::string, ClusterViewOf> clusterViews_;  // a cache: const to readers
  const runtime::Clock* clock_ = nullptr;
  std::function<void(ViewWork work, double seconds)> observeView_;
};

}  // namespace gpuplacement::app
