// What a placement costs, said in one line next to the price: the node
// behind it, the idle devices it uses or leaves, and what the price assumes
// (core/explain/explainer_parts.h).
#include <cmath>
#include <string>

#include "base/decimal.h"
#include "core/explain/explainer_parts.h"

namespace gpuplacement::core::explaining {
namespace {

std::string cpuText(double cpu) {
  return cpu < 1 ? std::to_string(static_cast<int>(std::lround(cpu * 1000))) + "m CPU"
                 : base::formatFixed(cpu, cpu == std::floor(cpu) ? 0 : 2) + " vCPU";
}

std::string memoryText(double gib) {
  return gib < 1 ? std::to_string(static_cast<int>(std::lround(gib * 1024))) + " MiB"
                 : base::formatGiB(gib) + " GiB";
}

}  // namespace

// The slices of a MIG option's profile one node has.
int Explainer::slicesPerNode(const Option& option) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto& spec = *catalog_->acceleratorOf(instance);
  return instance.acceleratorCount *
         spec.migProfiles[static_cast<std::size_t>(option.fit.migProfile)].perGpu;
}

// A replica's share of its node: "25%", or a share of a GPU's "1/56",
// which a rounded percentage (2%) would blur.
std::string Explainer::shareText(const Option& option) {
  const double share = option.fit.share;
  const long whole = share > 0 ? std::lround(1 / share) : 0;
  const bool fraction = (option.fit.migProfile >= 0 || option.fit.timeSlices > 0) && whole > 0 &&
                        std::abs(1.0 / whole - share) < 1e-9;
  return fraction ? "1/" + std::to_string(whole) : base::formatPercent(share);
}

// What the idle devices of a placement are called: "L4", or "MIG 1g.10gb
// slices" where it takes slices.
std::string Explainer::idleUnit(const Placement& placement, int count) {
  if (placement.timeSlices > 0) {
    return "time-sliced " + placement.accelerator + (count == 1 ? " replica" : " replicas");
  }
  if (placement.migProfile.empty()) {
    return placement.accelerator;
  }
  return "MIG " + placement.migProfile + (count == 1 ? " slice" : " slices");
}

// A team's own cpu or memory request stands even below the placement's
// sizing (template_patch.cc): the scheduler then packs replicas by the
// smaller figure, so on CPU the price per replica is more than the cluster
// may pay, and a replica may run short. Said where the price is.
std::string Explainer::sizingBelowNeed(const Requirement& need, const Placement& placement) {
  constexpr double kSlack = 1e-6;
  const bool cpuBelow =
      placement.tier == Tier::CPU && need.podCpu > 0 && need.podCpu + kSlack < placement.cpuRequest;
  const bool memoryBelow =
      need.podMemoryGiB > 0 && need.podMemoryGiB + kSlack < placement.memoryRequestGiB;
  if (!cpuBelow && !memoryBelow) {
    return "";
  }
  std::string asked;
  std::string placed;
  if (cpuBelow) {
    asked = cpuText(need.podCpu);
    placed = cpuText(placement.cpuRequest);
  }
  if (memoryBelow) {
    asked += (asked.empty() ? "" : " and ") + memoryText(need.podMemoryGiB);
    placed += (placed.empty() ? "" : " and ") + memoryText(placement.memoryRequestGiB);
  }
  std::string note = "the pod template's own requests of " + asked +
                     " per replica stand, below the " + placed + " this model is sized for";
  if (cpuBelow) {
    note += ": nodes may hold more replicas than this price assumes, and each may run short";
  } else {
    note += ": a replica may run short of host memory";
  }
  return note;
}

// "2 replicas on-demand, 1 spot (the odd one priced on-demand, ...)".
std::string Explainer::mixedSplitNote(const Placement& placement) {
  const auto replicas = [](int n) {
    return std::to_string(n) + (n == 1 ? " replica" : " replicas");
  };
  std::string note = replicas(placement.onDemandReplicas) + " on-demand, " +
                     std::to_string(placement.spotReplicas) + " spot";
  if (placement.onDemandReplicas > placement.spotReplicas) {
    note += " (the odd one priced on-demand, the dearer: the spread lets it land on either)";
  }
  return note;
}

// The node behind the price, in one line: "1 of 16 Trainium on one
// trn1.32xlarge at $3.91/h; 15 idle", or the share and what it assumes.
std::string Explainer::costNote(const Option& option, const Placement& placement) const {
  const auto& instance = catalog_->instances[option.instance];
  const bool mixed = option.capacity == CapacityType::Mixed;
  const std::string price = mixed ? formatMoney(option.nodeHourly) + "/h on-demand, " +
                                        formatMoney(option.spotNodeHourly) + "/h spot"
                                  : formatMoney(option.nodeHourly) + "/h";
  const std::string split = mixed ? mixedSplitNote(placement) + "; " : "";
  const std::string shape =
      placement.accelerator.empty()
          ? formatFixed(placement.cpuRequest, 0) + " vCPU and " +
                formatGiB(placement.memoryRequestGiB) + " GiB of " +
                std::to_string(instance.vcpus) + " vCPU, " + formatGiB(instance.memoryGiB) + " GiB"
      : option.fit.migProfile >= 0
          ? "1 of " + std::to_string(slicesPerNode(option)) + " MIG " + placement.migProfile +
                " slices of " + std::to_string(instance.acceleratorCount) + " " +
                placement.accelerator
      : option.fit.timeSlices > 0
          ? std::to_string(placement.acceleratorCount) + " of " +
                std::to_string(option.fit.timeSlices) + " time-sliced replicas of the " +
                placement.accelerator
          : std::to_string(placement.acceleratorCount) + " of " +
                std::to_string(instance.acceleratorCount) + " " + placement.accelerator;
  if (placement.nodesPerReplica > 1) {
    const int groups = std::max(placement.replicas, 1);
    return split + shape + " on each of " + std::to_string(placement.nodesPerReplica) + " " +
           instance.type + " nodes a replica" +
           (groups > 1 ? ", " + std::to_string(groups) + " replicas" : "") + ", at " + price +
           " a node";
  }
  if (placement.costModel == CostModel::AcceleratorShare) {
    return split + shape + ": " + shareText(option) + " of a " + instance.type + " at " + price +
           ", assuming other workloads pay for the rest (AcceleratorShare)";
  }
  if (option.capacity == CapacityType::Reserved) {
    const std::string nodes = placement.nodes == 1 ? "a reserved " + instance.type
                                                   : std::to_string(placement.nodes) +
                                                         " reserved " + instance.type + " nodes";
    return shape + " on " + nodes + " of " + placement.reservation +
           ", paid for whether used or not: nothing more for the cluster while it has room";
  }
  if (option.cost.cluster) {
    return split + clusterCostNote(option, placement, shape, price);
  }
  std::string note = placement.nodes == 1
                         ? shape + " on one " + instance.type + " at " + price
                         : shape + " per replica on " + std::to_string(placement.nodes) + " " +
                               instance.type + " nodes at " + price + " each";
  if (placement.idleAccelerators > 0) {
    note += "; " + std::to_string(placement.idleAccelerators) + " " +
            idleUnit(placement, placement.idleAccelerators) + " idle";
  }
  return split + note;
}

// With a cluster view: which replicas use devices idle on existing nodes,
// which stay on nodes they have alone, and which need new nodes. "1 idle
// L4 on an existing g6.12xlarge at $4.60/h: 1 of 4 L4, charged its share
// (25%), nothing more for the cluster"; "1 of 1 L4 on a new g6.xlarge at
// $0.80/h".
std::string Explainer::clusterCostNote(const Option& option, const Placement& placement,
                                       const std::string& shape, const std::string& price) const {
  const auto& instance = catalog_->instances[option.instance];
  const auto& cost = option.cost;
  std::string note;
  if (cost.replicasOnIdle > 0) {
    // The idle devices it takes, not how many the type has idle: that count
    // moves with every pod on those nodes, and in the status it would be
    // stale at once and rewrite the status of every workload sharing them.
    const int taken = cost.replicasOnIdle * placement.acceleratorCount;
    note =
        std::to_string(taken) + " idle " + idleUnit(placement, taken) + " on " +
        (cost.replicasOnIdle == 1 || cost.idleNodes == 1 ? "an existing " + instance.type
                                                         : "existing " + instance.type + " nodes") +
        " at " + price + ": " + shape + ", charged its share (" + shareText(option) +
        "), nothing more for the cluster";
    if (cost.replicasOnIdle < placement.replicas) {
      note += " for " + std::to_string(cost.replicasOnIdle) + " replicas";
    }
  }
  if (cost.ownNodes > 0) {
    note += (note.empty() ? shape + " on " : "; the rest on ") +
            (cost.ownNodes == 1 ? "the " + instance.type + " it runs on alone"
                                : std::to_string(cost.ownNodes) + " " + instance.type +
                                      " nodes it runs on alone") +
            " at " + price + (cost.ownNodes == 1 ? "" : " each") + ", the whole node";
  }
  if (cost.newNodes > 0) {
    note +=
        (note.empty() ? shape + " on " : "; the rest on ") +
        (cost.newNodes == 1 ? "a new " + instance.type
                            : std::to_string(cost.newNodes) + " new " + instance.type + " nodes") +
        " at " + price + (cost.newNodes == 1 ? "" : " each");
  }
  if (cost.newNodes + cost.ownNodes > 0 && placement.idleAccelerators > 0) {
    note += "; " + std::to_string(placement.idleAccelerators) + " " +
            idleUnit(placement, placement.idleAccelerators) + " idle";
  }
  return note;
}

}  // namespace gpuplacement::core::explaining
