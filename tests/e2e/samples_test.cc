// The samples on the project's default simulated cluster: what a newcomer
// gets from `scripts/controlplane start DIR --cluster` (config/sim/
// default.yaml: managed node groups, no Karpenter) and `kubectl apply` of
// config/samples/. Every sample is placed and its pods run on nodes of the
// type its status names (a Job's ran there; the MIG tenant's, on the p4d
// whose slices it asks for); and again after the sample price change.
#include "support/samples.h"

#include <chrono>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/suite.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::cluster;
using testing::ControlPlane;
using testing::OperatorProcess;
using testing::repoRoot;
using testing::SampleTarget;
using namespace std::chrono_literals;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/default.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kSamples = repoRoot() + "/config/samples";

// Why some target is not yet placed and Running, one line each; empty
// once every one is.
std::string notAllRunning(const std::vector<SampleTarget>& targets) {
  std::string why;
  for (const auto& target : targets) {
    const auto line = testing::notRunning(cluster(), target);
    why += line.empty() ? "" : line + "\n";
  }
  return why;
}

// Where each GpuWorkload went, for the test's output.
std::string placements(const std::vector<SampleTarget>& targets) {
  std::string table;
  for (const auto& target : targets) {
    if (!target.runsOn.empty()) {
      continue;
    }
    const auto workload = cluster().mustGet(testing::workloadPath(target.ns, target.name));
    const auto& placement = base::memberOf(base::memberOf(workload, "status"), "placement");
    table += target.ns + "/" + target.name + ": " + base::stringMember(placement, "instanceType") +
             " " + base::stringMember(placement, "capacityType") + "\n";
  }
  return table;
}

TEST_CASE("every sample is placed and Running on the default cluster, and after a price change") {
  auto& c = cluster();
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  testing::applySamples(c, kSamples);
  const auto targets = testing::sampleTargets(kSamples);
  // Five GpuWorkloads of deployments.yaml, three of jobs.yaml, the tenant.
  REQUIRE(targets.size() == 9);

  std::string why;
  const auto allRunning = [&] {
    why = notAllRunning(targets);
    return why.empty();
  };
  CHECK_MESSAGE(c.waitFor(allRunning, 240s, 500ms), "not placed and Running:\n" << why);
  MESSAGE("placed:\n" << placements(targets));

  const auto applied = ControlPlane::shared().withTools("kubectl apply -f " + kSamples +
                                                        "/placementpolicy-price-change.yaml");
  REQUIRE_MESSAGE(applied.exitCode == 0, applied.err);
  CHECK_MESSAGE(c.waitFor(allRunning, 240s, 500ms),
                "not placed and Running after the price change:\n"
                    << why);
  MESSAGE("placed after the price change:\n" << placements(targets));
  op.stop();
}

TEST_CASE("a RayService sample on a cluster without KubeRay: the status names the missing CRD") {
  // The default cluster runs no KubeRay: rayservices.ray.io is not served.
  auto& c = cluster();
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(60s), op.log());
  auto documents =
      base::parseYamlDocuments(testing::readFile(kSamples + "/rayservices.yaml"), "rayservices");
  REQUIRE(documents.ok());
  for (auto& document : *documents) {
    if (base::stringMember(document, "kind") == "GpuWorkload" &&
        base::stringMember(document["metadata"], "name") == "mistral-gpu") {
      (void)c.create(
          "/api/v1/namespaces",
          {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "ml-serving"}}}});
      auto created = c.create(testing::workloadPath("ml-serving"), document);
      REQUIRE_MESSAGE(created.ok(), testing::whyNot(created));
    }
  }
  const auto path = testing::workloadPath("ml-serving", "mistral-gpu");
  std::string said;
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      said = c.conditionOf(path, "Applied") + ": " +
                             c.conditionMessageOf(path, "Applied");
                      return said ==
                             "False/TargetUnreadable: the CustomResourceDefinition "
                             "rayservices.ray.io is not installed (the API server does not serve "
                             "rayservices); the operator waits for it and places the RayService "
                             "once it is";
                    },
                    60s, 250ms),
                said);
  CHECK(op.running());  // it works on without the kind
  op.stop();
}

}  // namespace
}  // namespace gpuplacement
