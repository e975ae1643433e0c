#include "core/decide/render.h"

#include <doctest/doctest.h>

#include "support/engine_fixture.h"

namespace gpuplacement::core {

namespace {

Placement placementOn(const char* type, int count, CapacityType capacity = CapacityType::OnDemand) {
  const auto* instance = testing::shippedCatalog()->find(type);
  REQUIRE(instance);
  Placement placement;
  placement.instanceType = type;
  placement.tier = instance->tier;
  placement.acceleratorCount = count;
  placement.capacityType = capacity;
  if (placement.tier == Tier::CPU) {
    placement.cpuRequest = 2;
    placement.memoryRequestGiB = 1.75;
  } else {
    placement.memoryRequestGiB = 5.75;  // the runtime and one checkpoint shard
  }
  return placement;
}

}  // namespace

TEST_CASE("scheduling fields per label scheme and tier") {
  const auto& catalog = *testing::shippedCatalog();
  struct Row {
    const char* label;
    LabelScheme scheme;
    const char* type;
    int count;
    CapacityType capacity;
    std::map<std::string, std::string> selector;
    std::map<std::string, std::string> resources;
    const char* tolerationKey;
  };
  const Row rows[] = {
      {"instance type, NVIDIA",
       LabelScheme::InstanceType,
       "g5.xlarge",
       1,
       CapacityType::OnDemand,
       {{"node.kubernetes.io/instance-type", "g5.xlarge"},
        {"karpenter.sh/capacity-type", "on-demand"}},
       {{"nvidia.com/gpu", "1"}},
       "nvidia.com/gpu"},
      {"Karpenter, NVIDIA spot",
       LabelScheme::Karpenter,
       "g6e.12xlarge",
       2,
       CapacityType::Spot,
       {{"karpenter.k8s.aws/instance-gpu-name", "l40s"},
        {"karpenter.k8s.aws/instance-gpu-count", "4"},
        {"karpenter.k8s.aws/instance-gpu-memory", "45776"},
        {"karpenter.sh/capacity-type", "spot"}},
       {{"nvidia.com/gpu", "2"}},
       "nvidia.com/gpu"},
      {"Karpenter, Inferentia",
       LabelScheme::Karpenter,
       "inf2.xlarge",
       1,
       CapacityType::OnDemand,
       {{"karpenter.k8s.aws/instance-accelerator-name", "inferentia2"},
        {"karpenter.k8s.aws/instance-accelerator-count", "1"},
        {"karpenter.sh/capacity-type", "on-demand"}},
       {{"aws.amazon.com/neuron", "1"}},
       "aws.amazon.com/neuron"},
      {"GPU Feature Discovery, NVIDIA",
       LabelScheme::GPUFeatureDiscovery,
       "p5.48xlarge",
       8,
       CapacityType::OnDemand,
       {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
        {"nvidia.com/gpu.count", "8"},
        {"karpenter.sh/capacity-type", "on-demand"}},
       {{"nvidia.com/gpu", "8"}},
       "nvidia.com/gpu"},
      {"GPU Feature Discovery, Trainium falls back to instance type",
       LabelScheme::GPUFeatureDiscovery,
       "trn1.32xlarge",
       4,
       CapacityType::OnDemand,
       {{"node.kubernetes.io/instance-type", "trn1.32xlarge"},
        {"karpenter.sh/capacity-type", "on-demand"}},
       {{"aws.amazon.com/neuron", "4"}},
       "aws.amazon.com/neuron"},
      {"Karpenter, a fractional GPU selects its instance type",
       LabelScheme::Karpenter,
       "g6f.xlarge",
       1,
       CapacityType::OnDemand,
       {{"node.kubernetes.io/instance-type", "g6f.xlarge"},
        {"karpenter.sh/capacity-type", "on-demand"}},
       {{"nvidia.com/gpu", "1"}},
       "nvidia.com/gpu"},
      {"CPU: cpu and memory requests as sized",
       LabelScheme::Karpenter,
       "m5.xlarge",
       0,
       CapacityType::OnDemand,
       {{"node.kubernetes.io/instance-type", "m5.xlarge"},
        {"karpenter.sh/capacity-type", "on-demand"}},
       {{"cpu", "2"}, {"memory", "1792Mi"}},
       nullptr},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    Policy policy;
    policy.labelScheme = row.scheme;
    const auto scheduling =
        renderScheduling(placementOn(row.type, row.count, row.capacity), catalog, policy);
    CHECK(scheduling.nodeSelector == row.selector);
    CHECK(scheduling.resources == row.resources);
    // Host memory: requested with no limit on accelerated nodes; a CPU
    // placement's memory is requested and limited with its cpu.
    if (row.tolerationKey) {
      CHECK(scheduling.requestsOnly == std::map<std::string, std::string>{{"memory", "5888Mi"}});
    } else {
      CHECK(scheduling.requestsOnly.empty());
    }
    if (row.tolerationKey) {
      REQUIRE(scheduling.tolerations.size() == 1);
      CHECK(scheduling.tolerations[0].key == row.tolerationKey);
      CHECK(scheduling.tolerations[0].op == "Exists");
      CHECK(scheduling.tolerations[0].effect == "NoSchedule");
    } else {
      CHECK(scheduling.tolerations.empty());
    }
  }
}

TEST_CASE("quantities are written as the API server writes them back") {
  const std::pair<double, const char*> memory[] = {
      {1.75, "1792Mi"}, {17.5, "17920Mi"}, {2, "2Gi"}, {0.5, "512Mi"}, {1024, "1Ti"}};
  for (const auto& [gib, text] : memory) {
    CAPTURE(gib);
    CHECK(memoryQuantity(gib) == (std::string(text) == "1Ti" ? "1024Gi" : text));
  }
  CHECK(cpuQuantity(2) == "2");
  CHECK(cpuQuantity(1.5) == "1500m");
}

TEST_CASE("capacity-type label: another key, or none") {
  const auto& catalog = *testing::shippedCatalog();
  Policy nodeGroups;
  nodeGroups.capacityTypeLabel = {"eks.amazonaws.com/capacityType", "ON_DEMAND", "SPOT"};
  auto scheduling =
      renderScheduling(placementOn("g5.xlarge", 1, CapacityType::Spot), catalog, nodeGroups);
  CHECK(scheduling.nodeSelector.at("eks.amazonaws.com/capacityType") == "SPOT");
  CHECK_FALSE(scheduling.nodeSelector.count("karpenter.sh/capacity-type"));

  Policy none;
  none.capacityTypeLabel.key = "";
  scheduling = renderScheduling(placementOn("g5.xlarge", 1), catalog, none);
  CHECK(scheduling.nodeSelector.size() == 1);
}

TEST_CASE("Mixed capacity selects no capacity type and spreads over the label there is") {
  const auto& catalog = *testing::shippedCatalog();
  struct Row {
    const char* label;
    CapacityTypeLabel capacityLabel;
    const char* spreadKey;
  };
  const Row rows[] = {
      {"Karpenter",
       {"karpenter.sh/capacity-type", "on-demand", "spot"},
       "karpenter.sh/capacity-type"},
      {"managed node groups",
       {"eks.amazonaws.com/capacityType", "ON_DEMAND", "SPOT"},
       "eks.amazonaws.com/capacityType"},
      {"no capacity label", {"", "", ""}, ""},
  };
  for (const auto& row : rows) {
    CAPTURE(std::string(row.label));
    Policy policy;
    policy.capacityTypeLabel = row.capacityLabel;
    const auto scheduling =
        renderScheduling(placementOn("g5.xlarge", 1, CapacityType::Mixed), catalog, policy);
    CHECK(scheduling.spreadKey == row.spreadKey);
    CHECK(scheduling.nodeSelector ==
          std::map<std::string, std::string>{{"node.kubernetes.io/instance-type", "g5.xlarge"}});
  }
}

}  // namespace gpuplacement::core
