#include "app/workload_flags.h"

#include "base/decimal.h"
#include "core/catalog/quantity.h"
#include "core/decide/performance_model.h"

namespace gpuplacement::app {
namespace {

using base::Error;

}  // namespace

namespace {

// Names the flag, not the CRD field the validator speaks of.
Error withFlagName(const Error& error) {
  for (auto [field, flag] :
       {std::pair{"spec.constraints.instanceTypes", "--instance-types"},
        std::pair{"spec.constraints.excludedInstanceTypes", "--exclude-instance-types"},
        std::pair{"spec.workload.serving.kvCachePrecision", "--kv-precision"},
        std::pair{"spec.workload.serving", "--context"}}) {
    if (error.field.rfind(field, 0) == 0) {
      return Error{flag, error.message};
    }
  }
  return error;
}

}  // namespace

// The serving load the flags describe (--context and the flags that need
// it), checked as the spec's is.
base::Result<core::ServingLoad> WorkloadFlags::servingLoad() const {
  if (contextTokens < 0) {
    return Error{"--context", "must be a positive number of tokens"};
  }
  if (concurrentSequences < 1) {
    return Error{"--concurrency", "must be at least 1 sequence"};
  }
  auto parsedKv = enumFlag<core::Precision>("--kv-precision", kvPrecision);
  if (!parsedKv) {
    return parsedKv.error();
  }
  if (tokensPerSecond < 0) {
    return Error{"--tokens-per-second", "must be a positive number of output tokens a second"};
  }
  if (requestsPerSecond < 0) {
    return Error{"--requests-per-second", "must be a positive number of requests a second"};
  }
  if (meanPromptTokens < 0 || meanOutputTokens < 0) {
    return Error{meanPromptTokens < 0 ? "--prompt-tokens" : "--output-tokens",
                 "must be a positive number of tokens"};
  }
  const char* loadFlag = concurrentSequences != 1                  ? "--concurrency"
                         : tokensPerSecond > 0                     ? "--tokens-per-second"
                         : requestsPerSecond > 0                   ? "--requests-per-second"
                         : meanPromptTokens + meanOutputTokens > 0 ? "--prompt-tokens"
                         : *parsedKv != core::Precision::FP16      ? "--kv-precision"
                                                                   : nullptr;
  if (contextTokens == 0 && loadFlag) {
    return Error{loadFlag, "describes a serving load: give --context too"};
  }
  const core::ServingLoad load{contextTokens,   concurrentSequences, *parsedKv,
                               tokensPerSecond, requestsPerSecond,   meanPromptTokens,
                               meanOutputTokens};
  if (auto ok =
          core::checkServingLoad(load, {"--context", "--tokens-per-second", "--requests-per-second",
                                        "--prompt-tokens", "--output-tokens"});
      !ok) {
    return ok.error();
  }
  return load;
}

base::Result<core::WorkloadIntent> WorkloadFlags::toIntent(const core::Catalog& catalog) const {
  core::WorkloadIntent intent;
  if (kind.empty()) {
    return Error{"--kind", "required (use " + core::allowedValues<core::WorkloadKind>() + ")"};
  }
  const core::ModelFamily* named = nullptr;
  if (!family.empty()) {
    named = catalog.modelFamily(family);
    if (!named) {
      return Error{"--family", "\"" + family + "\" is not a model family of the catalog (" +
                                   catalog.modelFamilyNames() + ")"};
    }
    intent.family = named->name;
    intent.shape = named->shape;
  }
  if (parameters.empty() && !named) {
    return Error{"--params", "required (e.g. 7B, 1.3B, 350M, 7e9), or --family"};
  }
  auto parsedKind = enumFlag<core::WorkloadKind>("--kind", kind);
  if (!parsedKind) {
    return parsedKind.error();
  }
  intent.kind = *parsedKind;
  if (parameters.empty()) {
    intent.parameters = named->parameters;
  } else {
    auto count = core::parseParameterCount(parameters);
    if (!count) {
      return Error{"--params", count.error().message};
    }
    intent.parameters = *count;
  }
  auto serving = servingLoad();
  if (!serving) {
    return serving.error();
  }
  intent.serving = *serving;
  auto parsedPrecision = enumFlag<core::Precision>("--precision", precision);
  auto parsedFramework = enumFlag<core::Framework>("--framework", framework);
  // Unstated: the family's, else a Transformer.
  const std::string architectureName = !architecture.empty() ? architecture
                                       : named ? std::string(core::nameOf(named->architecture))
                                               : std::string("Transformer");
  auto parsedArchitecture = enumFlag<core::Architecture>("--architecture", architectureName);
  auto parsedObjective = enumFlag<core::Objective>("--objective", objective);
  auto parsedCapacity = enumFlag<core::CapacityType>("--capacity", capacity);
  auto parsedSharing = enumFlag<core::DeviceSharing>("--sharing", sharing);
  for (const Error* error : {parsedSharing ? nullptr : &parsedSharing.error(),
                             parsedPrecision ? nullptr : &parsedPrecision.error(),
                             parsedFramework ? nullptr : &parsedFramework.error(),
                             parsedArchitecture ? nullptr : &parsedArchitecture.error(),
                             parsedObjective ? nullptr : &parsedObjective.error(),
                             parsedCapacity ? nullptr : &parsedCapacity.error()}) {
    if (error) {
      return *error;
    }
  }
  intent.precision = *parsedPrecision;
  intent.framework = *parsedFramework;
  intent.architecture = *parsedArchitecture;
  intent.objective = *parsedObjective;
  if (*parsedCapacity == core::CapacityType::Reserved) {
    return Error{"--capacity", std::string(core::kReservedNotAsked)};
  }
  intent.constraints.capacityType = *parsedCapacity;
  intent.constraints.sharing = *parsedSharing;
  if (latencyMs && !(*latencyMs > 0)) {
    return Error{"--latency-ms", "must be a positive number of milliseconds"};
  }
  intent.latencyTargetMs = latencyMs;
  if (maxHourlyCost && !(*maxHourlyCost > 0)) {
    return Error{"--max-hourly-cost", "must be a positive amount in USD per replica-hour"};
  }
  intent.constraints.maxHourlyCost = maxHourlyCost;
  for (const auto& tier : tiers) {
    auto parsed = enumFlag<core::Tier>("--tiers", tier);
    if (!parsed) {
      return parsed.error();
    }
    intent.constraints.tiers.push_back(*parsed);
  }
  intent.constraints.instanceTypes = instanceTypes;
  intent.constraints.excludedInstanceTypes = excludedInstanceTypes;
  if (replicas < 1) {
    return Error{"--replicas", "must be at least 1 (a target scaled to zero needs no placement)"};
  }
  intent.replicas = replicas;
  if (groupSize) {
    if (*groupSize < 0 || *groupSize > core::kMaxNodesPerReplica) {
      return Error{"--group-size", "must be from 0 (the placement says the size) to " +
                                       std::to_string(core::kMaxNodesPerReplica)};
    }
    // The replicas are groups, each of groupSize pods.
    intent.groups = {replicas, *groupSize, "--group-size"};
    intent.replicas = replicas * std::max(*groupSize, 1);
  }
  if (contextTokens > 0 && !intent.shape.known() &&
      intent.architecture == core::Architecture::Transformer) {
    // Said in the flags' words: the spec's would name spec.model.family.
    return Error{"--context", "the KV cache needs the model's shape: give --family (one of " +
                                  catalog.modelFamilyNames(true) + ")"};
  }
  if (auto ok = core::validateIntent(intent, catalog); !ok) {
    return withFlagName(ok.error());
  }
  return intent;
}

}  // namespace gpuplacement::app

namespace gpuplacement::app {
namespace {

// "1g.5gb:7" -> (1g.5gb, 7); a count in 1..7.
base::Result<std::pair<std::string, int>> profileCount(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) {
    return Error{"--mig", "\"" + text + "\" is not PROFILE:INSTANCES_PER_GPU, e.g. 1g.5gb:7"};
  }
  const auto count = text.substr(colon + 1);
  if (count.empty() || count.size() > 1 || count[0] < '1' || count[0] > '7') {
    return Error{"--mig", "\"" + text + "\": a GPU holds 1 to 7 instances of a profile"};
  }
  return std::pair{text.substr(0, colon), count[0] - '0'};
}

}  // namespace

base::Result<std::vector<core::SharedNodeSpec>> sharedNodesFromFlags(
    const std::vector<std::string>& mig, const std::vector<std::string>& timeSliced) {
  std::vector<core::SharedNodeSpec> nodes;
  for (const auto& text : mig) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
      return Error{"--mig", "\"" + text +
                                "\" is not TYPE=PROFILE:N[+PROFILE:N], e.g. "
                                "p4d.24xlarge=1g.5gb:7 or p5.48xlarge=3g.40gb:2+1g.10gb:1"};
    }
    core::SharedNodeSpec node;
    node.instanceType = text.substr(0, equals);
    std::size_t from = equals + 1;
    while (from <= text.size()) {
      const auto plus = std::min(text.find('+', from), text.size());
      auto profile = profileCount(text.substr(from, plus - from));
      if (!profile) {
        return profile.error();
      }
      node.migPerGpu.push_back(std::move(*profile));
      from = plus + 1;
    }
    nodes.push_back(std::move(node));
  }
  for (const auto& text : timeSliced) {
    const auto equals = text.find('=');
    const auto ways = equals == std::string::npos ? std::string() : text.substr(equals + 1);
    if (equals == 0 || ways.empty() || ways.size() > 3 ||
        ways.find_first_not_of("0123456789") != std::string::npos) {
      return Error{"--time-sliced", "\"" + text + "\" is not TYPE=WAYS, e.g. g6.xlarge=4"};
    }
    core::SharedNodeSpec node;
    node.instanceType = text.substr(0, equals);
    node.timeSlices = std::stoi(ways);
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace gpuplacement::app
