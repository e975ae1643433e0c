#pragma once

// Small builders and readers of the objects the reliability tests create,
// on top of Cluster: a namespace, a Deployment with the team's own
// scheduling fields, a GpuWorkload, its conditions and its Events.
#include <algorithm>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/why_not.h"

namespace gpuplacement::testing {

inline std::string deploymentsPath(const std::string& ns, const std::string& name = "") {
  return Cluster::pathOf("apps/v1", "Deployment", ns, name);
}
inline std::string workloadsPath(const std::string& ns, const std::string& name = "") {
  return Cluster::pathOf("gpuplacement.io/v1alpha1", "GpuWorkload", ns, name);
}
inline std::string policiesPath(const std::string& name = "") {
  return Cluster::pathOf("gpuplacement.io/v1alpha1", "PlacementPolicy", "", name);
}

inline void createNamespace(Cluster& c, const std::string& ns) {
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + ns + "}\n");
}

// A Deployment with a toleration and resources of the team's own.
inline json deploymentObject(const std::string& ns, const std::string& name) {
  return json{{"apiVersion", "apps/v1"},
              {"kind", "Deployment"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec",
               {{"replicas", 1},
                {"selector", {{"matchLabels", {{"app", name}}}}},
                {"template",
                 {{"metadata", {{"labels", {{"app", name}}}}},
                  {"spec",
                   {{"tolerations", json::array({{{"key", "dedicated"},
                                                  {"operator", "Equal"},
                                                  {"value", "ml"},
                                                  {"effect", "NoSchedule"}}})},
                    {"containers",
                     json::array({{{"name", "server"},
                                   {"image", "registry.k8s.io/pause:3.10"},
                                   {"resources",
                                    {{"requests", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}})}}}}}}}};
}

inline void createDeployment(Cluster& c, const std::string& ns, const std::string& name) {
  auto created = c.create(deploymentsPath(ns), deploymentObject(ns, name));
  REQUIRE_MESSAGE(created.ok(), gpuplacement::testing::whyNot(created));
}

inline json workloadObject(const std::string& ns, const std::string& name, json spec) {
  return json{{"apiVersion", "gpuplacement.io/v1alpha1"},
              {"kind", "GpuWorkload"},
              {"metadata", {{"name", name}, {"namespace", ns}}},
              {"spec", std::move(spec)}};
}

inline json inferenceSpec(const std::string& target, const std::string& parameters) {
  return json{{"targetRef", {{"name", target}}},
              {"workload", {{"kind", "Inference"}}},
              {"model", {{"parameters", parameters}}},
              {"objective", "CostOptimized"},
              {"constraints", {{"tiers", json::array({"NVIDIA"})}}}};
}

inline const json* conditionOf(const json& object, const std::string& type) {
  for (const auto& item : base::memberOf(base::memberOf(object, "status"), "conditions")) {
    if (base::stringMember(item, "type") == type) {
      return &item;
    }
  }
  return nullptr;
}

inline bool conditionIs(const json& object, const std::string& type, const std::string& status,
                        const std::string& reason = "") {
  const auto* found = conditionOf(object, type);
  return found && base::stringMember(*found, "status") == status &&
         (reason.empty() || base::stringMember(*found, "reason") == reason);
}

// The Events about one object: (reason, message) in the order listed.
inline std::vector<std::pair<std::string, std::string>> eventsAbout(Cluster& c,
                                                                    const std::string& ns,
                                                                    const std::string& name) {
  std::vector<std::pair<std::string, std::string>> events;
  const auto list = c.mustGet("/api/v1/namespaces/" + ns + "/events");
  for (const auto& event : list["items"]) {
    if (base::stringMember(event["involvedObject"], "name") == name) {
      events.emplace_back(base::stringMember(event, "reason"),
                          base::stringMember(event, "message"));
    }
  }
  return events;
}

}  // namespace gpuplacement::testing
