#include "app/cached_objects.h"

#include "app/packing.h"
#include "base/hash.h"
#include "base/json_access.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

using base::memberOf;
using base::stringMember;

// The words cached objects repeat (condition types and reasons, label keys
// and values, toleration fields), the most frequent first: the first 64
// pack into one byte. Structure and enums are positional and need none.
// Changing the list changes nothing but sizes: caches are never persisted.
const Vocabulary& words() {
  static const Vocabulary vocabulary{
      // conditions
      "Valid", "Placed", "Applied", "Ready", "True", "False", "Unknown", "RolloutComplete",
      "InvalidSpec", "CannotPlace", "RecommendOnly", "TargetNotFound", "ProgressDeadlineExceeded",
      "RolloutInProgress", "Recommended", "Conflict", "InvalidTarget", "PolicyNotFound",
      "PolicyInvalid", "", "JobRunning", "JobComplete",
      // spec values that are text
      "default", core::kFinalizer,
      // targets: what we set and the ownership record
      "node.kubernetes.io/instance-type", "karpenter.sh/capacity-type", "on-demand", "spot",
      "eks.amazonaws.com/capacityType", "ON_DEMAND", "SPOT", "nvidia.com/gpu",
      "aws.amazon.com/neuron", "Exists", "Equal", "NoSchedule", "1", "2", "4", "8", "true",
      "karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-count",
      "karpenter.k8s.aws/instance-accelerator-name", "karpenter.k8s.aws/instance-accelerator-count",
      "nvidia.com/gpu.product",
      // rarer: two bytes each
      "NoExecute", "PreferNoSchedule", "aws.amazon.com/neuroncore", "aws.amazon.com/neurondevice",
      "server", "main", "app", "ManagerConflict", "spec.template.spec.nodeSelector",
      "spec.template.spec.tolerations", "spec.template.spec.containers",
      "spec.template.spec.schedulingGates", "JobFailed", "JobStarting", "JobSuspended",
      "JobStartedUnplaced", "JobResourcesImmutable", "Complete", "Failed",
      "spec.template.spec.topologySpreadConstraints", "topology.kubernetes.io/zone",
      "kubernetes.io/hostname"};
  return vocabulary;
}

void packWords(Packer& out, const std::vector<std::string>& list) {
  out.integer(static_cast<std::int64_t>(list.size()));
  for (const auto& item : list) {
    out.word(item);
  }
}

std::vector<std::string> unpackWords(Unpacker& in) {
  std::vector<std::string> list;
  for (auto count = in.integer(); count > 0; --count) {
    list.push_back(in.word());
  }
  return list;
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
  for (auto count = in.integer(); count > 0; --count) {
    auto key = in.word();
    pairs[std::move(key)] = in.word();
  }
  return pairs;
}

void packTolerations(Packer& out, const std::vector<core::Toleration>& tolerations) {
  out.integer(static_cast<std::int64_t>(tolerations.size()));
  for (const auto& toleration : tolerations) {
    out.word(toleration.key);
    out.word(toleration.op);
    out.word(toleration.value);
    out.word(toleration.effect);
    out.boolean(toleration.seconds.has_value());
    if (toleration.seconds) {
      out.integer(*toleration.seconds);
    }
  }
}

std::vector<core::Toleration> unpackTolerations(Unpacker& in) {
  std::vector<core::Toleration> tolerations;
  for (auto count = in.integer(); count > 0; --count) {
    core::Toleration toleration;
    toleration.key = in.word();
    toleration.op = in.word();
    toleration.value = in.word();
    toleration.effect = in.word();
    if (in.boolean()) {
      toleration.seconds = in.integer();
    }
    tolerations.push_back(std::move(toleration));
  }
  return tolerations;
}

template <typename E>
void packEnum(Packer& out, E value) {
  out.integer(static_cast<std::int64_t>(value));
}

template <typename E>
E unpackEnum(Unpacker& in) {
  const auto value = in.integer();
  return value >= 0 && static_cast<std::size_t>(value) < base::enumCount<E>()
             ? static_cast<E>(value)
             : E{};
}

void packOptionalReal(Packer& out, const std::optional<double>& value) {
  out.boolean(value.has_value());
  if (value) {
    out.real(*value);
  }
}

std::optional<double> unpackOptionalReal(Unpacker& in) {
  return in.boolean() ? std::optional<double>(in.real()) : std::nullopt;
}

void packConstraints(Packer& out, const core::Constraints& constraints) {
  out.integer(static_cast<std::int64_t>(constraints.tiers.size()));
  for (const auto tier : constraints.tiers) {
    packEnum(out, tier);
  }
  packWords(out, constraints.instanceTypes);
  packWords(out, constraints.excludedInstanceTypes);
  packOptionalReal(out, constraints.maxHourlyCost);
  packEnum(out, constraints.capacityType);
  packEnum(out, constraints.sharing);
  out.boolean(constraints.deadline.has_value());
  if (constraints.deadline) {
    out.integer(
        std::chrono::duration_cast<std::chrono::seconds>(constraints.deadline->time_since_epoch())
            .count());
  }
}

core::Constraints unpackConstraints(Unpacker& in) {
  core::Constraints constraints;
  for (auto count = in.integer(); count > 0; --count) {
    constraints.tiers.push_back(unpackEnum<core::Tier>(in));
  }
  constraints.instanceTypes = unpackWords(in);
  constraints.excludedInstanceTypes = unpackWords(in);
  constraints.maxHourlyCost = unpackOptionalReal(in);
  constraints.capacityType = unpackEnum<core::CapacityType>(in);
  constraints.sharing = unpackEnum<core::DeviceSharing>(in);
  if (in.boolean()) {
    constraints.deadline = core::Timestamp(std::chrono::seconds(in.integer()));
  }
  return constraints;
}

void packIntent(Packer& out, const core::WorkloadIntent& intent) {
  packEnum(out, intent.kind);
  out.integer(static_cast<std::int64_t>(intent.parameters));
  packEnum(out, intent.precision);
  packEnum(out, intent.framework);
  packEnum(out, intent.architecture);
  packOptionalReal(out, intent.latencyTargetMs);
  packEnum(out, intent.objective);
  packConstraints(out, intent.constraints);
  out.integer(intent.replicas);
  out.integer(intent.surge);
  out.string(intent.family);
  for (const int value : {intent.shape.layers, intent.shape.kvHeads, intent.shape.headDim,
                          intent.serving.contextTokens, intent.serving.concurrentSequences,
                          intent.serving.meanPromptTokens, intent.serving.meanOutputTokens}) {
    out.integer(value);
  }
  packEnum(out, intent.serving.kvPrecision);
  out.real(intent.serving.tokensPerSecond);
  out.real(intent.serving.requestsPerSecond);
}

core::WorkloadIntent unpackIntent(Unpacker& in) {
  core::WorkloadIntent intent;
  intent.kind = unpackEnum<core::WorkloadKind>(in);
  intent.parameters = static_cast<std::uint64_t>(in.integer());
  intent.precision = unpackEnum<core::Precision>(in);
  intent.framework = unpackEnum<core::Framework>(in);
  intent.architecture = unpackEnum<core::Architecture>(in);
  intent.latencyTargetMs = unpackOptionalReal(in);
  intent.objective = unpackEnum<core::Objective>(in);
  intent.constraints = unpackConstraints(in);
  intent.replicas = static_cast<int>(in.integer());
  intent.surge = static_cast<int>(in.integer());
  intent.family = in.string();
  for (int* value : {&intent.shape.layers, &intent.shape.kvHeads, &intent.shape.headDim,
                     &intent.serving.contextTokens, &intent.serving.concurrentSequences,
                     &intent.serving.meanPromptTokens, &intent.serving.meanOutputTokens}) {
    *value = static_cast<int>(in.integer());
  }
  intent.serving.kvPrecision = unpackEnum<core::Precision>(in);
  intent.serving.tokensPerSecond = in.real();
  intent.serving.requestsPerSecond = in.real();
  return intent;
}

// The spec as validated, or why it does not validate.
void packSpec(Packer& out, const base::Result<core::GpuWorkloadSpec>& parsed) {
  out.boolean(parsed.ok());
  if (!parsed) {
    out.string(parsed.error().field);
    out.string(parsed.error().message);
    return;
  }
  const auto& spec = *parsed;
  packEnum(out, spec.targetRef.kind);
  out.word(spec.targetRef.name);
  packWords(out, spec.containers);
  packWords(out, spec.podSets);
  packIntent(out, spec.intent);
  out.word(spec.policyName);
  packEnum(out, spec.mode);
  packEnum(out, spec.scaling.groupSize);
}

void unpackSpec(Unpacker& in, core::WorkloadObject& workload) {
  if (!in.boolean()) {
    workload.specError.field = in.string();
    workload.specError.message = in.string();
    return;
  }
  core::GpuWorkloadSpec spec;
  spec.targetRef.kind = unpackEnum<core::TargetKind>(in);
  spec.targetRef.name = in.word();
  spec.containers = unpackWords(in);
  spec.podSets = unpackWords(in);
  spec.intent = unpackIntent(in);
  spec.policyName = in.word();
  spec.mode = unpackEnum<core::PlacementMode>(in);
  spec.scaling.groupSize = unpackEnum<core::GroupSizePolicy>(in);
  workload.spec = std::move(spec);
}

void packApplied(Packer& out, const core::AppliedRecord& applied) {
  packEnum(out, applied.targetKind);
  out.word(applied.targetName);
  out.uid(applied.targetUid);
  out.word(applied.instanceType);
  out.word(applied.accelerator);
  packEnum(out, applied.tier);
  out.integer(applied.acceleratorCount);
  out.word(applied.migProfile);
  out.integer(applied.timeSlices);
  out.boolean(applied.claim);
  packEnum(out, applied.capacityType);
  out.integer(applied.targetGeneration);
  out.integer(applied.specGeneration);
  out.timestamp(applied.time);
  out.boolean(applied.replacement);
}

core::AppliedRecord unpackApplied(Unpacker& in) {
  core::AppliedRecord applied;
  applied.targetKind = unpackEnum<core::TargetKind>(in);
  applied.targetName = in.word();
  applied.targetUid = in.uid();
  applied.instanceType = in.word();
  applied.accelerator = in.word();
  applied.tier = unpackEnum<core::Tier>(in);
  applied.acceleratorCount = static_cast<int>(in.integer());
  applied.migProfile = in.word();
  applied.timeSlices = static_cast<int>(in.integer());
  applied.claim = in.boolean();
  applied.capacityType = unpackEnum<core::CapacityType>(in);
  applied.targetGeneration = in.integer();
  applied.specGeneration = in.integer();
  applied.time = in.timestamp();
  applied.replacement = in.boolean();
  return applied;
}

// The types left for lack of capacity: what the fallback remembers between
// reconciles (and across restarts, through the status).
void packUnavailable(Packer& out, const std::vector<core::UnavailableType>& unavailable) {
  out.integer(static_cast<std::int64_t>(unavailable.size()));
  for (const auto& entry : unavailable) {
    out.word(entry.instanceType);
    packEnum(out, entry.capacityType);
    out.timestamp(entry.since);
    out.timestamp(entry.until);
    out.string(entry.message);
  }
}

std::vector<core::UnavailableType> unpackUnavailable(Unpacker& in) {
  std::vector<core::UnavailableType> unavailable;
  for (auto count = in.integer(); count > 0; --count) {
    core::UnavailableType entry;
    entry.instanceType = in.word();
    entry.capacityType = unpackEnum<core::CapacityType>(in);
    entry.since = in.timestamp();
    entry.until = in.timestamp();
    entry.message = in.string();
    unavailable.push_back(std::move(entry));
  }
  return unavailable;
}

void packStatus(Packer& out, const core::WorkloadStatus& status) {
  out.integer(status.observedGeneration);
  out.boolean(status.applied.has_value());
  if (status.applied) {
    packApplied(out, *status.applied);
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
  packUnavailable(out, status.unavailable);
  out.boolean(status.reverts.has_value());
  if (const auto& reverts = status.reverts) {
    out.integer(reverts->count);
    out.timestamp(reverts->since);
    out.timestamp(reverts->last);
    packWords(out, reverts->fields);
    out.string(reverts->fieldManager);
    out.integer(reverts->stoppedAtGeneration);
    out.integer(static_cast<std::int64_t>(reverts->stoppedAtTemplate));
  }
  out.boolean(status.run.has_value());
  if (const auto& run = status.run) {
    out.word(run->job);
    out.timestamp(run->startTime);
    out.timestamp(run->endTime);
    out.integer(run->durationSeconds);
    out.word(run->outcome);
    out.word(run->instanceType);
    packEnum(out, run->capacityType);
    out.integer(run->pods);
    out.word(run->hourlyCost);
    out.word(run->cost);
  }
}

core::WorkloadStatus unpackStatus(Unpacker& in) {
  core::WorkloadStatus status;
  status.observedGeneration = in.integer();
  if (in.boolean()) {
    status.applied = unpackApplied(in);
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
  for (auto count = in.integer(); count > 0; --count) {
    core::Condition condition;
    condition.type = in.word();
    condition.status = in.word();
    condition.reason = in.word();
    condition.message = in.string();
    condition.lastTransitionTime = in.timestamp();
    condition.observedGeneration = in.integer();
    status.conditions.push_back(std::move(condition));
  }
  status.unavailable = unpackUnavailable(in);
  if (in.boolean()) {
    core::RevertRecord reverts;
    reverts.count = static_cast<int>(in.integer());
    reverts.since = in.timestamp();
    reverts.last = in.timestamp();
    reverts.fields = unpackWords(in);
    reverts.fieldManager = in.string();
    reverts.stoppedAtGeneration = in.integer();
    reverts.stoppedAtTemplate = static_cast<std::uint64_t>(in.integer());
    status.reverts = std::move(reverts);
  }
  if (in.boolean()) {
    core::JobRunRecord run;
    run.job = in.word();
    run.startTime = in.timestamp();
    run.endTime = in.timestamp();
    run.durationSeconds = in.integer();
    run.outcome = in.word();
    run.instanceType = in.word();
    run.capacityType = unpackEnum<core::CapacityType>(in);
    run.pods = static_cast<int>(in.integer());
    run.hourlyCost = in.word();
    run.cost = in.word();
    status.run = std::move(run);
  }
  return status;
}

std::vector<std::string> finalizersOf(const json& metadata) {
  std::vector<std::string> finalizers;
  if (const auto& list = memberOf(metadata, "finalizers"); list.is_array()) {
    for (const auto& finalizer : list) {
      if (finalizer.is_string()) {
        finalizers.push_back(finalizer.get<std::string>());
      }
    }
  }
  return finalizers;
}

// Where an invalid spec still says which target and policy it means, so
// the indexes hold it anyway (a kind the operator does not place: none).
void referencesOf(const json& spec, CachedWorkload& cached) {
  const auto& target = memberOf(spec, "targetRef");
  const auto& kind = memberOf(target, "kind");
  const auto known = kind.is_string() ? core::targetKindNamed(kind.get<std::string>())
                                      : std::optional(core::TargetKind::Deployment);
  if (const auto& name = memberOf(target, "name"); name.is_string() && known) {
    cached.targetKind = *known;
    cached.targetName = name.get<std::string>();
  }
  if (const auto& policy = memberOf(memberOf(spec, "policyRef"), "name"); policy.is_string()) {
    cached.policyName = policy.get<std::string>();
  }
}

}  // namespace

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
  policy.statusHash = core::statusDigest(status);
  return policy;
}

CachedWorkload packWorkload(const json& object, const core::Catalog& catalog) {
  CachedWorkload cached;
  const auto& metadata = memberOf(object, "metadata");
  cached.generation = base::integerMember(metadata, "generation");
  cached.deleting = memberOf(metadata, "deletionTimestamp").is_string();
  cached.finalizersDigest = base::jsonDigest(memberOf(metadata, "finalizers"));
  const auto& spec = memberOf(object, "spec");
  const auto parsed = core::parseGpuWorkloadSpec(spec, catalog);
  if (parsed) {
    cached.targetKind = parsed->targetRef.kind;
    cached.targetName = parsed->targetRef.name;
    cached.policyName = parsed->policyName;
  } else {
    referencesOf(spec, cached);
  }
  const auto& status = memberOf(object, "status");
  const auto readBack = core::workloadStatusFromJson(status);
  cached.statusHash = core::statusDigest(status);
  cached.movedByReplacement = readBack.applied && readBack.applied->replacement;

  Packer out(words());
  out.uid(stringMember(metadata, "uid"));
  packWords(out, finalizersOf(metadata));
  packSpec(out, parsed);
  packStatus(out, readBack);
  cached.packed = out.take();
  cached.packed.shrink_to_fit();
  return cached;
}

core::WorkloadObject CachedWorkload::unpack() const {
  core::WorkloadObject workload;
  workload.generation = generation;
  workload.deleting = deleting;
  workload.targetKind = targetKind;
  workload.targetName = targetName;
  workload.policyName = policyName;
  workload.statusHash = statusHash;
  Unpacker in(packed, words());
  workload.uid = in.uid();
  workload.finalizers = unpackWords(in);
  unpackSpec(in, workload);
  workload.status = unpackStatus(in);
  return workload;
}

namespace {

void packOwnership(Packer& out, const core::OwnershipRecord& record) {
  packEnum(out, record.form);
  out.integer(static_cast<std::int64_t>(record.digest));
  if (record.form != core::OwnershipRecord::Form::Readable) {
    return;
  }
  const auto& fields = record.fields;
  out.word(fields.workload);
  packPairs(out, fields.nodeSelector);
  packTolerations(out, fields.tolerations);
  out.word(fields.spreadKey);
  out.integer(static_cast<std::int64_t>(fields.resources.size()));
  for (const auto& [container, resources] : fields.resources) {
    out.word(container);
    packPairs(out, resources);
  }
  out.boolean(fields.pods.has_value());
  if (fields.pods) {
    packPairs(out, fields.pods->nodeSelector);
    packTolerations(out, fields.pods->tolerations);
  }
  out.word(fields.claimTemplate);
  out.word(fields.claimContainer);
  packWords(out, fields.podSets);
  out.boolean(fields.groupSize.has_value());
  if (const auto& size = fields.groupSize) {
    out.word(size->pointer);
    out.integer(size->set);
    out.integer(size->was);
    out.integer(size->minWas.value_or(-1));
    out.integer(size->maxWas.value_or(-1));
  }
}

core::OwnershipRecord unpackOwnership(Unpacker& in) {
  core::OwnershipRecord record;
  record.form = static_cast<core::OwnershipRecord::Form>(in.integer());
  record.digest = static_cast<std::uint64_t>(in.integer());
  if (record.form != core::OwnershipRecord::Form::Readable) {
    return record;
  }
  auto& fields = record.fields;
  fields.workload = in.word();
  fields.nodeSelector = unpackPairs(in);
  fields.tolerations = unpackTolerations(in);
  fields.spreadKey = in.word();
  for (auto count = in.integer(); count > 0; --count) {
    auto container = in.word();
    fields.resources[std::move(container)] = unpackPairs(in);
  }
  if (in.boolean()) {
    core::PodScheduling pods;
    pods.nodeSelector = unpackPairs(in);
    pods.tolerations = unpackTolerations(in);
    fields.pods = std::move(pods);
  }
  fields.claimTemplate = in.word();
  fields.claimContainer = in.word();
  fields.podSets = unpackWords(in);
  if (in.boolean()) {
    core::OwnedGroupSize size;
    size.pointer = in.word();
    size.set = static_cast<std::int32_t>(in.integer());
    size.was = static_cast<std::int32_t>(in.integer());
    for (auto* bound : {&size.minWas, &size.maxWas}) {
      if (const auto value = in.integer(); value >= 0) {
        *bound = static_cast<std::int32_t>(value);
      }
    }
    fields.groupSize = std::move(size);
  }
  return record;
}

void packJob(Packer& out, const core::JobProgress& job) {
  out.boolean(job.suspended);
  out.boolean(job.queuedElsewhere);
  out.boolean(job.queuedByKueue);
  out.timestamp(job.startTime);
  out.integer(job.active);
  packEnum(out, job.end);
  out.timestamp(job.endTime);
  out.string(job.endReason);
  out.word(job.waitsFor);
  out.word(job.runsOn);
}

core::JobProgress unpackJob(Unpacker& in) {
  core::JobProgress job;
  job.suspended = in.boolean();
  job.queuedElsewhere = in.boolean();
  job.queuedByKueue = in.boolean();
  job.startTime = in.timestamp();
  job.active = static_cast<std::int32_t>(in.integer());
  job.end = unpackEnum<core::JobProgress::End>(in);
  job.endTime = in.timestamp();
  job.endReason = in.string();
  job.waitsFor = in.word();
  job.runsOn = in.word();
  return job;
}

// A pod template's fields but its digest (the target's is a field of its
// own); the template itself as text when the kind keeps it.
void packTemplate(Packer& out, const core::PodTemplateState& templ) {
  packPairs(out, templ.nodeSelector);
  packTolerations(out, templ.tolerations);
  packWords(out, templ.spreadKeys);
  packPairs(out, templ.podLabels);
  out.integer(static_cast<std::int64_t>(templ.containers.size()));
  for (const auto& container : templ.containers) {
    out.word(container.name);
    packPairs(out, container.limits);
    packPairs(out, container.requests);
    out.integer(static_cast<std::int64_t>(container.claims.size()));
    for (const auto& [name, request] : container.claims) {
      out.word(name);
      out.word(request);
    }
  }
  packPairs(out, templ.podClaims);
  out.boolean(templ.gated);
  out.boolean(templ.podScheduling.has_value());
  if (templ.podScheduling) {
    out.string(*templ.podScheduling);
  }
  out.string(templ.raw.is_null() ? std::string() : templ.raw.dump());
}

void unpackTemplate(Unpacker& in, core::PodTemplateState& templ) {
  templ.nodeSelector = unpackPairs(in);
  templ.tolerations = unpackTolerations(in);
  templ.spreadKeys = unpackWords(in);
  templ.podLabels = unpackPairs(in);
  for (auto count = in.integer(); count > 0; --count) {
    core::ContainerResources container;
    container.name = in.word();
    container.limits = unpackPairs(in);
    container.requests = unpackPairs(in);
    for (auto claims = in.integer(); claims > 0; --claims) {
      auto name = in.word();
      container.claims.emplace_back(std::move(name), in.word());
    }
    templ.containers.push_back(std::move(container));
  }
  templ.podClaims = unpackPairs(in);
  templ.gated = in.boolean();
  if (in.boolean()) {
    templ.podScheduling = in.string();
  }
  if (auto raw = in.string(); !raw.empty()) {
    templ.raw = nlohmann::json::parse(raw);
  }
}

}  // namespace

CachedTarget packTarget(const core::TargetState& state) {
  CachedTarget cached;
  cached.kind = state.kind;
  cached.generation = state.generation;
  cached.observedGeneration = state.observedGeneration;
  cached.replicas = state.replicas;
  cached.updatedReplicas = state.updatedReplicas;
  cached.availableReplicas = state.availableReplicas;
  cached.statusReplicas = state.statusReplicas;
  cached.progressDeadlineExceeded = state.progressDeadlineExceeded;
  cached.revisionPending = state.revisionPending;
  cached.templateDigest = state.templateDigest;
  cached.owner = state.ownership.fields.workload;
  cached.ownedDigest = state.ownership.digest;
  Packer out(words());
  out.uid(state.uid);
  packTemplate(out, state);
  out.boolean(state.annotated);
  out.integer(static_cast<std::int64_t>(state.podSets.size()));
  for (const auto& podSet : state.podSets) {
    out.word(podSet.name);
    out.word(podSet.role);
    out.boolean(podSet.placedByDefault);
    out.integer(podSet.replicas);
    out.word(podSet.templatePointer);
  }
  out.integer(static_cast<std::int64_t>(state.podSetTemplates.size()));
  for (const auto& templ : state.podSetTemplates) {
    packTemplate(out, templ);
    out.integer(static_cast<std::int64_t>(templ.templateDigest));
  }
  packOwnership(out, state.ownership);
  if (!core::traitsOf(state.kind).suspendPointer.empty()) {
    packJob(out, state.job);
  }
  // How its rollout goes (a few bytes; zero where the kind has none).
  out.boolean(state.onDelete);
  out.integer(state.partition);
  out.integer(state.surge);
  out.integer(state.unavailable);
  out.boolean(state.recreate);
  // The groups its pods form (a few bytes; none for most kinds).
  out.integer(state.groups.groups);
  out.integer(state.groups.size);
  out.word(state.groups.sizeField);
  out.word(state.groups.labels.member);
  out.word(state.groups.labels.group);
  out.integer(state.groups.affinityFixed ? 1 : 0);
  out.integer(state.groups.sizeFixed ? 1 : 0);
  out.word(state.groups.sizePointer);
  out.integer(state.groups.bounds.min);
  out.integer(state.groups.bounds.max);
  out.word(state.groups.bounds.minPointer);
  out.word(state.groups.bounds.maxPointer);
  out.string(state.groups.sizeKeptBy);
  out.string(state.placedThrough);
  cached.packed = out.take();
  cached.packed.shrink_to_fit();
  return cached;
}

core::TargetState CachedTarget::unpack() const {
  core::TargetState state;
  state.kind = kind;
  state.generation = generation;
  state.observedGeneration = observedGeneration;
  state.replicas = replicas;
  state.updatedReplicas = updatedReplicas;
  state.availableReplicas = availableReplicas;
  state.statusReplicas = statusReplicas;
  state.progressDeadlineExceeded = progressDeadlineExceeded;
  state.revisionPending = revisionPending;
  state.templateDigest = templateDigest;
  Unpacker in(packed, words());
  state.uid = in.uid();
  unpackTemplate(in, state);
  state.annotated = in.boolean();
  for (auto count = in.integer(); count > 0; --count) {
    core::PodSet podSet;
    podSet.name = in.word();
    podSet.role = in.word();
    podSet.placedByDefault = in.boolean();
    podSet.replicas = static_cast<std::int32_t>(in.integer());
    podSet.templatePointer = in.word();
    state.podSets.push_back(std::move(podSet));
  }
  for (auto count = in.integer(); count > 0; --count) {
    core::PodTemplateState templ;
    unpackTemplate(in, templ);
    templ.templateDigest = static_cast<std::uint64_t>(in.integer());
    state.podSetTemplates.push_back(std::move(templ));
  }
  state.ownership = unpackOwnership(in);
  if (!core::traitsOf(kind).suspendPointer.empty()) {
    state.job = unpackJob(in);
  }
  state.onDelete = in.boolean();
  state.partition = static_cast<std::int32_t>(in.integer());
  state.surge = static_cast<std::int32_t>(in.integer());
  state.unavailable = static_cast<std::int32_t>(in.integer());
  state.recreate = in.boolean();
  state.groups.groups = static_cast<std::int32_t>(in.integer());
  state.groups.size = static_cast<std::int32_t>(in.integer());
  state.groups.sizeField = in.word();
  state.groups.labels.member = in.word();
  state.groups.labels.group = in.word();
  state.groups.affinityFixed = in.integer() != 0;
  state.groups.sizeFixed = in.integer() != 0;
  state.groups.sizePointer = in.word();
  state.groups.bounds.min = static_cast<std::int32_t>(in.integer());
  state.groups.bounds.max = static_cast<std::int32_t>(in.integer());
  state.groups.bounds.minPointer = in.word();
  state.groups.bounds.maxPointer = in.word();
  state.groups.sizeKeptBy = in.string();
  state.placedThrough = in.string();
  return state;
}

}  // namespace gpuplacement::app
