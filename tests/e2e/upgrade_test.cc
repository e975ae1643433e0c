// An upgrade of the operator over placements in force, done as
// docs/operating/upgrade.md says, on the default simulated cluster. The
// previous release (scripts/previous-release: its chart, CRDs, samples and
// operator, as they were at its commit) is installed with helm and places
// its samples; then its CRDs and chart are upgraded to this tree's and this
// tree's operator starts in its place, with the chart's ServiceAccount.
//
// The upgrade must lose nothing the cluster stored: every GpuWorkload and
// PlacementPolicy reads back as it was, and the team's manifests apply
// again as they are (a CRD change that breaks stored objects fails here).
// And the new operator must find every placement in force: no write to any
// target (by the API server's audit log), no pod replaced, every status
// still as true as it was.
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/samples.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using testing::repoRoot;
using testing::SampleTarget;
using namespace std::chrono_literals;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.pools = "config/sim/default.yaml";
  options.audit = true;
  ControlPlane::configure(options);
  return true;
}();

const std::string kNamespace = "gpu-placement";
const std::string kRelease = "gpo";
const std::string kFullname = "gpo-gpu-placement-operator";
const std::string kUser = "system:serviceaccount:" + kNamespace + ":" + kFullname;

// The cluster as the admin sees it, without this tree's CRDs: the
// previous release's come first.
Cluster& cluster() {
  static Cluster instance(ControlPlane::shared());
  return instance;
}

testing::CommandResult tool(const std::string& command) {
  return ControlPlane::shared().withTools(command);
}

// The release upgraded from: GPU_PLACEMENT_UPGRADE_FROM's version, or the
// newest (scripts/previous-release list).
std::string previousRelease() {
  const char* version = std::getenv("GPU_PLACEMENT_UPGRADE_FROM");
  auto dir = testing::runCommand(repoRoot() + "/scripts/previous-release dir " +
                                 (version != nullptr ? version : ""));
  REQUIRE_MESSAGE(dir.exitCode == 0, dir.err);
  while (!dir.out.empty() && dir.out.back() == '\n') {
    dir.out.pop_back();
  }
  return dir.out;
}

// The chart's way of running the operator (its Deployment's flags).
std::vector<std::string> operatorArgs() {
  return {"--leader-elect",
          "--leader-election-namespace",
          kNamespace,
          "--leader-election-id",
          kFullname,
          "--lease-duration",
          "15s",
          "--renew-deadline",
          "10s",
          "--retry-period",
          "2s"};
}

std::string targetPath(const SampleTarget& target) {
  return Cluster::pathOf(target.kind == "Job" ? "batch/v1" : "apps/v1", target.kind, target.ns,
                         target.name);
}

// What a placement in force is made of, as the cluster stores it: each
// target's generation and pod template and the names of its pods; each
// GpuWorkload's spec and the status of each of its conditions; each
// PlacementPolicy's spec.
struct Snapshot {
  std::map<std::string, json> targets;
  std::map<std::string, std::set<std::string>> pods;
  std::map<std::string, json> workloads;
  std::map<std::string, std::map<std::string, std::string>> conditions;
  std::map<std::string, json> policies;
};

Snapshot snapshot(const std::vector<SampleTarget>& targets) {
  auto& c = cluster();
  Snapshot s;
  for (const auto& target : targets) {
    const auto object = c.mustGet(targetPath(target));
    const std::string key = target.ns + "/" + target.name;
    s.targets[key] = {{"generation", base::memberOf(object["metadata"], "generation")},
                      {"template", base::memberOf(object["spec"], "template")}};
    // Held here: a range-for over a member of a temporary would dangle.
    const auto pods =
        c.mustGet("/api/v1/namespaces/" + target.ns + "/pods?labelSelector=app%3D" + target.name);
    for (const auto& pod : pods["items"]) {
      s.pods[key].insert(base::stringMember(pod["metadata"], "name"));
    }
  }
  const auto workloads = c.mustGet("/apis/gpuplacement.io/v1alpha1/gpuworkloads");
  for (const auto& workload : workloads["items"]) {
    const std::string key = base::stringMember(workload["metadata"], "namespace") + "/" +
                            base::stringMember(workload["metadata"], "name");
    s.workloads[key] = workload["spec"];
    for (const auto& condition : base::memberOf(workload["status"], "conditions")) {
      s.conditions[key][base::stringMember(condition, "type")] =
          base::stringMember(condition, "status");
    }
  }
  const auto policies = c.mustGet("/apis/gpuplacement.io/v1alpha1/placementpolicies");
  for (const auto& policy : policies["items"]) {
    s.policies[base::stringMember(policy["metadata"], "name")] = policy["spec"];
  }
  return s;
}

// The writes the operator's ServiceAccount made to targets, by the audit
// log: the placements it wrote.
std::size_t targetWrites() {
  std::size_t writes = 0;
  for (const auto& entry : testing::readAudit(ControlPlane::shared(), kUser)) {
    if (entry.stage == "ResponseComplete" && entry.code < 400 &&
        (entry.verb == "patch" || entry.verb == "update" || entry.verb == "create") &&
        (entry.resource == "deployments" || entry.resource == "statefulsets" ||
         entry.resource == "jobs")) {
      ++writes;
    }
  }
  return writes;
}

// The operator has reconciled every GpuWorkload and holds nothing back:
// its work queue empty, no status waiting, for three seconds in a row.
bool settle(OperatorProcess& op, std::size_t workloads) {
  int quiet = 0;
  return cluster().waitFor(
      [&] {
        const bool idle =
            op.metric("controller_runtime_reconcile_total", "controller=\"gpuworkload\"") >=
                static_cast<double>(workloads) &&
            op.metric("workqueue_depth", "name=\"gpuworkload\"") == 0 &&
            op.metric("gpu_placement_statuses_waiting") == 0;
        quiet = idle ? quiet + 1 : 0;
        return quiet >= 3;
      },
      120s, 1s);
}

// The GpuWorkload documents of the samples, as a team's repository holds
// them: what it applies again after the upgrade.
std::string workloadManifests(const std::string& samples) {
  std::string yaml;
  for (const auto& manifest : testing::sampleManifests(samples)) {
    auto documents = base::parseYamlDocuments(testing::readFile(manifest), manifest);
    REQUIRE_MESSAGE(documents.ok(), gpuplacement::testing::whyNot(documents));
    for (const auto& document : *documents) {
      const auto kind = base::stringMember(document, "kind");
      if (kind == "GpuWorkload" || kind == "PlacementPolicy") {
        yaml += "---\n" + document.dump() + "\n";
      }
    }
  }
  return yaml;
}

TEST_CASE("an upgrade from the previous release writes nothing to the placements in force") {
  auto& c = cluster();
  const auto previous = previousRelease();
  const auto oldChart = previous + "/src/charts/gpu-placement-operator";
  const auto samples = previous + "/src/config/samples";
  MESSAGE("upgrading from " << previous);

  // The previous release, installed as its README says (helm installs the
  // chart's CRDs on the first install).
  auto installed =
      tool("helm install " + kRelease + " " + oldChart + " -n " + kNamespace +
           " --create-namespace --set replicaCount=1 --set placementPolicy.create=false");
  REQUIRE_MESSAGE(installed.exitCode == 0, installed.err);
  auto old = std::make_unique<OperatorProcess>(c.serviceAccountKubeconfig(kNamespace, kFullname),
                                               operatorArgs(), previous + "/bin/gpu-placement");
  REQUIRE_MESSAGE(old->waitReady(60s), old->log());
  testing::applySamples(c, samples);
  const auto targets = testing::sampleTargets(samples);
  std::string why;
  const auto allRunning = [&] {
    why.clear();
    for (const auto& target : targets) {
      const auto line = testing::notRunning(c, target);
      why += line.empty() ? "" : line + "\n";
    }
    return why.empty();
  };
  REQUIRE_MESSAGE(c.waitFor(allRunning, 240s, 500ms),
                  "the previous release did not place its samples:\n"
                      << why << old->log());
  // Its last status writes, and the rollouts they follow, done.
  REQUIRE(settle(*old, 8));
  const auto before = snapshot(targets);
  REQUIRE(before.targets.size() == targets.size());
  REQUIRE(before.workloads.size() == 8);
  REQUIRE(before.policies.size() == 1);
  for (const auto& [key, pods] : before.pods) {
    CAPTURE(key);
    CHECK(!pods.empty());
  }
  CHECK(before.pods.size() == targets.size());
  const auto writesBefore = targetWrites();
  CHECK(writesBefore > 0);  // it placed them: the audit log sees its writes
  CHECK(old->stop() == 0);
  old.reset();

  // The upgrade, as docs/operating/upgrade.md gives it.
  // --force-conflicts: helm created the CRDs, and owns every field of
  // them; without it, any change to a CRD is refused as a conflict.
  const auto crds = tool("kubectl apply --server-side --force-conflicts -f " + repoRoot() +
                         "/charts/gpu-placement-operator/crds/");
  REQUIRE_MESSAGE(crds.exitCode == 0, crds.err);
  const auto established = tool("kubectl wait --for=condition=Established crd --all --timeout=60s");
  REQUIRE_MESSAGE(established.exitCode == 0, established.err);
  const auto upgraded = tool("helm upgrade " + kRelease + " " + repoRoot() +
                             "/charts/gpu-placement-operator -n " + kNamespace + " --reuse-values");
  REQUIRE_MESSAGE(upgraded.exitCode == 0, upgraded.err);

  // Nothing stored was lost, and the team's manifests still apply.
  const auto stored = snapshot(targets);
  CHECK(stored.workloads == before.workloads);
  CHECK(stored.policies == before.policies);
  const auto manifests = ControlPlane::shared().dir() + "/team-manifests.yaml";
  std::ofstream(manifests) << workloadManifests(samples);
  const auto reapplied =
      tool("kubectl apply --server-side --dry-run=server --field-manager=team -f " + manifests);
  CHECK_MESSAGE(reapplied.exitCode == 0, reapplied.err);

  // This tree's operator, in the previous one's place.
  OperatorProcess current(c.serviceAccountKubeconfig(kNamespace, kFullname), operatorArgs());
  REQUIRE_MESSAGE(current.waitReady(60s), current.log());
  REQUIRE_MESSAGE(settle(current, before.workloads.size()), current.log());
  CHECK(c.waitFor(allRunning, 30s, 500ms));
  const auto after = snapshot(targets);
  CHECK_MESSAGE(targetWrites() == writesBefore, "the upgraded operator wrote to targets:\n"
                                                    << current.log());
  for (const auto& [key, target] : before.targets) {
    CAPTURE(key);
    CHECK(after.targets.at(key) == target);
    CHECK(after.pods.at(key) == before.pods.at(key));
  }
  for (const auto& [key, conditions] : before.conditions) {
    CAPTURE(key);
    CHECK(after.conditions.at(key) == conditions);
    CHECK(conditions.count("Placed") == 1);
    CHECK(conditions.find("Placed")->second == "True");
  }
  CHECK(after.workloads == before.workloads);
  current.stop();
}

}  // namespace
}  // namespace gpuplacement
