#include "core/intent/workload.h"

#include <algorithm>
#include <cstdio>

#include "base/json_reader.h"
#include "base/time_format.h"
#include "core/catalog/quantity.h"
#include "core/kinds/pod_sets.h"

namespace gpuplacement::core {

using base::ObjectReader;
namespace {

using json = nlohmann::json;

Result<std::uint64_t> readParameters(const ObjectReader& model) {
  if (!model.has("parameters")) {
    return Error{model.fieldPath("parameters"), "required (e.g. 7B, 350M, 7e9)"};
  }
  const auto& value = model.at("parameters");
  Result<std::uint64_t> parsed = Error{};
  if (value.is_string()) {
    parsed = parseParameterCount(value.get<std::string>());
  } else if (value.is_number()) {
    // YAML reads 7000000000 and 7e9 as numbers.
    const double number = value.get<double>();
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", number);
    parsed = value.is_number_unsigned()
                 ? parseParameterCount(std::to_string(value.get<std::uint64_t>()))
                 : parseParameterCount(text);
  } else {
    return Error{model.fieldPath("parameters"), "must be a count such as 7B or 7000000000"};
  }
  if (!parsed) {
    return Error{model.fieldPath("parameters"), parsed.error().message};
  }
  return parsed;
}

Status readConstraints(const ObjectReader& spec, Constraints& constraints) {
  const auto reader = spec.child("constraints");
  if (auto ok = reader.requireObject(true); !ok) {
    return ok.error();
  }
  if (auto ok = reader.onlyKeys({"tiers", "instanceTypes", "excludedInstanceTypes", "maxHourlyCost",
                                 "capacityType", "deadline", "sharing"});
      !ok) {
    return ok.error();
  }
  auto deadline = reader.optionalString("deadline");
  if (!deadline) {
    return deadline.error();
  }
  if (*deadline) {
    auto parsed = base::parseRfc3339(**deadline);
    if (!parsed) {
      return Error{reader.fieldPath("deadline"),
                   "must be an RFC 3339 time such as 2026-12-24T18:00:00Z"};
    }
    constraints.deadline = *parsed;
  }
  auto tiers = reader.enumList<Tier>("tiers");
  auto types = reader.stringList("instanceTypes");
  auto excluded = reader.stringList("excludedInstanceTypes");
  auto cost = reader.optionalNumber("maxHourlyCost", 0.0001, 1e5);
  auto capacity = reader.optionalEnum<CapacityType>("capacityType");
  auto sharing = reader.optionalEnum<DeviceSharing>("sharing");
  for (const Error* error :
       {tiers ? nullptr : &tiers.error(), types ? nullptr : &types.error(),
        excluded ? nullptr : &excluded.error(), cost ? nullptr : &cost.error(),
        capacity ? nullptr : &capacity.error(), sharing ? nullptr : &sharing.error()}) {
    if (error) {
      return *error;
    }
  }
  constraints.tiers = *tiers;
  constraints.instanceTypes = *types;
  constraints.excludedInstanceTypes = *excluded;
  constraints.maxHourlyCost = *cost;
  if (*capacity == CapacityType::Reserved) {
    return Error{reader.fieldPath("capacityType"), std::string(kReservedNotAsked)};
  }
  constraints.capacityType = capacity->value_or(constraints.capacityType);
  constraints.sharing = sharing->value_or(constraints.sharing);
  return Ok{};
}

}  // namespace

Status validateIntent(const WorkloadIntent& intent, const Catalog& catalog) {
  const auto& constraints = intent.constraints;
  if (intent.parameters == 0) {
    return Error{"spec.model.parameters", "required (e.g. 7B, 350M, 7e9)"};
  }
  if (intent.latencyTargetMs && !(*intent.latencyTargetMs > 0)) {
    return Error{"spec.workload.latencyTargetMs", "must be a positive number of milliseconds"};
  }
  if (intent.replicas < 0) {
    return Error{"replicas", "must not be negative"};
  }
  if (const auto& serving = intent.serving; serving.stated()) {
    if (intent.kind != WorkloadKind::Inference && intent.kind != WorkloadKind::BatchInference) {
      return Error{"spec.workload.serving",
                   "a serving load is for Inference and BatchInference, not " +
                       std::string(nameOf(intent.kind))};
    }
    if (intent.architecture != Architecture::Transformer) {
      return Error{"spec.workload.serving",
                   "the KV cache it sizes is a Transformer decoder's; the model's architecture "
                   "is " +
                       std::string(nameOf(intent.architecture))};
    }
    if (!intent.shape.known()) {
      return Error{"spec.workload.serving",
                   "the KV cache needs the model's shape: name spec.model.family, or state "
                   "spec.model.shape (layers, kvHeads, headDim)"};
    }
    if (serving.kvPrecision != Precision::FP16 && serving.kvPrecision != Precision::BF16 &&
        serving.kvPrecision != Precision::FP8) {
      return Error{"spec.workload.serving.kvCachePrecision",
                   "serving stacks keep the KV cache at fp16, bf16 or fp8, not " +
                       std::string(nameOf(serving.kvPrecision))};
    }
  }
  if (intent.kind == WorkloadKind::Training &&
      (intent.precision == Precision::INT8 || intent.precision == Precision::INT4)) {
    return Error{"spec.model.precision",
                 std::string(nameOf(intent.precision)) +
                     " cannot be fully trained: training keeps 16-bit weights and gradients, "
                     "fp32 master weights and optimizer state whatever the storage format. To "
                     "train adapters over a quantized base (QLoRA), use workload.kind FineTuning; "
                     "to train every weight, use bf16, fp16 or fp8"};
  }
  const auto checkTypes = [&](const std::vector<std::string>& types, const char* field) -> Status {
    for (std::size_t i = 0; i < types.size(); ++i) {
      if (!catalog.find(types[i])) {
        return Error{std::string("spec.constraints.") + field + "[" + std::to_string(i) + "]",
                     "\"" + types[i] + "\" is not an instance type of the catalog"};
      }
    }
    return Ok{};
  };
  if (auto ok = checkTypes(constraints.instanceTypes, "instanceTypes"); !ok) {
    return ok;
  }
  if (auto ok = checkTypes(constraints.excludedInstanceTypes, "excludedInstanceTypes"); !ok) {
    return ok;
  }
  for (std::size_t i = 0; i < constraints.instanceTypes.size(); ++i) {
    const auto& type = constraints.instanceTypes[i];
    if (std::find(constraints.excludedInstanceTypes.begin(),
                  constraints.excludedInstanceTypes.end(),
                  type) != constraints.excludedInstanceTypes.end()) {
      return Error{"spec.constraints.instanceTypes[" + std::to_string(i) + "]",
                   "\"" + type + "\" is both allowed and excluded"};
    }
    if (!constraints.tiers.empty()) {
      const auto tier = catalog.find(type)->tier;
      if (std::find(constraints.tiers.begin(), constraints.tiers.end(), tier) ==
          constraints.tiers.end()) {
        return Error{"spec.constraints.instanceTypes[" + std::to_string(i) + "]",
                     "\"" + type + "\" is a " + std::string(nameOf(tier)) +
                         " instance, outside the allowed tiers"};
      }
    }
  }
  return Ok{};
}

namespace {

Status readTarget(const ObjectReader& spec, TargetRef& ref, std::vector<std::string>& podSetNames) {
  const auto target = spec.child("targetRef");
  if (!spec.has("targetRef")) {
    return Error{"spec.targetRef", "required: the Deployment, StatefulSet or Job to place"};
  }
  if (auto ok = target.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = target.onlyKeys({"apiVersion", "kind", "name", "podSets"}); !ok) {
    return ok.error();
  }
  auto podSets = target.stringList("podSets");
  if (!podSets) {
    return podSets.error();
  }
  for (std::size_t i = 0; i < podSets->size(); ++i) {
    const auto& podSet = (*podSets)[i];
    const auto field = "spec.targetRef.podSets[" + std::to_string(i) + "]";
    if (podSet.empty()) {
      return Error{field, "must name a pod set"};
    }
    if (std::find(podSets->begin(), podSets->begin() + static_cast<std::ptrdiff_t>(i), podSet) !=
        podSets->begin() + static_cast<std::ptrdiff_t>(i)) {
      return Error{field, base::quoted(podSet) + " is named twice"};
    }
  }
  podSetNames = std::move(*podSets);
  auto name = target.string("name");
  auto kind = target.optionalString("kind");
  auto version = target.optionalString("apiVersion");
  for (const Error* error : {name ? nullptr : &name.error(), kind ? nullptr : &kind.error(),
                             version ? nullptr : &version.error()}) {
    if (error) {
      return *error;
    }
  }
  ref.name = *name;
  const std::string kindName = kind->value_or("Deployment");
  const auto known = targetKindNamed(kindName);
  if (!known) {
    return Error{"spec.targetRef.kind", base::quoted(kindName) +
                                            " is not a kind the operator places; it places " +
                                            supportedTargets()};
  }
  ref.kind = *known;
  if (*version && **version != apiVersionOf(ref.kind)) {
    return Error{"spec.targetRef.apiVersion",
                 base::quoted(**version) + " does not serve " + kindName + ": use " +
                     std::string(apiVersionOf(ref.kind)) + " (or leave it out)"};
  }
  return Ok{};
}

// spec.workload.serving: the load one replica carries.
Status readServing(const ObjectReader& workload, ServingLoad& serving) {
  if (!workload.has("serving")) {
    return Ok{};
  }
  const auto load = workload.child("serving");
  if (auto ok = load.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = load.onlyKeys({"maxContextTokens", "concurrentSequences", "kvCachePrecision",
                               "tokensPerSecond", "requestsPerSecond", "meanPromptTokens",
                               "meanOutputTokens"});
      !ok) {
    return ok.error();
  }
  auto context = load.optionalInteger("maxContextTokens", 1, 10'000'000);
  auto sequences = load.optionalInteger("concurrentSequences", 1, 100'000);
  auto precision = load.optionalEnum<Precision>("kvCachePrecision");
  auto tokens = load.optionalNumber("tokensPerSecond", 0.001, 1e9);
  auto requests = load.optionalNumber("requestsPerSecond", 0.001, 1e7);
  auto prompt = load.optionalInteger("meanPromptTokens", 1, 10'000'000);
  auto output = load.optionalInteger("meanOutputTokens", 1, 10'000'000);
  for (const Error* error :
       {context ? nullptr : &context.error(), sequences ? nullptr : &sequences.error(),
        precision ? nullptr : &precision.error(), tokens ? nullptr : &tokens.error(),
        requests ? nullptr : &requests.error(), prompt ? nullptr : &prompt.error(),
        output ? nullptr : &output.error()}) {
    if (error) {
      return *error;
    }
  }
  if (!*context) {
    return Error{load.fieldPath("maxContextTokens"),
                 "required: the longest sequence a replica serves, prompt and output"};
  }
  serving.contextTokens = static_cast<int>(**context);
  serving.concurrentSequences = static_cast<int>(sequences->value_or(1));
  serving.kvPrecision = precision->value_or(Precision::FP16);
  serving.tokensPerSecond = tokens->value_or(0);
  serving.requestsPerSecond = requests->value_or(0);
  serving.meanPromptTokens = static_cast<int>(prompt->value_or(0));
  serving.meanOutputTokens = static_cast<int>(output->value_or(0));
  return checkServingLoad(serving,
                          {load.fieldPath("maxContextTokens"), load.fieldPath("tokensPerSecond"),
                           load.fieldPath("requestsPerSecond"), load.fieldPath("meanPromptTokens"),
                           load.fieldPath("meanOutputTokens")});
}

Status readWorkload(const ObjectReader& spec, WorkloadIntent& intent) {
  const auto workload = spec.child("workload");
  if (!spec.has("workload")) {
    return Error{"spec.workload", "required: at least the workload kind"};
  }
  if (auto ok = workload.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = workload.onlyKeys({"kind", "latencyTargetMs", "serving"}); !ok) {
    return ok.error();
  }
  auto kind = workload.optionalEnum<WorkloadKind>("kind");
  if (!kind) {
    return kind.error();
  }
  if (!*kind) {
    return Error{"spec.workload.kind", "required (use " + allowedValues<WorkloadKind>() + ")"};
  }
  intent.kind = **kind;
  auto latency = workload.optionalNumber("latencyTargetMs", 0.001, 3.6e6);
  if (!latency) {
    return latency.error();
  }
  intent.latencyTargetMs = *latency;
  return readServing(workload, intent.serving);
}

// spec.model.family (one the catalog lists) and spec.model.shape, which
// states or overrides the family's.
Status readFamily(const ObjectReader& model, const Catalog& catalog, const ModelFamily*& family,
                  WorkloadIntent& intent) {
  auto name = model.optionalString("family");
  if (!name) {
    return name.error();
  }
  if (*name) {
    family = catalog.modelFamily(**name);
    if (!family) {
      return Error{model.fieldPath("family"),
                   base::quoted(**name) + " is not a model family of the catalog (" +
                       catalog.modelFamilyNames() + "); state spec.model.shape for another model"};
    }
    intent.family = family->name;
    intent.shape = family->shape;
  }
  if (!model.has("shape")) {
    return Ok{};
  }
  const auto shape = model.child("shape");
  if (auto ok = shape.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = shape.onlyKeys({"layers", "kvHeads", "headDim"}); !ok) {
    return ok.error();
  }
  auto layers = shape.integer("layers", 1, 1000);
  auto kvHeads = shape.integer("kvHeads", 1, 1024);
  auto headDim = shape.integer("headDim", 1, 4096);
  for (const Error* error :
       {layers ? nullptr : &layers.error(), kvHeads ? nullptr : &kvHeads.error(),
        headDim ? nullptr : &headDim.error()}) {
    if (error) {
      return *error;
    }
  }
  intent.shape = {static_cast<int>(*layers), static_cast<int>(*kvHeads),
                  static_cast<int>(*headDim)};
  return Ok{};
}

// spec.model, and the objective and mode beside it.
Status readModel(const ObjectReader& spec, const Catalog& catalog, GpuWorkloadSpec& result) {
  const auto model = spec.child("model");
  if (!spec.has("model")) {
    return Error{"spec.model", "required: at least the parameter count"};
  }
  if (auto ok = model.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = model.onlyKeys(
          {"parameters", "precision", "framework", "architecture", "family", "shape"});
      !ok) {
    return ok.error();
  }
  const ModelFamily* family = nullptr;
  if (auto ok = readFamily(model, catalog, family, result.intent); !ok) {
    return ok;
  }
  // A family says its parameters; a count stated beside it wins.
  auto parameters = family && !model.has("parameters") ? Result<std::uint64_t>(family->parameters)
                                                       : readParameters(model);
  auto precision = model.optionalEnum<Precision>("precision");
  auto framework = model.optionalEnum<Framework>("framework");
  auto architecture = model.optionalEnum<Architecture>("architecture");
  auto objective = spec.optionalEnum<Objective>("objective");
  auto mode = spec.optionalEnum<PlacementMode>("mode");
  for (const Error* error :
       {parameters ? nullptr : &parameters.error(), precision ? nullptr : &precision.error(),
        framework ? nullptr : &framework.error(), architecture ? nullptr : &architecture.error(),
        objective ? nullptr : &objective.error(), mode ? nullptr : &mode.error()}) {
    if (error) {
      return *error;
    }
  }
  auto& intent = result.intent;
  intent.parameters = *parameters;
  intent.precision = precision->value_or(intent.precision);
  intent.framework = framework->value_or(intent.framework);
  intent.architecture = architecture->value_or(family ? family->architecture : intent.architecture);
  intent.objective = objective->value_or(intent.objective);
  result.mode = mode->value_or(result.mode);
  return Ok{};
}

Status readPolicyRef(const ObjectReader& spec, std::string& policyName) {
  if (!spec.has("policyRef")) {
    return Ok{};
  }
  const auto policy = spec.child("policyRef");
  if (auto ok = policy.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = policy.onlyKeys({"name"}); !ok) {
    return ok.error();
  }
  auto name = policy.string("name");
  if (!name) {
    return name.error();
  }
  policyName = *name;
  return Ok{};
}

Status readScaling(const ObjectReader& spec, Scaling& scaling) {
  if (!spec.has("scaling")) {
    return Ok{};
  }
  const auto reader = spec.child("scaling");
  if (auto ok = reader.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = reader.onlyKeys({"groupSize"}); !ok) {
    return ok.error();
  }
  auto groupSize = reader.optionalEnum<GroupSizePolicy>("groupSize");
  if (!groupSize) {
    return groupSize.error();
  }
  scaling.groupSize = groupSize->value_or(scaling.groupSize);
  return Ok{};
}

}  // namespace

Result<GpuWorkloadSpec> parseGpuWorkloadSpec(const json& specValue, const Catalog& catalog) {
  ObjectReader spec(specValue, "spec");
  if (auto ok = spec.requireObject(); !ok) {
    return ok.error();
  }
  if (auto ok = spec.onlyKeys({"targetRef", "containers", "workload", "model", "objective",
                               "constraints", "policyRef", "mode", "scaling"});
      !ok) {
    return ok.error();
  }
  GpuWorkloadSpec result;
  auto containers = spec.stringList("containers");
  for (const Status& read :
       {readTarget(spec, result.targetRef, result.podSets),
        containers ? Status(Ok{}) : Status(containers.error()), readWorkload(spec, result.intent),
        readModel(spec, catalog, result), readConstraints(spec, result.intent.constraints),
        readPolicyRef(spec, result.policyName), readScaling(spec, result.scaling),
        validateIntent(result.intent, catalog)}) {
    if (!read) {
      return read.error();
    }
  }
  result.containers = *containers;
  return result;
}

Status checkServingLoad(const ServingLoad& load, const ServingFieldNames& names) {
  if (load.tokensPerSecond > 0 && load.requestsPerSecond > 0) {
    return Error{names.requestsPerSecond, "give the throughput target once: " +
                                              names.tokensPerSecond + " or this, not both"};
  }
  if (load.requestsPerSecond > 0 && (load.meanPromptTokens == 0 || load.meanOutputTokens == 0)) {
    return Error{load.meanOutputTokens == 0 ? names.meanOutputTokens : names.meanPromptTokens,
                 "required with " + names.requestsPerSecond +
                     ": a request's mean prompt and output lengths make the rate tokens"};
  }
  if ((load.meanPromptTokens > 0) != (load.meanOutputTokens > 0)) {
    return Error{load.meanOutputTokens == 0 ? names.meanOutputTokens : names.meanPromptTokens,
                 "give the mean prompt and output lengths together: the prompt tokens a replica "
                 "prefills per token it outputs is their ratio"};
  }
  if (load.contextTokens > 0 &&
      std::int64_t{load.meanPromptTokens} + load.meanOutputTokens > load.contextTokens) {
    std::string message = std::to_string(load.meanPromptTokens);
    message += " prompt and ";
    message += std::to_string(load.meanOutputTokens);
    message += " output tokens on average exceed ";
    message += names.contextTokens;
    message += " (";
    message += std::to_string(load.contextTokens);
    message += "), the longest sequence a replica holds";
    return Error{names.meanPromptTokens, message};
  }
  return Ok{};
}

namespace {

// An extended resource that names devices as the device plugins and DRA
// advertise them (what core/decide/render.cc writes).
bool isDeviceResource(const std::string& name) {
  return name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
         name.rfind("nvidia.com/mig-", 0) == 0 || name == "aws.amazon.com/neuron" ||
         name.rfind("deviceclass.resource.kubernetes.io/", 0) == 0;
}

// The first device request in the placed pod sets' templates (the
// containers `containers` names, or any), by its limit or else its request.
FixedDevices devicesAskedFor(const TargetState& target, const GpuWorkloadSpec& spec) {
  for (const auto index : placedPodSets(target, spec.podSets).indexes) {
    const auto view = podSetView(target, index);
    for (const auto& container : view.containers) {
      if (!spec.containers.empty() && std::find(spec.containers.begin(), spec.containers.end(),
                                                container.name) == spec.containers.end()) {
        continue;
      }
      for (const auto* list : {&container.limits, &container.requests}) {
        for (const auto& [name, value] : *list) {
          int count = 0;
          if (isDeviceResource(name) && std::sscanf(value.c_str(), "%d", &count) == 1 &&
              count > 0) {
            return {name, count, target.podSets[index].name, container.name};
          }
        }
      }
    }
  }
  return {};
}

}  // namespace

WorkloadIntent intentOf(const GpuWorkloadSpec& spec, const TargetState* target,
                        bool resourcesFrom136) {
  WorkloadIntent intent = spec.intent;
  intent.replicas = target ? target->replicas : 1;
  if (target && !spec.podSets.empty()) {
    intent.replicas = placedReplicas(*target, placedPodSets(*target, spec.podSets));
  }
  intent.surge = target ? target->surge : 0;
  intent.claimsWritable = !target || !traitsOf(target->kind).claimsFixed;
  const auto writable = target ? traitsOf(target->kind).resources : ResourcesWritable::Always;
  if (writable == ResourcesWritable::Never ||
      (writable == ResourcesWritable::From136 && !resourcesFrom136)) {
    // Its pods ask for what they ask for: a placement of another shape
    // could not be written. One asking for none is placed freely and told
    // what to write (core/plan/job_plan.h).
    intent.fixedDevices = devicesAskedFor(*target, spec);
  }
  if (target) {
    intent.groups = target->groups;
    // The engine sizes a group by the team's size, not one the operator
    // wrote in its place (which a larger model would otherwise be held to).
    intent.groups.size = teamGroupSize(*target);
    intent.groups.sizeSet =
        spec.mode == PlacementMode::Apply && spec.scaling.groupSize == GroupSizePolicy::Set &&
        !target->groups.sizePointer.empty() && target->groups.sizeKeptBy.empty();
    const auto pod = teamPodRequests(*target);
    intent.podCpu = pod.cpu;
    intent.podMemoryGiB = pod.memoryGiB;
  }
  return intent;
}

}  // namespace gpuplacement::core
