#include "core/explain/placement_json.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "base/decimal.h"
#include "core/decide/performance_model.h"

namespace gpuplacement::core {

using json = nlohmann::json;

namespace {

// An object's fields in the view's spelling.
class Fields {
 public:
  explicit Fields(PlacementView view) : view_(view) {}

  template <class Value>
  void put(const char* key, Value&& value) {
    out_[key] = std::forward<Value>(value);
  }
  // A figure with a fraction, to `places` decimals.
  void figure(const char* key, double value, int places) {
    if (view_ == PlacementView::Status) {
      out_[key] = base::decimalString(value, places);
    } else {
      const double scale = std::pow(10.0, places);
      out_[key] = std::round(value * scale) / scale;
    }
  }
  // What may be absent: left out of the status, null in the what-if answer.
  void figure(const char* key, const std::optional<double>& value, int places) {
    if (value) {
      figure(key, *value, places);
    } else {
      absent(key);
    }
  }
  void text(const char* key, const std::string& value) {
    if (value.empty()) {
      absent(key);
    } else {
      out_[key] = value;
    }
  }
  json take() { return std::move(out_); }

 private:
  void absent(const char* key) {
    if (view_ == PlacementView::WhatIf) {
      out_[key] = nullptr;
    }
  }

  PlacementView view_;
  json out_ = json::object();
};

// How the option compared, which the what-if answer adds: the memory it
// fills against the policy's limit, the figure the objective weighed, the
// packing and the fewest devices that hold the model.
void addComparison(const Placement& placement, Fields& fields) {
  fields.figure("totalHourlyCost", placement.totalHourlyCost, 4);
  fields.put("replicasPerNode", placement.replicasPerNode);
  fields.figure("requiredMemoryGiB", placement.requiredMemoryGiB, 2);
  fields.figure("memoryFillPercent",
                placement.requiredMemoryGiB / std::max(placement.availableMemoryGiB, 1e-9) * 100,
                1);
  fields.figure("memoryFillLimitPercent", placement.memoryFillLimit * 100, 0);
  fields.figure("performance", placement.performance, 2);
  fields.put("performanceUnit", placement.performanceUnit);
  if (placement.replicasForThroughput > 0) {
    fields.figure("hourlyCostForThroughput", placement.hourlyCost * placement.replicasForThroughput,
                  4);
  }
  if (placement.neededAccelerators > 0) {
    fields.put("neededAccelerators", placement.neededAccelerators);
  }
  if (placement.tier == Tier::CPU) {
    fields.figure("cpuRequest", placement.cpuRequest, 3);
  }
}

}  // namespace

json placementToJson(const Placement& placement, PlacementView view) {
  Fields fields(view);
  fields.put("tier", nameOf(placement.tier));
  fields.text("accelerator", placement.accelerator);
  fields.put("instanceType", placement.instanceType);
  fields.put("acceleratorCount", placement.acceleratorCount);
  fields.put("acceleratorsPerNode", placement.acceleratorsPerInstance);
  if (placement.nodesPerReplica > 1) {
    Fields group(view);
    group.put("nodes", placement.nodesPerReplica);
    group.put("efaInterfaces", placement.efaInterfaces);
    group.figure("networkGbps", placement.networkGbps, 0);
    if (const auto& layout = placement.training; layout.found()) {
      Fields training(view);
      training.put("tensorParallel", layout.tensor);
      training.put("pipelineParallel", layout.pipeline);
      training.put("dataParallel", layout.data);
      training.figure("deviceMemoryGiB", layout.perDevice.totalGiB(), 2);
      training.figure("weightsGradientsGiB", layout.perDevice.weightsGradientsGiB, 2);
      training.figure("optimizerGiB", layout.perDevice.optimizerGiB, 2);
      training.figure("activationsGiB", layout.perDevice.activationsGiB, 2);
      group.put("training", training.take());
    }
    fields.put("acrossNodes", group.take());
  }
  fields.put("capacityType", nameOf(placement.capacityType));
  fields.figure("hourlyCost", placement.hourlyCost, 4);
  fields.figure("monthlyCost", placement.monthlyCost, 2);
  fields.put("replicas", placement.replicas);
  fields.figure("totalMonthlyCost", placement.totalMonthlyCost, 2);
  fields.figure("availableMemoryGiB", placement.availableMemoryGiB, 2);
  fields.put("costModel", nameOf(placement.costModel));
  fields.figure("nodeHourlyCost", placement.nodeHourlyCost, 4);
  fields.put("nodes", placement.nodes);
  fields.put("idleAccelerators", placement.idleAccelerators);
  fields.put("costNote", placement.costNote);
  if (placement.capacityType == CapacityType::Mixed) {
    Fields mix(view);
    mix.put("onDemandReplicas", placement.onDemandReplicas);
    mix.put("spotReplicas", placement.spotReplicas);
    mix.figure("spotNodeHourlyCost", placement.spotNodeHourlyCost, 4);
    fields.put("capacityMix", mix.take());
  }
  if (!placement.reservation.empty()) {
    fields.put("reservation", placement.reservation);
  }
  if (!placement.migProfile.empty()) {
    fields.put("migProfile", placement.migProfile);
  }
  if (placement.timeSlices > 0) {
    fields.put("timeSlices", placement.timeSlices);
  }
  if (placement.claim) {
    fields.put("resourceClaim", true);
  }
  if (placement.wholeDeviceHourlyCost) {
    fields.figure("wholeDeviceHourlyCost", *placement.wholeDeviceHourlyCost, 4);
  }
  fields.figure("latencyMs", placement.latencyMs, 2);
  if (placement.latencyMs) {
    fields.put("latencyPer", latencyUnitName(placement.latencyUnit));
    fields.put("latencyBound", placement.latencyComputeBound ? "compute" : "memory");
    fields.figure("bandwidthUtilization", placement.bandwidthUtilization, 2);
  }
  if (placement.tokensPerSecondPerReplica > 0) {
    fields.figure("tokensPerSecondPerReplica", placement.tokensPerSecondPerReplica, 1);
  }
  if (placement.replicasForThroughput > 0) {
    fields.put("replicasForThroughput", placement.replicasForThroughput);
  }
  if (placement.timeToFirstTokenMs > 0) {
    fields.figure("timeToFirstTokenMs", placement.timeToFirstTokenMs, 1);
  }
  if (placement.memoryRequestGiB > 0) {
    // CPU: the request written; GPU and Neuron: the host memory the node
    // must hold for it, counted when fitting (not written to the template).
    fields.figure(placement.tier == Tier::CPU ? "memoryRequestGiB" : "hostMemoryGiB",
                  placement.memoryRequestGiB, 2);
  }
  if (view == PlacementView::WhatIf) {
    addComparison(placement, fields);
  }
  return fields.take();
}

json alternativeToJson(const Alternative& alternative, PlacementView view) {
  Fields fields(view);
  fields.put("tier", nameOf(alternative.tier));
  fields.put("rejected", alternative.rejected);
  fields.text("instanceType", alternative.instanceType);
  fields.figure("hourlyCost", alternative.hourlyCost, 4);
  if (!alternative.instanceType.empty()) {
    if (view == PlacementView::WhatIf) {
      fields.text("accelerator", alternative.accelerator);
    }
    fields.put("acceleratorCount", alternative.acceleratorCount);
    if (!alternative.migProfile.empty()) {
      fields.put("migProfile", alternative.migProfile);
    }
    if (alternative.timeSlices > 0) {
      fields.put("timeSlices", alternative.timeSlices);
    }
    fields.put("capacityType", nameOf(alternative.capacityType));
  }
  return fields.take();
}

}  // namespace gpuplacement::core
