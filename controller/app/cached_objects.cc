#include "app/cached_objects.h"

#include <algorithm>

#include "app/packing.h"
#include "core/hash.h"
#include "core/json_access.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

using core::memberOf;
using core::stringMember;

}  // namespace

bool WorkloadObject::hasFinalizer() const {
  return std::find(finalizers.begin(), finalizers.end(), kFinalizer) != finalizers.end();
}

std::uint64_t statusDigest(const json& status) {
  return status.is_null() ? 0 : core::jsonDigest(status);
}

PolicyObject projectPolicy(const json& object, const core::Catalog& catalog,
                           const core::RuleSet& rules) {
  PolicyObject policy;
  const auto& metadata = memberOf(object, "metadata");
  policy.uid = stringMember(metadata, "uid");
  policy.generation = core::integerMember(metadata, "generation");
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
  policy.workloadCount = core::integerMember(status, "workloads");
  policy.statusHash = statusDigest(status);
  return policy;
}

namespace {

void packStatus(Packer& out, const core::WorkloadStatus& status) {
  out.integer(status.observedGeneration);
  out.boolean(status.applied.has_value());
  if (const auto& applied = status.applied) {
    out.string(applied->deployment);
    out.string(applied->instanceType);
    out.string(applied->accelerator);
    out.integer(static_cast<std::int64_t>(applied->tier));
    out.integer(applied->acceleratorCount);
    out.integer(static_cast<std::int64_t>(applied->capacityType));
    out.integer(applied->deploymentGeneration);
    out.integer(applied->specGeneration);
    out.string(applied->time);
    out.boolean(applied->replacement);
  }
  out.boolean(status.lastReplacement.has_value());
  if (const auto& last = status.lastReplacement) {
    out.string(last->from);
    out.string(last->to);
    out.string(last->monthlySaving);
    out.string(last->time);
    out.string(last->reason);
  }
  out.integer(static_cast<std::int64_t>(status.conditions.size()));
  for (const auto& condition : status.conditions) {
    out.string(condition.type);
    out.string(condition.status);
    out.string(condition.reason);
    out.string(condition.message);
    out.string(condition.lastTransitionTime);
    out.integer(condition.observedGeneration);
  }
}

core::WorkloadStatus unpackStatus(Unpacker& in) {
  core::WorkloadStatus status;
  status.observedGeneration = in.integer();
  if (in.boolean()) {
    core::AppliedRecord applied;
    applied.deployment = in.string();
    applied.instanceType = in.string();
    applied.accelerator = in.string();
    applied.tier = static_cast<core::Tier>(in.integer());
    applied.acceleratorCount = static_cast<int>(in.integer());
    applied.capacityType = static_cast<core::CapacityType>(in.integer());
    applied.deploymentGeneration = in.integer();
    applied.specGeneration = in.integer();
    applied.time = in.string();
    applied.replacement = in.boolean();
    status.applied = std::move(applied);
  }
  if (in.boolean()) {
    core::ReplacementRecord last;
    last.from = in.string();
    last.to = in.string();
    last.monthlySaving = in.string();
    last.time = in.string();
    last.reason = in.string();
    status.lastReplacement = std::move(last);
  }
  const auto conditions = in.integer();
  for (std::int64_t i = 0; i < conditions; ++i) {
    core::Condition condition;
    condition.type = in.string();
    condition.status = in.string();
    condition.reason = in.string();
    condition.message = in.string();
    condition.lastTransitionTime = in.string();
    condition.observedGeneration = in.integer();
    status.conditions.push_back(std::move(condition));
  }
  return status;
}

void packPairs(Packer& out, const std::map<std::string, std::string>& pairs) {
  out.integer(static_cast<std::int64_t>(pairs.size()));
  for (const auto& [key, value] : pairs) {
    out.string(key);
    out.string(value);
  }
}

std::map<std::string, std::string> unpackPairs(Unpacker& in) {
  std::map<std::string, std::string> pairs;
  const auto count = in.integer();
  for (std::int64_t i = 0; i < count; ++i) {
    auto key = in.string();
    pairs[std::move(key)] = in.string();
  }
  return pairs;
}

}  // namespace

CachedWorkload packWorkload(const json& object) {
  CachedWorkload cached;
  const auto& metadata = memberOf(object, "metadata");
  cached.generation = core::integerMember(metadata, "generation");
  cached.deleting = memberOf(metadata, "deletionTimestamp").is_string();
  std::vector<std::string> finalizers;
  if (const auto& list = memberOf(metadata, "finalizers"); list.is_array()) {
    for (const auto& finalizer : list) {
      if (finalizer.is_string()) {
        finalizers.push_back(finalizer.get<std::string>());
      }
    }
  }
  cached.finalizersDigest = core::jsonDigest(memberOf(metadata, "finalizers"));
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

  Packer out;
  out.string(stringMember(metadata, "uid"));
  out.integer(static_cast<std::int64_t>(finalizers.size()));
  for (const auto& finalizer : finalizers) {
    out.string(finalizer);
  }
  const auto specBytes = json::to_msgpack(spec);
  out.string(std::string_view(reinterpret_cast<const char*>(specBytes.data()), specBytes.size()));
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
  Unpacker in(packed);
  workload.uid = in.string();
  const auto finalizers = in.integer();
  for (std::int64_t i = 0; i < finalizers; ++i) {
    workload.finalizers.push_back(in.string());
  }
  const auto specBytes = in.string();
  const auto spec = json::from_msgpack(specBytes, /*strict=*/true, /*allow_exceptions=*/false);
  auto parsed = core::parseGpuWorkloadSpec(spec.is_discarded() ? json() : spec, catalog);
  if (parsed) {
    workload.spec = std::move(parsed).value();
  } else {
    workload.specError = parsed.error();
  }
  workload.status = unpackStatus(in);
  return workload;
}

std::uint64_t ownedFieldsDigest(const std::string& annotation) {
  return core::stableHash(annotation);
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
  if (!state.ownedFields.empty()) {
    if (auto owned = core::parseOwnedFields(state.ownedFields); owned) {
      cached.owner = owned->workload;
    }
  }
  cached.ownedDigest = ownedFieldsDigest(state.ownedFields);
  Packer out;
  out.string(state.uid);
  packPairs(out, state.nodeSelector);
  out.integer(static_cast<std::int64_t>(state.tolerations.size()));
  for (const auto& toleration : state.tolerations) {
    out.string(toleration.key);
    out.string(toleration.op);
    out.string(toleration.value);
    out.string(toleration.effect);
  }
  out.integer(static_cast<std::int64_t>(state.containers.size()));
  for (const auto& container : state.containers) {
    out.string(container.name);
    packPairs(out, container.limits);
    packPairs(out, container.requests);
  }
  out.string(state.ownedFields);
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
  Unpacker in(packed);
  state.uid = in.string();
  state.nodeSelector = unpackPairs(in);
  const auto tolerations = in.integer();
  for (std::int64_t i = 0; i < tolerations; ++i) {
    core::Toleration toleration;
    toleration.key = in.string();
    toleration.op = in.string();
    toleration.value = in.string();
    toleration.effect = in.string();
    state.tolerations.push_back(std::move(toleration));
  }
  const auto containers = in.integer();
  for (std::int64_t i = 0; i < containers; ++i) {
    core::ContainerResources container;
    container.name = in.string();
    container.limits = unpackPairs(in);
    container.requests = unpackPairs(in);
    state.containers.push_back(std::move(container));
  }
  state.ownedFields = in.string();
  return state;
}

}  // namespace gpuplacement::app
