#include "core/explain/throughput_advice.h"

#include <cmath>

#include "base/decimal.h"

namespace gpuplacement::core {
namespace {

std::string replicasText(int count) {
  return std::to_string(count) + (count == 1 ? " replica" : " replicas");
}

std::string tokensText(double tokensPerSecond) {
  return base::formatCount(std::llround(tokensPerSecond));
}

// What to change so the target may run `needed`: the autoscaler's bound,
// or the replicas themselves.
std::string remedy(TargetKind kind, const std::string& targetName,
                   const std::optional<Autoscaler>& autoscaler, int needed) {
  if (autoscaler) {
    return "raise maxReplicas of HorizontalPodAutoscaler " + autoscaler->name + " to " +
           std::to_string(needed);
  }
  std::string resource(resourceOf(kind));
  resource.pop_back();  // "deployments" -> "deployment"
  return "kubectl scale " + resource + "/" + targetName + " --replicas=" + std::to_string(needed);
}

}  // namespace

std::optional<ThroughputAdvice> adviseThroughput(const Placement& placement,
                                                 const ServingLoad& load, TargetKind kind,
                                                 const std::string& targetName, int replicas,
                                                 const std::optional<Autoscaler>& autoscaler) {
  if (placement.replicasForThroughput <= 0 || placement.tokensPerSecondPerReplica <= 0 ||
      load.outputTokensPerSecond() <= 0 || traitsOf(kind).runsOnce) {
    return std::nullopt;
  }
  ThroughputAdvice advice;
  advice.targetTokensPerSecond = load.outputTokensPerSecond();
  advice.replicas = autoscaler ? autoscaler->maxReplicas : std::max(replicas, 0);
  advice.replicasFrom = autoscaler ? "maxReplicas of HorizontalPodAutoscaler " + autoscaler->name
                                   : "spec.replicas of " + describeTarget(kind, targetName);
  advice.carriesTokensPerSecond = advice.replicas * placement.tokensPerSecondPerReplica;
  advice.replicasNeeded = placement.replicasForThroughput;
  advice.hourlyCostNeeded = placement.hourlyCost * advice.replicasNeeded;
  advice.enough = advice.replicas >= advice.replicasNeeded;
  const std::string carried = replicasText(advice.replicas) + " (" + advice.replicasFrom + ")";
  if (advice.enough) {
    advice.message = carried + (advice.replicas == 1 ? " carries about " : " carry about ") +
                     tokensText(advice.carriesTokensPerSecond) + " tokens a second, the " +
                     tokensText(advice.targetTokensPerSecond) + " targeted taking " +
                     replicasText(advice.replicasNeeded);
    return advice;
  }
  advice.message = carried + (advice.replicas == 1 ? " carries about " : " carry about ") +
                   tokensText(advice.carriesTokensPerSecond) + " of the " +
                   tokensText(advice.targetTokensPerSecond) +
                   " tokens a second targeted: it takes " + replicasText(advice.replicasNeeded) +
                   " on " + placement.instanceType + " (" +
                   remedy(kind, targetName, autoscaler, advice.replicasNeeded) + "), " +
                   base::formatMoney(advice.hourlyCostNeeded) + "/h against " +
                   base::formatMoney(placement.hourlyCost * advice.replicas) + "/h for " +
                   std::to_string(advice.replicas);
  return advice;
}

}  // namespace gpuplacement::core
