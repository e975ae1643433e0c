#include "app/workload_flags.h"

#include "base/decimal.h"
#include "core/quantity.h"

namespace gpuplacement::app {
namespace {

using base::Error;

}  // namespace

namespace {

// Names the flag, not the CRD field the validator speaks of.
Error withFlagName(const Error& error) {
  for (auto [field, flag] :
       {std::pair{"spec.constraints.instanceTypes", "--instance-types"},
        std::pair{"spec.constraints.excludedInstanceTypes", "--exclude-instance-types"}}) {
    if (error.field.rfind(field, 0) == 0) {
      return Error{flag, error.message};
    }
  }
  return error;
}

}  // namespace

base::Result<core::WorkloadIntent> WorkloadFlags::toIntent(const core::Catalog& catalog) const {
  core::WorkloadIntent intent;
  if (kind.empty()) {
    return Error{"--kind", "required (use " + core::allowedValues<core::WorkloadKind>() + ")"};
  }
  if (parameters.empty()) {
    return Error{"--params", "required (e.g. 7B, 1.3B, 350M, 7e9)"};
  }
  auto parsedKind = enumFlag<core::WorkloadKind>("--kind", kind);
  if (!parsedKind) {
    return parsedKind.error();
  }
  intent.kind = *parsedKind;
  auto count = core::parseParameterCount(parameters);
  if (!count) {
    return Error{"--params", count.error().message};
  }
  intent.parameters = *count;
  auto parsedPrecision = enumFlag<core::Precision>("--precision", precision);
  auto parsedFramework = enumFlag<core::Framework>("--framework", framework);
  auto parsedArchitecture = enumFlag<core::Architecture>("--architecture", architecture);
  auto parsedObjective = enumFlag<core::Objective>("--objective", objective);
  auto parsedCapacity = enumFlag<core::CapacityType>("--capacity", capacity);
  for (const Error* error : {parsedPrecision ? nullptr : &parsedPrecision.error(),
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
  if (auto ok = core::validateIntent(intent, catalog); !ok) {
    return withFlagName(ok.error());
  }
  return intent;
}

}  // namespace gpuplacement::app
