#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/catalog.h"
#include "core/policy.h"
#include "core/rules.h"
#include "core/types.h"
#include "core/workload.h"

namespace gpuplacement::core {

// The figures behind "memory needed", shown with every result.
struct MemoryEstimate {
  std::uint64_t parameters = 0;
  Precision precision = Precision::FP16;
  double bytesPerParameter = 0;
  double overhead = 0;
  double weightsGiB = 0;   // parameters x bytes per parameter
  double requiredGiB = 0;  // weights x overhead
};

MemoryEstimate estimateMemory(const WorkloadIntent& intent, const MemoryOverheads& overheads);

struct Placement {
  Tier tier = Tier::CPU;
  std::string accelerator;  // empty for CPU
  std::string instanceType;
  int acceleratorCount = 0;  // per replica; 0 for CPU
  int acceleratorsPerInstance = 0;
  CapacityType capacityType = CapacityType::OnDemand;  // OnDemand or Spot, never Any
  double hourlyCost = 0;                               // per replica
  double monthlyCost = 0;                              // per replica
  int replicas = 1;
  double totalHourlyCost = 0;
  double totalMonthlyCost = 0;
  double requiredMemoryGiB = 0;
  double availableMemoryGiB = 0;  // what the replica gets: count x per-accelerator memory
  double performance = 0;         // the figure the objective compared
  const char* performanceUnit = "";
};

// An option that lost, and why.
struct Alternative {
  std::string instanceType;
  std::string accelerator;
  Tier tier = Tier::CPU;
  int acceleratorCount = 0;
  CapacityType capacityType = CapacityType::OnDemand;
  std::optional<double> hourlyCost;  // per replica, when it could be priced
  std::string rejected;
};

struct Decision {
  MemoryEstimate memory;
  std::string sizeBucket;
  LatencyClass latency = LatencyClass::Relaxed;
  std::optional<Placement> placement;
  std::string rule;  // the rule that decided; empty when nothing matched
  std::string ruleSource;
  std::string reason;  // one line for people
  std::vector<Alternative> alternatives;
  // When placement is empty: the binding constraint, e.g. "needs 5,588 GiB;
  // the largest eligible instance offers 1,128 GiB (p5en.48xlarge)".
  std::string cannotPlace;
};

// Whether a placement already in use can stay, under this engine's prices
// and the workload's current intent, and what it costs now.
struct Assessment {
  bool feasible = false;
  std::string reason;  // why not, when infeasible
  double hourlyCost = 0;
  double performance = 0;
};

// Decides placements from a catalog, a rule set and a policy. Pure and
// deterministic: the same intent always gives the same decision. Built once
// per policy version; decide() is const and allocation-light.
class PlacementEngine {
 public:
  static Result<std::shared_ptr<const PlacementEngine>> create(
      std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules, Policy policy);

  Decision decide(const WorkloadIntent& intent) const;

  // The per-replica hourly cost of running `count` accelerators (or, for
  // CPU, the model's memory) on `instanceType` at this policy's prices;
  // nullopt when the type has no price for that capacity type.
  std::optional<double> hourlyCost(const std::string& instanceType, int count,
                                   CapacityType capacity, double requiredMemoryGiB = 0) const;

  Assessment assess(const WorkloadIntent& intent, const std::string& instanceType, int count,
                    CapacityType capacity) const;

  const Catalog& catalog() const { return *catalog_; }
  const RuleSet& rules() const { return *rules_; }
  const Policy& policy() const { return policy_; }
  const RuleKnobs& knobs() const { return knobs_; }
  std::optional<double> price(int instance, CapacityType capacity) const;

 private:
  struct Option;
  struct Evaluation;
  PlacementEngine(std::shared_ptr<const Catalog> catalog, std::shared_ptr<const RuleSet> rules,
                  Policy policy);

  bool matches(const Rule& rule, const WorkloadIntent& intent, std::size_t bucket,
               LatencyClass latency) const;
  bool isCandidate(const Rule& rule, const InstanceType& instance,
                   const Constraints& constraints) const;
  void evaluateRule(const Rule& rule, const WorkloadIntent& intent, double requiredGiB,
                    unsigned neuronBlocked, Evaluation& evaluation) const;
  void evaluateInstance(int index, const WorkloadIntent& intent, double requiredGiB,
                        Evaluation& evaluation) const;
  template <typename Better>
  void choose(const Rule& rule, const WorkloadIntent& intent, double requiredGiB,
              const Better& better, Evaluation& evaluation, Decision& decision) const;
  void explainFailure(const WorkloadIntent& intent, double requiredGiB,
                      const std::vector<std::size_t>& matched, unsigned neuronBlocked,
                      Decision& decision) const;
  std::string neuronIneligibility(Tier tier, const WorkloadIntent& intent) const;

  std::shared_ptr<const Catalog> catalog_;
  std::shared_ptr<const RuleSet> rules_;
  Policy policy_;
  RuleKnobs knobs_;                              // the rule set's, with the policy's overrides
  std::vector<std::optional<double>> onDemand_;  // effective prices by instance index
  std::vector<std::optional<double>> spot_;
  std::vector<bool> disabledRules_;
};

// Which size bucket (by name) a parameter count falls in.
std::size_t sizeBucketIndex(const RuleKnobs& knobs, std::uint64_t parameters);
LatencyClass latencyClassOf(const RuleKnobs& knobs, std::optional<double> latencyTargetMs);

}  // namespace gpuplacement::core
