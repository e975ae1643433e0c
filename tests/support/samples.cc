#include "support/samples.h"

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/why_not.h"

namespace gpuplacement::testing {

namespace {

using base::memberOf;
using base::stringMember;

std::vector<json> documentsOf(const std::string& path) {
  auto documents = base::parseYamlDocuments(readFile(path), path);
  REQUIRE_MESSAGE(documents.ok(), gpuplacement::testing::whyNot(documents));
  return *documents;
}

// The condition `type` of an object, or null.
const json* conditionOf(const json& object, const std::string& type) {
  const auto& conditions = memberOf(memberOf(object, "status"), "conditions");
  if (conditions.is_array()) {
    for (const auto& condition : conditions) {
      if (stringMember(condition, "type") == type) {
        return &condition;
      }
    }
  }
  return nullptr;
}

std::string said(const json& object, const std::string& type) {
  const auto* condition = conditionOf(object, type);
  return condition ? stringMember(*condition, "status") + "/" + stringMember(*condition, "reason")
                   : "none";
}

bool isTrue(const json& object, const std::string& type) {
  const auto* condition = conditionOf(object, type);
  return condition && stringMember(*condition, "status") == "True";
}

// Why the target's pods are not all Running (a Job's: Running or
// Succeeded) on nodes of `type`; empty when they are.
std::string podsNotOn(Cluster& cluster, const SampleTarget& target, const std::string& type) {
  const auto path = Cluster::pathOf(target.kind == "Job" ? "batch/v1" : "apps/v1", target.kind,
                                    target.ns, target.name);
  const auto object = cluster.mustGet(path);
  const bool job = target.kind == "Job";
  const auto replicas =
      job ? 1 : base::integerOf(memberOf(memberOf(object, "spec"), "replicas"), 1);
  const auto pods = cluster.mustGet("/api/v1/namespaces/" + target.ns +
                                    "/pods?labelSelector=app%3D" + target.name)["items"];
  std::int64_t counted = 0;
  for (const auto& pod : pods) {
    const auto phase = stringMember(memberOf(pod, "status"), "phase");
    const auto nodeName = stringMember(memberOf(pod, "spec"), "nodeName");
    const std::string podName = stringMember(memberOf(pod, "metadata"), "name");
    if (memberOf(pod, "metadata").contains("deletionTimestamp")) {
      return podName + " is terminating";
    }
    if (!(phase == "Running" || (job && phase == "Succeeded")) || nodeName.empty()) {
      return podName + " is " + phase;
    }
    const auto node = cluster.mustGet("/api/v1/nodes/" + nodeName);
    const auto nodeType = stringMember(memberOf(memberOf(node, "metadata"), "labels"),
                                       "node.kubernetes.io/instance-type");
    if (nodeType != type) {
      return podName + " runs on " + nodeType + ", not " + type;
    }
    ++counted;
  }
  if (job ? counted < 1 : counted != replicas) {
    return std::to_string(counted) + " of " + std::to_string(replicas) + " pods Running";
  }
  return "";
}

}  // namespace

std::vector<std::string> sampleManifests(const std::string& samples) {
  return {samples + "/placementpolicy.yaml", samples + "/deployments.yaml",
          samples + "/mig-tenant.yaml", samples + "/jobs.yaml", samples + "/gpuworkloads.yaml"};
}

std::vector<SampleTarget> sampleTargets(const std::string& samples) {
  std::vector<SampleTarget> targets;
  for (const auto& manifest : sampleManifests(samples)) {
    for (const auto& document : documentsOf(manifest)) {
      const auto& metadata = memberOf(document, "metadata");
      const auto& spec = memberOf(document, "spec");
      const auto kind = stringMember(document, "kind");
      if (kind == "GpuWorkload") {
        targets.push_back({stringMember(metadata, "namespace"),
                           stringMember(memberOf(spec, "targetRef"), "name"),
                           stringMember(memberOf(spec, "targetRef"), "kind"),
                           stringMember(spec, "mode") != "Recommend"});
      } else if (kind == "Deployment" && manifest.ends_with("/mig-tenant.yaml")) {
        const auto& pod = memberOf(memberOf(spec, "template"), "spec");
        targets.push_back(
            {stringMember(metadata, "namespace"), stringMember(metadata, "name"), kind, false,
             stringMember(memberOf(pod, "nodeSelector"), "node.kubernetes.io/instance-type")});
      }
    }
  }
  return targets;
}

void applySamples(Cluster& cluster, const std::string& samples) {
  for (const char* ns : {"ml-serving", "research", "search"}) {
    cluster.apply(std::string("apiVersion: v1\nkind: Namespace\nmetadata: {name: ") + ns + "}\n");
  }
  for (const auto& manifest : sampleManifests(samples)) {
    cluster.apply(readFile(manifest));
  }
}

std::string notRunning(Cluster& cluster, const SampleTarget& target) {
  const std::string name = target.ns + "/" + target.name;
  if (!target.runsOn.empty()) {
    const auto why = podsNotOn(cluster, target, target.runsOn);
    return why.empty() ? "" : name + ": " + why;
  }
  const auto workload = cluster.mustGet(
      Cluster::pathOf("gpuplacement.io/v1alpha1", "GpuWorkload", target.ns, target.name));
  const auto type =
      stringMember(memberOf(memberOf(workload, "status"), "placement"), "instanceType");
  if (!target.placed) {
    return said(workload, "Ready") == "True/Recommended" && !type.empty()
               ? ""
               : name + ": Ready is " + said(workload, "Ready") + ", recommended " + type;
  }
  const bool finishedJob =
      target.kind == "Job" && !memberOf(memberOf(workload, "status"), "run").is_null();
  if (type.empty() || !isTrue(workload, "Placed") || !isTrue(workload, "Applied") ||
      !(finishedJob || isTrue(workload, "Ready"))) {
    return name + ": Placed " + said(workload, "Placed") + ", Applied " +
           said(workload, "Applied") + ", Ready " + said(workload, "Ready") + ", on '" + type + "'";
  }
  const auto why = podsNotOn(cluster, target, type);
  return why.empty() ? "" : name + " (placed on " + type + "): " + why;
}

}  // namespace gpuplacement::testing
