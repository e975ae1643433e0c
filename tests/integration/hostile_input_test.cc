// Hostile and careless input through kubectl, one row each: the API server
// refuses it (CRD schema, CEL), or the operator says on the object which
// field is wrong. Either way no Deployment is touched unless the row says
// it is placed, nothing is half-written, and the operator keeps running.
#include <fstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/objects.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using namespace testing;

const std::string kNs = "hostile";

CommandResult kubectl(const std::string& arguments, const std::string& manifest = "") {
  const std::string file = ControlPlane::shared().dir() + "/hostile.yaml";
  std::ofstream(file) << manifest;
  return runCommand("eval \"$(" + repoRoot() + "/scripts/controlplane env " +
                    ControlPlane::shared().dir() + ")\" && kubectl " + arguments +
                    (manifest.empty() ? "" : " -f " + file));
}

std::string workload(const std::string& name, const std::string& spec,
                     const std::string& target = "") {
  return "apiVersion: gpuplacement.io/v1alpha1\nkind: GpuWorkload\nmetadata: {name: " + name +
         ", namespace: " + kNs +
         "}\nspec:\n  targetRef: {name: " + (target.empty() ? name : target) + "}\n" + spec;
}

std::string policy(const std::string& name, const std::string& spec) {
  return "apiVersion: gpuplacement.io/v1alpha1\nkind: PlacementPolicy\nmetadata: {name: " + name +
         "}\nspec:\n" + spec;
}

const std::string kIntent = "  workload: {kind: Inference}\n  model: {parameters: 7B}\n";
// On an NVIDIA GPU, for the rows that are placed and then looked at.
const std::string kGpuIntent = kIntent + "  constraints: {tiers: [NVIDIA]}\n";

enum class Expect { Refused, Condition, Placed };

struct Row {
  std::string name;      // the row, its Deployment and (usually) its GpuWorkload
  std::string manifest;  // applied with kubectl
  Expect expect = Expect::Refused;
  std::string mentions;  // in the refusal or the condition's message: the field
  std::string condition = "Valid";
  std::string reason = "InvalidSpec";
  std::string deploymentAnnotation;  // a value of the team's annotation "notes", if any
  std::string object;                // the object whose condition is read (default: workload)
};

Row refusedRow(std::string name, std::string manifest, std::string mentions) {
  Row row;
  row.name = std::move(name);
  row.manifest = std::move(manifest);
  row.expect = Expect::Refused;
  row.mentions = std::move(mentions);
  return row;
}

Row namedRow(std::string name, std::string manifest, std::string mentions,
             std::string condition = "Valid", std::string reason = "InvalidSpec") {
  Row row = refusedRow(std::move(name), std::move(manifest), std::move(mentions));
  row.expect = Expect::Condition;
  row.condition = std::move(condition);
  row.reason = std::move(reason);
  return row;
}

Row placedRow(std::string name, std::string manifest) {
  Row row = refusedRow(std::move(name), std::move(manifest), "");
  row.expect = Expect::Placed;
  return row;
}

Row withAnnotation(Row row, std::size_t bytes) {
  row.deploymentAnnotation = std::string(bytes, 'x');
  return row;
}

std::vector<Row> rows() {
  const std::string longName(253, 'a');
  std::string allTypes;
  const auto catalog = base::parseYaml(readFile(repoRoot() + "/config/catalog.yaml"), "catalog");
  REQUIRE(catalog.ok());
  for (const auto& instance : (*catalog)["instances"]) {
    allTypes += (allTypes.empty() ? "" : ", ") + instance["type"].get<std::string>();
  }
  Row priceUnknown = namedRow(
      "price-unknown-type",
      policy("price-unknown-type", "  prices: [{instanceType: g99.xlarge, onDemand: \"1\"}]\n"),
      "spec.prices[0].instanceType", "Accepted", "Invalid");
  priceUnknown.object = "policy";
  return {
      refusedRow("wrong-type-latency",
                 workload("wrong-type-latency",
                          "  workload: {kind: Inference, latencyTargetMs: "
                          "fast}\n  model: {parameters: 7B}\n"),
                 "spec.workload.latencyTargetMs"),
      refusedRow("wrong-type-parameters",
                 workload("wrong-type-parameters",
                          "  workload: {kind: Inference}\n  model: {parameters: true}\n"),
                 "spec.model.parameters"),
      refusedRow("negative-latency",
                 workload("negative-latency",
                          "  workload: {kind: Inference, latencyTargetMs: "
                          "-5}\n  model: {parameters: 7B}\n"),
                 "spec.workload.latencyTargetMs"),
      refusedRow("negative-cost",
                 workload("negative-cost", kIntent + "  constraints: {maxHourlyCost: \"-1\"}\n"),
                 "spec.constraints.maxHourlyCost"),
      namedRow("absurd-parameters",
               workload("absurd-parameters",
                        "  workload: {kind: Inference}\n  model: {parameters: 999999T}\n"),
               "spec.model.parameters"),
      namedRow("absurd-exponent",
               workload("absurd-exponent",
                        "  workload: {kind: Inference}\n  model: {parameters: 1e400}\n"),
               "spec.model.parameters"),
      refusedRow("unknown-tier",
                 workload("unknown-tier", kIntent + "  constraints: {tiers: [TPU]}\n"),
                 "spec.constraints.tiers[0]"),
      refusedRow("unknown-precision",
                 workload("unknown-precision",
                          "  workload: {kind: Inference}\n  model: "
                          "{parameters: 7B, precision: fp64}\n"),
                 "spec.model.precision"),
      namedRow("unknown-instance-type",
               workload("unknown-instance-type",
                        kIntent + "  constraints: {instanceTypes: [g99.xlarge]}\n"),
               "spec.constraints.instanceTypes[0]"),
      refusedRow(
          "allowed-and-excluded",
          workload("allowed-and-excluded", kIntent + "  constraints: {instanceTypes: [g5.xlarge], "
                                                     "excludedInstanceTypes: [g5.xlarge]}\n"),
          "both allowed and excluded"),
      placedRow(longName, workload(longName, kGpuIntent)),
      refusedRow("name-254", workload(std::string(254, 'b'), kIntent, "name-254"),
                 "must be no more than 253 characters"),
      refusedRow("unicode-name", workload("модель", kIntent, "unicode-name"), "metadata.name"),
      refusedRow("unicode-target", workload("unicode-target", kIntent, "модель"),
                 "spec.targetRef.name"),
      refusedRow("unicode-container",
                 workload("unicode-container", kIntent + "  containers: [\"容器\"]\n"),
                 "spec.containers[0]"),
      namedRow("missing-container",
               workload("missing-container", kIntent + "  containers: [gpu]\n"), "gpu", "Applied",
               "InvalidTarget"),
      withAnnotation(refusedRow("huge-annotation", "", "metadata.annotations: Too long"),
                     1024 * 1024),
      withAnnotation(namedRow("near-limit-annotation", workload("near-limit-annotation", kIntent),
                              "metadata.annotations", "Applied", "InvalidTarget"),
                     262'000),
      namedRow("forged-ownership", workload("forged-ownership", kIntent),
               "gpuplacement.io/owned-fields", "Applied", "InvalidTarget"),
      placedRow("team-toleration", workload("team-toleration", kGpuIntent)),
      refusedRow("policy-wrong-type", policy("policy-wrong-type", "  hoursPerMonth: many\n"),
                 "spec.hoursPerMonth"),
      refusedRow("policy-negative", policy("policy-negative", "  hoursPerMonth: -1\n"),
                 "spec.hoursPerMonth"),
      refusedRow("price-missing-fields",
                 policy("price-missing-fields", "  prices: [{instanceType: g5.xlarge}]\n"),
                 "set onDemand, spot or both"),
      priceUnknown,
      refusedRow("toleration-without-key",
                 policy("toleration-without-key",
                        "  tiers: {NVIDIA: {tolerations: [{effect: NoSchedule}]}}\n"),
                 "a toleration without a key must have operator Exists"),
      refusedRow("bad-label-key",
                 policy("bad-label-key", "  nodeLabels: {capacityType: {key: \"not a key!\"}}\n"),
                 "spec.nodeLabels.capacityType.key"),
      namedRow("all-disabled",
               policy("all-disabled", "  disabledInstanceTypes: [" + allTypes + "]\n") + "---\n" +
                   workload("all-disabled", kIntent + "  policyRef: {name: all-disabled}\n"),
               "", "Placed", "CannotPlace"),
  };
}

json deploymentWith(const Row& row) {
  json deployment = deploymentObject(kNs, row.name);
  if (row.name.size() > 63) {  // a name too long for a label value
    deployment["spec"]["selector"]["matchLabels"]["app"] = "long-name";
    deployment["spec"]["template"]["metadata"]["labels"]["app"] = "long-name";
  }
  if (!row.deploymentAnnotation.empty()) {
    deployment["metadata"]["annotations"]["notes"] = row.deploymentAnnotation;
  }
  if (row.name == "forged-ownership") {
    deployment["metadata"]["annotations"]["gpuplacement.io/owned-fields"] = "{not a record";
  }
  if (row.name == "team-toleration") {  // exactly the one the operator would add
    deployment["spec"]["template"]["spec"]["tolerations"].push_back(
        {{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}});
  }
  return deployment;
}

std::string conditionPath(const Row& row) {
  if (row.object == "policy") {
    return policiesPath(row.name);
  }
  return workloadsPath(kNs, row.name);
}

}  // namespace

TEST_CASE("hostile and careless input: refused by the API server or named in a condition") {
  auto& c = Cluster::withCrds();
  createNamespace(c, kNs);
  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  int refused = 0;
  int named = 0;
  int placed = 0;
  for (const auto& row : rows()) {
    CAPTURE(row.name.substr(0, 40));
    auto created = c.create(deploymentsPath(kNs), deploymentWith(row));
    if (row.name == "huge-annotation") {
      // The Deployment itself is what is refused, by the API server.
      REQUIRE_FALSE(created.ok());
      CHECK(created.error().describe().find(row.mentions) != std::string::npos);
      ++refused;
      continue;
    }
    REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
    const auto before = c.mustGet(deploymentsPath(kNs, row.name));
    const auto applied = kubectl("apply", row.manifest);
    switch (row.expect) {
      case Expect::Refused:
        CHECK(applied.exitCode != 0);
        CHECK_MESSAGE(applied.err.find(row.mentions) != std::string::npos, applied.err);
        ++refused;
        break;
      case Expect::Condition: {
        REQUIRE_MESSAGE(applied.exitCode == 0, applied.err);
        const bool said = c.waitFor([&] {
          auto object = c.get(conditionPath(row));
          return object && conditionIs(*object, row.condition, "False", row.reason);
        });
        CHECK_MESSAGE(said, op.log().substr(op.log().size() > 4000 ? op.log().size() - 4000 : 0));
        if (said) {
          const auto object = c.mustGet(conditionPath(row));
          const auto* condition = conditionOf(object, row.condition);
          CHECK_MESSAGE(
              base::stringMember(*condition, "message").find(row.mentions) != std::string::npos,
              base::stringMember(*condition, "message"));
        }
        ++named;
        break;
      }
      case Expect::Placed: {
        REQUIRE_MESSAGE(applied.exitCode == 0, applied.err);
        CHECK(c.waitFor([&] {
          auto object = c.get(workloadsPath(kNs, row.name));
          return object && conditionIs(*object, "Applied", "True");
        }));
        ++placed;
        break;
      }
    }
    const auto after = c.mustGet(deploymentsPath(kNs, row.name));
    if (row.expect != Expect::Placed) {
      // Untouched: not one field of the pod template, no ownership record.
      CHECK(after["metadata"]["generation"] == before["metadata"]["generation"]);
      CHECK(after["spec"] == before["spec"]);
      CHECK(base::stringMember(base::memberOf(after["metadata"], "annotations"),
                               "gpuplacement.io/owned-fields") ==
            base::stringMember(base::memberOf(before["metadata"], "annotations"),
                               "gpuplacement.io/owned-fields"));
    } else {
      // Whole: the selector, the device request and the record, together.
      const auto& pod = after["spec"]["template"]["spec"];
      CHECK(pod["nodeSelector"].contains("node.kubernetes.io/instance-type"));
      CHECK(pod["containers"][0]["resources"]["limits"].contains("nvidia.com/gpu"));
      CHECK(after["metadata"]["annotations"].contains("gpuplacement.io/owned-fields"));
    }
  }
  MESSAGE(refused << " refused by the API server, " << named << " named in a condition, " << placed
                  << " placed whole");

  // The team's toleration, identical to the operator's, is there once and
  // stays when the GpuWorkload goes.
  const auto tolerations = [&] {
    return c.mustGet(
        deploymentsPath(kNs, "team-toleration"))["spec"]["template"]["spec"]["tolerations"];
  };
  CHECK(tolerations().size() == 2);
  REQUIRE(c.remove(workloadsPath(kNs, "team-toleration")).ok());
  CHECK(c.waitFor([&] { return !c.get(workloadsPath(kNs, "team-toleration")).ok(); }));
  CHECK(tolerations().size() == 2);
  CHECK(tolerations()[1]["key"] == "nvidia.com/gpu");

  CHECK(op.running());
  CHECK(op.log().find("Sanitizer") == std::string::npos);
  CHECK(op.stop() == 0);
}

}  // namespace gpuplacement
