// The per-workload cost and idle-accelerator series against the real
// control plane: one series per placed GpuWorkload, equal to what its status
// says; a move changes its labels, a deletion removes it, and
// --per-workload-metrics=false exports none while the totals stay.
#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/objects.h"
#include "support/prometheus_text.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::json;
using testing::OperatorProcess;
using testing::PrometheusSample;
using testing::PrometheusScrape;

const std::string kCost = "gpu_placement_workload_hourly_cost_dollars";
const std::string kIdle = "gpu_placement_workload_idle_accelerators";
const std::string kNamespaceCost = "gpu_placement_estimated_hourly_cost_dollars";

PrometheusScrape scrape(OperatorProcess& op) {
  const auto [status, body] = OperatorProcess::httpGet(op.metricsPort(), "/metrics");
  REQUIRE(status == 200);
  auto parsed = testing::parsePrometheusText(body);
  CHECK_MESSAGE(parsed.unreadable.empty(),
                (parsed.unreadable.empty() ? std::string() : parsed.unreadable.front()));
  return parsed;
}

std::vector<PrometheusSample> seriesOf(const PrometheusScrape& metrics, const std::string& family,
                                       const std::string& ns, const std::string& name) {
  return metrics.find(family, {{"namespace", ns}, {"name", name}});
}

double sumOf(const std::vector<PrometheusSample>& samples) {
  double total = 0;
  for (const auto& sample : samples) {
    total += sample.value;
  }
  return total;
}

// The series a placed GpuWorkload's status implies.
struct Expected {
  std::map<std::string, std::string> labels;
  double hourlyCost = 0;  // all replicas
  double idleAccelerators = 0;
};

Expected expectedFrom(const json& workload) {
  const auto& placement = workload["status"]["placement"];
  Expected expected;
  expected.labels = {{"namespace", base::stringMember(workload["metadata"], "namespace")},
                     {"name", base::stringMember(workload["metadata"], "name")},
                     {"tier", base::stringMember(placement, "tier")},
                     {"instance_type", base::stringMember(placement, "instanceType")},
                     {"capacity_type", base::stringMember(placement, "capacityType")}};
  expected.hourlyCost = std::stod(base::stringMember(placement, "hourlyCost")) *
                        static_cast<double>(base::integerMember(placement, "replicas"));
  expected.idleAccelerators =
      static_cast<double>(base::integerMember(placement, "idleAccelerators"));
  return expected;
}

// The one series of each family for this workload, as its status says.
void checkSeries(const PrometheusScrape& metrics, const Expected& expected) {
  const auto& ns = expected.labels.at("namespace");
  const auto& name = expected.labels.at("name");
  const auto cost = seriesOf(metrics, kCost, ns, name);
  REQUIRE(cost.size() == 1);
  CHECK(cost[0].labels == expected.labels);
  // The status rounds hourlyCost to four places.
  CHECK(cost[0].value == doctest::Approx(expected.hourlyCost).epsilon(1e-3));
  CHECK(cost[0].value > 0);
  const auto idle = seriesOf(metrics, kIdle, ns, name);
  REQUIRE(idle.size() == 1);
  CHECK(idle[0].labels == expected.labels);
  CHECK(idle[0].value == expected.idleAccelerators);
}

bool applied(Cluster& c, const std::string& ns, const std::string& name) {
  auto object = c.get(testing::workloadsPath(ns, name));
  return object && testing::conditionIs(*object, "Applied", "True");
}

}  // namespace

TEST_CASE("a cost and an idle-accelerators series per placed GpuWorkload: placed, moved, deleted") {
  auto& c = Cluster::withCrds();
  testing::createNamespace(c, "cost-a");
  testing::createNamespace(c, "cost-b");
  auto twoReplicas = testing::deploymentObject("cost-a", "llm");
  twoReplicas["spec"]["replicas"] = 2;
  REQUIRE(c.create(testing::deploymentsPath("cost-a"), twoReplicas).ok());
  testing::createDeployment(c, "cost-b", "embed");

  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  {
    const auto before = scrape(op);
    CHECK(before.types.at(kCost) == "gauge");
    CHECK(before.types.at(kIdle) == "gauge");
    // Nothing placed here yet, no series (other suites' workloads may be).
    CHECK(before.find(kCost, {{"namespace", "cost-a"}}).empty());
    CHECK(before.find(kCost, {{"namespace", "cost-b"}}).empty());
  }

  // One L4 of a g6.xlarge for llm; embed, a diffusion model (never split
  // across devices: more devices are more replicas), pinned to a
  // g6.12xlarge, whose other three L4 are paid for and idle.
  REQUIRE(c.create(testing::workloadsPath("cost-a"),
                   testing::workloadObject("cost-a", "llm", testing::inferenceSpec("llm", "7B")))
              .ok());
  auto pinned = testing::inferenceSpec("embed", "7B");
  pinned["model"]["architecture"] = "Diffusion";
  pinned["constraints"]["instanceTypes"] = json::array({"g6.12xlarge"});
  REQUIRE(
      c.create(testing::workloadsPath("cost-b"), testing::workloadObject("cost-b", "embed", pinned))
          .ok());
  REQUIRE_MESSAGE(c.waitFor([&] { return applied(c, "cost-a", "llm"); }), op.log());
  REQUIRE_MESSAGE(c.waitFor([&] { return applied(c, "cost-b", "embed"); }), op.log());

  const auto placed = expectedFrom(c.mustGet(testing::workloadsPath("cost-a", "llm")));
  const auto embed = expectedFrom(c.mustGet(testing::workloadsPath("cost-b", "embed")));
  CHECK(placed.labels.at("instance_type") == "g6.xlarge");
  CHECK(embed.labels.at("instance_type") == "g6.12xlarge");
  CHECK(embed.idleAccelerators == 3);
  {
    const auto metrics = scrape(op);
    checkSeries(metrics, placed);
    checkSeries(metrics, embed);
    // One series per GpuWorkload.
    CHECK(metrics.find(kCost, {{"namespace", "cost-a"}}).size() == 1);
    CHECK(metrics.find(kCost, {{"namespace", "cost-b"}}).size() == 1);
    // The totals by namespace are the sums of the workloads' series.
    for (const char* ns : {"cost-a", "cost-b"}) {
      CAPTURE(std::string(ns));
      CHECK(sumOf(metrics.find(kNamespaceCost, {{"namespace", ns}})) ==
            doctest::Approx(sumOf(metrics.find(kCost, {{"namespace", ns}}))));
    }
  }

  // A bigger model moves llm: its series changes labels, the old ones go.
  REQUIRE(c.patch(testing::workloadsPath("cost-a", "llm"),
                  json{{"spec", {{"model", {{"parameters", "13B"}}}}}})
              .ok());
  REQUIRE_MESSAGE(c.waitFor([&] {
    auto object = c.get(testing::workloadsPath("cost-a", "llm"));
    return object &&
           base::stringMember((*object)["status"]["placement"], "instanceType") != "g6.xlarge" &&
           base::integerMember((*object)["status"], "observedGeneration") == 2 &&
           testing::conditionIs(*object, "Applied", "True");
  }),
                  op.log());
  const auto moved = expectedFrom(c.mustGet(testing::workloadsPath("cost-a", "llm")));
  MESSAGE("moved from g6.xlarge to " << moved.labels.at("instance_type"));
  {
    const auto metrics = scrape(op);
    checkSeries(metrics, moved);
    CHECK(metrics.find(kCost, {{"instance_type", "g6.xlarge"}}).empty());
    CHECK(metrics.find(kIdle, {{"instance_type", "g6.xlarge"}}).empty());
    checkSeries(metrics, embed);
  }

  // Deleted: its series go; the other workload's stay.
  REQUIRE(c.remove(testing::workloadsPath("cost-a", "llm")).ok());
  CHECK_MESSAGE(c.waitFor([&] {
    const auto metrics = scrape(op);
    return seriesOf(metrics, kCost, "cost-a", "llm").empty() &&
           seriesOf(metrics, kIdle, "cost-a", "llm").empty();
  }),
                op.log());
  {
    const auto metrics = scrape(op);
    CHECK(metrics.find(kNamespaceCost, {{"namespace", "cost-a"}}).empty());
    checkSeries(metrics, embed);
  }
  CHECK(op.stop() == 0);

  // Off: no per-workload family at all; the totals stay.
  OperatorProcess quiet(c.operatorKubeconfig(), {"--per-workload-metrics=false"});
  REQUIRE_MESSAGE(quiet.waitReady(), quiet.log());
  REQUIRE_MESSAGE(c.waitFor([&] { return quiet.metric("gpu_placement_placed_workloads") >= 1; }),
                  quiet.log());
  {
    const auto metrics = scrape(quiet);
    CHECK(metrics.types.count(kCost) == 0);
    CHECK(metrics.types.count(kIdle) == 0);
    CHECK(metrics.find(kCost).empty());
    CHECK(sumOf(metrics.find(kNamespaceCost, {{"namespace", "cost-b"}})) ==
          doctest::Approx(embed.hourlyCost).epsilon(1e-3));
  }
  CHECK(quiet.stop() == 0);
}

}  // namespace gpuplacement
