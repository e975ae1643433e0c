#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/catalog/catalog.h"
#include "core/catalog/types.h"
#include "core/kinds/target.h"

namespace gpuplacement::core {

struct Constraints {
  std::vector<Tier> tiers;                 // empty: any
  std::vector<std::string> instanceTypes;  // empty: any
  std::vector<std::string> excludedInstanceTypes;
  std::optional<double> maxHourlyCost;  // USD per replica-hour
  CapacityType capacityType = CapacityType::OnDemand;
  // When the work must be done by: a Capacity Block that ends before it,
  // or whose end is not known, is not chosen.
  std::optional<Timestamp> deadline;
  // Whether a replica may take a share of a device (a MIG slice) rather
  // than whole ones; Auto: as the policy's spec.sharing says for the kind.
  DeviceSharing sharing = DeviceSharing::Auto;

  bool operator==(const Constraints&) const = default;
};

// The load a replica of an LLM service carries (spec.workload.serving):
// how many sequences it holds at once, each up to how many tokens, and the
// keys and values it keeps for them. Unstated (contextTokens 0): the
// policy's overhead stands for the KV cache and activations.
struct ServingLoad {
  int contextTokens = 0;        // maxContextTokens: prompt and output, per sequence
  int concurrentSequences = 1;  // in flight in one replica (a batch, for batch inference)
  Precision kvPrecision = Precision::FP16;  // fp16, bf16 or fp8
  // The output tokens a second the whole service carries; 0: no target.
  // Replicas stay the team's: the placement says how many it would take.
  double tokensPerSecond = 0;
  // Or the target as requests a second, each of meanPromptTokens in and
  // meanOutputTokens out on average; the means also count the prompts'
  // prefill against a replica's tokens a second. 0: not stated.
  double requestsPerSecond = 0;
  int meanPromptTokens = 0;
  int meanOutputTokens = 0;

  bool stated() const { return contextTokens > 0; }
  // The output tokens a second to carry, from either form; 0: no target.
  double outputTokensPerSecond() const {
    return tokensPerSecond > 0 ? tokensPerSecond : requestsPerSecond * meanOutputTokens;
  }
  // The prompt tokens a replica prefills for each token it outputs; 0: not stated.
  double promptTokensPerOutputToken() const {
    return meanOutputTokens > 0 ? static_cast<double>(meanPromptTokens) / meanOutputTokens : 0;
  }
  bool operator==(const ServingLoad&) const = default;
};

// The names a serving load's fields go by where it was written (the spec's
// paths, or the command line's flags), for the errors checkServingLoad gives.
struct ServingFieldNames {
  std::string contextTokens, tokensPerSecond, requestsPerSecond, meanPromptTokens, meanOutputTokens;
};

// What no single field's range catches: one form of throughput target, the
// means a request rate needs, and mean lengths that fit the context.
Status checkServingLoad(const ServingLoad& load, const ServingFieldNames& names);

// The devices a replica's pod template asks for, where its pods' resources
// cannot change once it is created (a JobSet; a suspended Job on a server
// before Kubernetes 1.36: core/kinds/target_kind.h): one extended resource
// and its count ("nvidia.com/gpu", 1). Empty resource: the placement writes
// the devices itself.
struct FixedDevices {
  std::string resource;
  int count = 0;
  std::string podSet;     // the pod set whose template asks for them
  std::string container;  // and its container

  bool operator==(const FixedDevices&) const = default;
};

// What the engine decides from: the workload's intent.
struct WorkloadIntent {
  WorkloadKind kind = WorkloadKind::Inference;
  std::uint64_t parameters = 0;
  Precision precision = Precision::FP16;
  Framework framework = Framework::PyTorch;
  Architecture architecture = Architecture::Transformer;
  std::string family;  // spec.model.family, where named
  ModelShape shape;    // the family's, or spec.model.shape; zero: not known
  ServingLoad serving;
  std::optional<double> latencyTargetMs;
  Objective objective = Objective::Balanced;
  Constraints constraints;
  int replicas = 1;
  int surge = 0;  // pods a rollout may add above replicas (TargetState::surge)
  // The target's pod template can gain a DRA claim (not a Job's: core/
  // target_kind.h). Where it cannot, whole devices on nodes that offer them
  // only through DRA are asked for by their DeviceClass's extended resource
  // instead, and MIG devices so offered are not candidates (the class cannot
  // name a profile).
  bool claimsWritable = true;
  // A placement keeps to these (the team's, fixed by its kind) or is none.
  FixedDevices fixedDevices;
  // The groups the target's pods form: only then may a replica no node
  // holds span nodes (core/decide/fit.h's fitAcrossNodes).
  PodGroups groups;
  // What the target's pod template already requests per replica (the
  // team's own cpu and memory, summed over its containers; not what the
  // operator set). A node must hold it next to the devices, or the
  // scheduler leaves the pod Pending. Zero: nothing requested.
  double podCpu = 0;
  double podMemoryGiB = 0;

  bool operator==(const WorkloadIntent&) const = default;
};

enum class PlacementMode : std::uint8_t { Apply, Recommend };
}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::PlacementMode> {
  static constexpr std::string_view what = "mode";
  static constexpr auto names = std::to_array<std::string_view>({"Apply", "Recommend"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

// spec.scaling.groupSize: whose is the size of the target's groups, where a
// replica spans nodes. Keep: the team's (GitOps re-applies it), and the
// status says the size the placement needs. Set: the operator writes it
// beside the placement, where the kind lets the size change in place.
enum class GroupSizePolicy : std::uint8_t { Keep, Set };
}  // namespace gpuplacement::core

namespace gpuplacement::base {
template <>
struct EnumNames<core::GroupSizePolicy> {
  static constexpr std::string_view what = "group size policy";
  static constexpr auto names = std::to_array<std::string_view>({"Keep", "Set"});
};
}  // namespace gpuplacement::base

namespace gpuplacement::core {

// spec.scaling: what of the target's size the operator may write.
struct Scaling {
  GroupSizePolicy groupSize = GroupSizePolicy::Keep;

  bool operator==(const Scaling&) const = default;
};

// The object a GpuWorkload places, in its namespace; its apiVersion follows
// from the kind.
struct TargetRef {
  TargetKind kind = TargetKind::Deployment;
  std::string name;

  bool operator==(const TargetRef&) const = default;
};

// "Job llama-training".
inline std::string describeTarget(const TargetRef& target) {
  return describeTarget(target.kind, target.name);
}

// A GpuWorkload's spec: the intent plus where to apply the placement.
struct GpuWorkloadSpec {
  TargetRef targetRef;
  // spec.targetRef.podSets: the pod sets to place (a Ray worker group's
  // name, "leader", "worker"); empty: the kind's default, those that carry
  // the model.
  std::vector<std::string> podSets;
  std::vector<std::string> containers;  // empty: the first container
  WorkloadIntent intent;
  std::string policyName = "default";
  PlacementMode mode = PlacementMode::Apply;
  Scaling scaling;

  bool operator==(const GpuWorkloadSpec&) const = default;
};

// Reads a GpuWorkload spec. Every error names its field from "spec", and
// catches what the CRD schema cannot: unknown instance types, excluded types
// that are also required, contradictory constraints.
Result<GpuWorkloadSpec> parseGpuWorkloadSpec(const nlohmann::json& spec, const Catalog& catalog);

// The spec's intent with what only the target knows: its replicas, its
// rollout's surge, the CPU and memory its pods already request (a fit
// constraint) and, where its pods' resources cannot be written, the devices
// they ask for. `resourcesFrom136`: the API server lets a suspended Job's
// pod resources change (KEP-5440; the command line assumes it does). The
// operator and the command line both decide from this.
WorkloadIntent intentOf(const GpuWorkloadSpec& spec, const TargetState* target,
                        bool resourcesFrom136 = true);

// Checks an intent built by other means (the command line's flags) the same
// way.
Status validateIntent(const WorkloadIntent& intent, const Catalog& catalog);

}  // namespace gpuplacement::core
