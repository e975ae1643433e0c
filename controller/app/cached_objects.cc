#include "app/cached_objects.h"

#include <algorithm>

#include "app/packing.h"
#include "base/hash.h"
#include "base/json_access.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

using base::memberOf;
using base::stringMember;

}  // namespace

bool WorkloadObject::hasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

std::uint64_t statusDigest(const json& status) {
  return status.is_null() ? 0 : base::jsonDigest(status);
}

PolicyObject projectPolicy(const json& object, const core::Catalog& catalog,
                           const core::RuleSet& rules) {
  PolicyObject policy;
  const auto& metadata = memberOf(object, "metadata");
  policy.uid = stringMember(metadata, "uid");
  policy.generation = base::integerMember(metadata, "generation");
  static const json kEmpty = json::object();
  const auto& spec = memberOf(object, "spec");
  auto parsed = core::parsePolicySpec(spec.is_null() ? kEmpty : spec, catalog, rules);
  if (parsed) {
    policy.policy = std::move(parsed).value();
  } else {
    policy.error = parsed.error();
  }
  const auto& status = memberOf(object, "status");
  policy.conditions = core::workloadStatusFromJson(status).conditions;
  policy.workloadCount = base::integerMember(status, "workloads");
  policy.statusHash = statusDigest(status);
  return policy;
}

namespace {

// The words of GpuWorkloads, their status and the Deployment fields we
// cache, the most frequent first (the first 64 pack into one byte). Changing
// the list changes nothing but sizes: caches are never persisted.
const Vocabulary& words() {
  static const Vocabulary vocabulary{
      // conditions
      "Valid", "Placed", "Applied", "Ready", "True", "False", "Unknown", "RolloutComplete",
      // spec fields
      "apiVersion", "kind", "name", "targetRef", "model", "parameters", "precision", "framework",
      "architecture", "workload", "latencyTargetMs", "objective", "mode", "constraints", "tiers",
      "capacityType", "maxHourlyCost", "policyRef", "containers",
      // spec values
      "apps/v1", "Deployment", "Apply", "Inference", "Training", "FineTuning", "CostOptimized",
      "Balanced", "PyTorch", "Transformer", "fp16", "bf16", "fp32", "int8", "NVIDIA", "Trainium",
      "Inferentia", "OnDemand",
      // Deployments: what we set and the ownership record
      kFinalizer, "node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "on-demand",
      "spot", "nvidia.com/gpu", "aws.amazon.com/neuron", "Exists", "NoSchedule", "cpu", "memory",
      "nodeSelector", "resources", "tolerations", "key", "operator", "effect",
      // rarer: two bytes each
      "value", "Equal", "NoExecute", "PreferNoSchedule", "ephemeral-storage",
      "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice", "nvidia.com/gpu.product", "1",
      "Recommend", "BatchInference", "MaxPerformance", "fp8", "int4", "Spot", "CPU",
      "instanceTypes", "excludedInstanceTypes", "TensorFlow", "JAX", "ONNX", "Other", "CNN",
      "Diffusion", "Speech", "Any", "InvalidSpec", "CannotPlace", "RecommendOnly", "TargetNotFound",
      "ProgressDeadlineExceeded", "RolloutInProgress", "Recommended"};
  return vocabulary;
}

void packStatus(Packer& out, const core::WorkloadStatus& status) {
  out.integer(status.observedGeneration);
  out.boolean(status.applied.has_value());
  if (const auto& applied = status.applied) {
    out.word(applied->deployment);
    out.word(applied->instanceType);
    out.word(applied->accelerator);
    out.integer(static_cast<std::int64_t>(applied->tier));
    out.integer(applied->acceleratorCount);
    out.integer(static_cast<std::int64_t>(applied->capacityType));
    out.integer(applied->deploymentGeneration);
    out.integer(applied->specGeneration);
    out.timestamp(applied->time);
    out.boolean(applied->replacement);
  }
  out.boolean(status.lastReplacement.has_value());
  if (const auto& last = status.lastReplacement) {
    out.word(last->from);
    out.word(last->to);
    out.string(last->monthlySaving);
    out.timestamp(last->time);
    out.string(last->reason);
  }
  out.integer(static_cast<std::int64_t>(status.conditions.size()));
  for (const auto& condition : status.conditions) {
    out.word(condition.type);
    out.word(condition.status);
    out.word(condition.reason);
    out.string(condition.message);
    out.timestamp(condition.lastTransitionTime);
    out.integer(condition.observedGeneration);
  }
}

core::WorkloadStatus unpackStatus(Unpacker& in) {
  core::WorkloadStatus status;
  status.observedGeneration = in.integer();
  if (in.boolean()) {
    core::AppliedRecord applied;
    applied.deployment = in.word();
    applied.instanceType = in.word();
    applied.accelerator = in.word();
    applied.tier = static_cast<core::Tier>(in.integer());
    applied.acceleratorCount = static_cast<int>(in.integer());
    applied.capacityType = static_cast<core::CapacityType>(in.integer());
    applied.deploymentGeneration = in.integer();
    applied.specGeneration = in.integer();
    applied.time = in.timestamp();
    applied.replacement = in.boolean();
    status.applied = std::move(applied);
  }
  if (in.boolean()) {
    core::ReplacementRecord last;
    last.from = in.word();
    last.to = in.word();
    last.monthlySaving = in.string();
    last.time = in.timestamp();
    last.reason = in.string();
    status.lastReplacement = std::move(last);
  }
  const auto conditions = in.integer();
  for (std::int64_t i = 0; i < conditions; ++i) {
    core::Condition condition;
    condition.type = in.word();
    condition.status = in.word();
    condition.reason = in.word();
    condition.message = in.string();
    condition.lastTransitionTime = in.timestamp();
    condition.observedGeneration = in.integer();
    status.conditions.push_back(std::move(condition));
  }
  return status;
}

void packPairs(Packer& out, const std::map<std::string, std::string>& pairs) {
  out.integer(static_cast<std::int64_t>(pairs.size()));
  for (const auto& [key, value] : pairs) {
    out.word(key);
    out.word(value);
  }
}

std::map<std::string, std::string> unpackPairs(Unpacker& in) {
  std::map<std::string, std::string> pairs;
  const auto count = in.integer();
  for (std::int64_t i = 0; i < count; ++i) {
    auto key = in.word();
    pairs[std::move(key)] = in.word();
  }
  return pairs;
}

}  // namespace

CachedWorkload packWorkload(const json& object) {
  CachedWorkload cached;
  const auto& metadata = memberOf(object, "metadata");
  cached.generation = base::integerMember(metadata, "generation");
  cached.deleting = memberOf(metadata, "deletionTimestamp").is_string();
  std::vector<std::string> finalizers;
  if (const auto& list = memberOf(metadata, "finalizers"); list.is_array()) {
    for (const auto& finalizer : list) {
      if (finalizer.is_string()) {
        finalizers.push_back(finalizer.get<std::string>());
      }
    }
  }
  cached.finalizersDigest = base::jsonDigest(memberOf(metadata, "finalizers"));
  const auto& spec = memberOf(object, "spec");
  if (const auto& name = memberOf(memberOf(spec, "targetRef"), "name"); name.is_string()) {
    cached.targetName = name.get<std::string>();
  }
  if (const auto& policy = memberOf(memberOf(spec, "policyRef"), "name"); policy.is_string()) {
    cached.policyName = policy.get<std::string>();
  }
  const auto& status = memberOf(object, "status");
  const auto readBack = core::workloadStatusFromJson(status);
  cached.statusHash = statusDigest(status);
  cached.movedByReplacement = readBack.applied && readBack.applied->replacement;

  Packer out(words());
  out.uid(stringMember(metadata, "uid"));
  out.integer(static_cast<std::int64_t>(finalizers.size()));
  for (const auto& finalizer : finalizers) {
    out.word(finalizer);
  }
  out.json(spec);
  packStatus(out, readBack);
  cached.packed = out.take();
  cached.packed.shrink_to_fit();
  return cached;
}

WorkloadObject CachedWorkload::unpack(const core::Catalog& catalog) const {
  WorkloadObject workload;
  workload.generation = generation;
  workload.deleting = deleting;
  workload.targetName = targetName;
  workload.policyName = policyName;
  workload.statusHash = statusHash;
  Unpacker in(packed, words());
  workload.uid = in.uid();
  const auto finalizers = in.integer();
  for (std::int64_t i = 0; i < finalizers; ++i) {
    workload.finalizers.push_back(in.word());
  }
  auto parsed = core::parseGpuWorkloadSpec(in.json(), catalog);
  if (parsed) {
    workload.spec = std::move(parsed).value();
  } else {
    workload.specError = parsed.error();
  }
  workload.status = unpackStatus(in);
  return workload;
}

std::uint64_t ownedFieldsDigest(const std::string& annotation) {
  return base::stableHash(annotation);
}

CachedDeployment packDeployment(const core::DeploymentState& state) {
  CachedDeployment cached;
  cached.generation = state.generation;
  cached.observedGeneration = state.observedGeneration;
  cached.replicas = state.replicas;
  cached.updatedReplicas = state.updatedReplicas;
  cached.availableReplicas = state.availableReplicas;
  cached.statusReplicas = state.statusReplicas;
  cached.progressDeadlineExceeded = state.progressDeadlineExceeded;
  // The ownership record, parsed once: for its owner, and to pack it as a
  // tree of words when it reads back as the same text (it does as we write
  // it; as the text otherwise).
  const auto record = state.ownedFields.empty()
                          ? json()
                          : json::parse(state.ownedFields, nullptr, /*allow_exceptions=*/false);
  if (!state.ownedFields.empty()) {
    if (auto owned = core::ownedFieldsFromJson(record); owned) {
      cached.owner = owned->workload;
    }
  }
  cached.ownedDigest = ownedFieldsDigest(state.ownedFields);
  Packer out(words());
  out.uid(state.uid);
  packPairs(out, state.nodeSelector);
  out.integer(static_cast<std::int64_t>(state.tolerations.size()));
  for (const auto& toleration : state.tolerations) {
    out.word(toleration.key);
    out.word(toleration.op);
    out.word(toleration.value);
    out.word(toleration.effect);
  }
  out.integer(static_cast<std::int64_t>(state.containers.size()));
  for (const auto& container : state.containers) {
    out.word(container.name);
    packPairs(out, container.limits);
    packPairs(out, container.requests);
  }
  const bool asTree =
      !state.ownedFields.empty() && !record.is_discarded() && record.dump() == state.ownedFields;
  out.boolean(asTree);
  if (asTree) {
    out.json(record);
  } else {
    out.string(state.ownedFields);
  }
  cached.packed = out.take();
  cached.packed.shrink_to_fit();
  return cached;
}

core::DeploymentState CachedDeployment::unpack() const {
  core::DeploymentState state;
  state.generation = generation;
  state.observedGeneration = observedGeneration;
  state.replicas = replicas;
  state.updatedReplicas = updatedReplicas;
  state.availableReplicas = availableReplicas;
  state.statusReplicas = statusReplicas;
  state.progressDeadlineExceeded = progressDeadlineExceeded;
  Unpacker in(packed, words());
  state.uid = in.uid();
  state.nodeSelector = unpackPairs(in);
  const auto tolerations = in.integer();
  for (std::int64_t i = 0; i < tolerations; ++i) {
    core::Toleration toleration;
    toleration.key = in.word();
    toleration.op = in.word();
    toleration.value = in.word();
    toleration.effect = in.word();
    state.tolerations.push_back(std::move(toleration));
  }
  const auto containers = in.integer();
  for (std::int64_t i = 0; i < containers; ++i) {
    core::ContainerResources container;
    container.name = in.word();
    container.limits = unpackPairs(in);
    container.requests = unpackPairs(in);
    state.containers.push_back(std::move(container));
  }
  state.ownedFields = in.boolean() ? in.json().dump() : in.string();
  return state;
}

}  // namespace gpuplacement::app
