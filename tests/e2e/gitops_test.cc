// GitOps tools and the operator on one Deployment, on the simulated EKS
// cluster (config/sim/e2e-gitops.yaml), with the pinned kubectl writing the
// way each tool writes:
//   - client-side apply, repeated (Argo CD's default; `kubectl apply`);
//   - server-side apply with a field manager of its own and
//     --force-conflicts, repeated (Flux's kustomize-controller; Argo CD with
//     ServerSideApply=true);
//   - a replace of the whole object, repeated (Argo CD's Replace=true).
// Each with a manifest that sets no scheduling fields and one that sets its
// own node selector and toleration. After every sync the test checks that
// the Deployment still carries the placement, that its pods run on the
// placed type, and counts from the API server's audit log the writes each
// side made. The figures are printed (ctest -V) and in docs/gitops.md.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/json_access.h"
#include "core/kinds/pod_scheduling.h"
#include "core/kinds/target.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/suite.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::cluster;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;
using namespace std::chrono_literals;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;
  options.pools = "config/sim/e2e-gitops.yaml";
  ControlPlane::configure(options);
  return true;
}();

const std::string kGroup = "gpuplacement.io/v1alpha1";
const std::string kGitOpsManager = "kustomize-controller";
const std::string kPlacedType = "g5.xlarge";
const std::string kTypeLabel = "node.kubernetes.io/instance-type";

// A shell command with the pinned kubectl on PATH and KUBECONFIG set to
// the admin's (the GitOps tool's hands here).
testing::CommandResult kubectl(const std::string& arguments) {
  return testing::runCommand("eval \"$(" + testing::repoRoot() + "/scripts/controlplane env " +
                             ControlPlane::shared().dir() + ")\" && kubectl " + arguments);
}

enum class Writer { ClientSideApply, ServerSideApply, Replace };

const char* nameOf(Writer writer) {
  switch (writer) {
    case Writer::ClientSideApply:
      return "client-side apply (Argo CD default)";
    case Writer::ServerSideApply:
      return "server-side apply --force-conflicts (Flux)";
    case Writer::Replace:
      return "replace (Argo CD Replace=true)";
  }
  return "";
}

struct Scenario {
  std::string ns;
  Writer writer;
  bool teamFields;      // the manifest sets its own nodeSelector and a toleration
  std::string placeAt;  // the policy's: Auto or PodTemplate
};

// The team's manifest as it sits in git; `commit` changes with each commit.
std::string manifest(const Scenario& s, int commit) {
  std::ostringstream out;
  out << "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: " << s.ns
      << "\n  labels: {app: app}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: app}}\n"
      << "  template:\n    metadata:\n      labels: {app: app}\n"
      << "      annotations: {example.com/commit: \"" << commit << "\"}\n    spec:\n";
  if (s.teamFields) {
    out << "      nodeSelector: {kubernetes.io/os: linux}\n"
        << "      tolerations:\n"
        << "      - {key: dedicated, operator: Equal, value: ml, effect: NoSchedule}\n";
  }
  out << "      containers:\n      - name: server\n        image: registry.example/serve:1\n"
      << "        resources: {requests: {cpu: 500m, memory: 1Gi}}\n";
  return out.str();
}

// One sync of the tool: the manifest at `commit`, written its way (the
// first one creates the Deployment).
void sync(const Scenario& s, int commit, bool first = false) {
  const std::string file = ControlPlane::shared().dir() + "/" + s.ns + ".yaml";
  std::ofstream(file) << manifest(s, commit);
  std::string arguments;
  switch (s.writer) {
    case Writer::ClientSideApply:
      arguments = "apply -f " + file;
      break;
    case Writer::ServerSideApply:
      arguments =
          "apply --server-side --force-conflicts --field-manager=" + kGitOpsManager + " -f " + file;
      break;
    case Writer::Replace:
      arguments = (first ? "create -f " : "replace -f ") + file;
      break;
  }
  const auto result = kubectl(arguments);
  REQUIRE_MESSAGE(result.exitCode == 0, arguments << ": " << result.err);
}

std::string policyName(const Scenario& s) {
  return s.placeAt == "Auto" ? "default" : "template";
}

void createPolicies() {
  for (const char* placeAt : {"Auto", "PodTemplate"}) {
    const std::string name = std::string(placeAt) == "Auto" ? "default" : "template";
    json policy = {{"apiVersion", kGroup},
                   {"kind", "PlacementPolicy"},
                   {"metadata", {{"name", name}}},
                   {"spec",
                    {{"placeAt", placeAt},
                     {"nodeLabels",
                      {{"scheme", "InstanceType"},
                       {"capacityType",
                        {{"key", "eks.amazonaws.com/capacityType"},
                         {"onDemand", "ON_DEMAND"},
                         {"spot", "SPOT"}}}}},
                     {"replacement", {{"cooldown", "0s"}}}}}};
    auto created = cluster().create(Cluster::pathOf(kGroup, "PlacementPolicy", ""), policy);
    REQUIRE_MESSAGE(created.ok(), testing::whyNot(created));
  }
}

std::unique_ptr<OperatorProcess>& operatorProcess() {
  static std::unique_ptr<OperatorProcess> op = [] {
    createPolicies();
    auto started = std::make_unique<OperatorProcess>(cluster().operatorKubeconfig());
    REQUIRE_MESSAGE(started->waitReady(60s), started->log());
    return started;
  }();
  return op;
}

void createWorkload(const Scenario& s) {
  json workload = {{"apiVersion", kGroup},
                   {"kind", "GpuWorkload"},
                   {"metadata", {{"name", "app"}, {"namespace", s.ns}}},
                   {"spec",
                    {{"targetRef", {{"kind", "Deployment"}, {"name", "app"}}},
                     {"policyRef", {{"name", policyName(s)}}},
                     {"workload", {{"kind", "Inference"}, {"latencyTargetMs", 100}}},
                     {"model", {{"parameters", "3B"}, {"precision", "fp16"}}},
                     {"objective", "CostOptimized"},
                     {"constraints", {{"tiers", {"NVIDIA"}}}}}}};
  auto created = cluster().create(Cluster::pathOf(kGroup, "GpuWorkload", s.ns), workload);
  REQUIRE_MESSAGE(created.ok(), testing::whyNot(created));
}

json deployment(const Scenario& s) {
  return cluster().mustGet(Cluster::pathOf("apps/v1", "Deployment", s.ns, "app"));
}

json workload(const Scenario& s) {
  return cluster().mustGet(Cluster::pathOf(kGroup, "GpuWorkload", s.ns, "app"));
}

const json* condition(const json& object, const std::string& type) {
  for (const auto& item : base::memberOf(base::memberOf(object, "status"), "conditions")) {
    if (base::stringMember(item, "type") == type) {
      return &item;
    }
  }
  return nullptr;
}

std::string conditionOf(const json& object, const std::string& type) {
  const auto* found = condition(object, type);
  return found ? base::stringMember(*found, "status") + "/" + base::stringMember(*found, "reason")
               : "absent";
}

// Where the placement sits on the Deployment, if anywhere: "PodTemplate"
// (the instance-type selector and the GPU toleration in the template), "Pods" (the gate and the
// annotation naming the type) or "" (taken back).
std::string carried(const json& object) {
  const auto& templ = object["spec"]["template"];
  const auto& spec = templ["spec"];
  bool tolerated = false;
  for (const auto& toleration : base::memberOf(spec, "tolerations")) {
    tolerated = tolerated || base::stringMember(toleration, "key") == "nvidia.com/gpu";
  }
  if (base::stringMember(base::memberOf(spec, "nodeSelector"), kTypeLabel.c_str()) == kPlacedType &&
      tolerated) {
    return "PodTemplate";
  }
  const auto text = base::stringMember(base::memberOf(templ["metadata"], "annotations"),
                                       core::kPodSchedulingAnnotation);
  bool gated = false;
  for (const auto& gate : base::memberOf(spec, "schedulingGates")) {
    gated = gated || base::stringMember(gate, "name") == core::kSchedulingGate;
  }
  if (gated && text.find(kPlacedType) != std::string::npos) {
    return "Pods";
  }
  return "";
}

// The pods of the Deployment's current template are Running and Ready on
// the placed type, and none waits behind a gate: the placement runs.
bool podsRunPlaced(const Scenario& s) {
  const auto object = deployment(s);
  const auto& status = object["status"];
  if (base::integerMember(status, "observedGeneration") !=
          base::integerMember(object["metadata"], "generation") ||
      base::integerMember(status, "updatedReplicas") != 1 ||
      base::integerMember(status, "availableReplicas") != 1 ||
      base::integerMember(status, "replicas") != 1) {
    return false;
  }
  const auto pods = cluster().get("/api/v1/namespaces/" + s.ns + "/pods");
  if (!pods.ok()) {
    return false;
  }
  int running = 0;
  for (const auto& pod : (*pods)["items"]) {
    if (pod["metadata"].contains("deletionTimestamp")) {
      continue;
    }
    const std::string node = base::stringMember(pod["spec"], "nodeName");
    if (node.empty() || base::stringMember(pod["status"], "phase") != "Running") {
      return false;
    }
    const auto labels = cluster().mustGet("/api/v1/nodes/" + node)["metadata"]["labels"];
    if (base::stringMember(labels, kTypeLabel.c_str()) != kPlacedType) {
      return false;
    }
    ++running;
  }
  return running == 1;
}

// Writes to this scenario's namespace, from the audit log: the operator's
// patches of the Deployment and of pods, and the tool's writes.
struct Writes {
  int operatorDeployment = 0;  // patches the server took
  int operatorConflicts = 0;   // refused with 409 (the object changed first), then planned again
  int operatorPods = 0;
  int tool = 0;
};

Writes writesIn(const Scenario& s) {
  Writes writes;
  auto& plane = ControlPlane::shared();
  for (const auto& entry : testing::readAudit(plane, cluster().operatorUser())) {
    if (entry.ns != s.ns || entry.stage != "ResponseComplete" || entry.verb != "patch") {
      continue;
    }
    if (entry.code == 409) {
      writes.operatorConflicts += entry.resource == "deployments";
      continue;
    }
    writes.operatorDeployment += entry.resource == "deployments";
    writes.operatorPods += entry.resource == "pods";
  }
  for (const auto& entry : testing::readAudit(plane, "admin")) {
    if (entry.ns == s.ns && entry.stage == "ResponseComplete" && entry.resource == "deployments" &&
        (entry.verb == "patch" || entry.verb == "update" || entry.verb == "create")) {
      ++writes.tool;
    }
  }
  return writes;
}

// Lets the operator react to a sync: the Deployment's generation and the
// GpuWorkload's status stay as they are for `quiet`.
void settle(const Scenario& s, std::chrono::milliseconds quiet = 3s) {
  auto last = std::make_pair(deployment(s)["metadata"]["generation"], workload(s)["status"]);
  auto since = std::chrono::steady_clock::now();
  const auto deadline = since + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(250ms);
    auto now = std::make_pair(deployment(s)["metadata"]["generation"], workload(s)["status"]);
    if (now != last) {
      last = std::move(now);
      since = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - since >= quiet) {
      return;
    }
  }
  FAIL("the Deployment or the GpuWorkload in " << s.ns << " kept changing for a minute");
}

struct Outcome {
  std::vector<std::string> carriedAfterSync;  // where the placement was after each sync
  Writes writes;
  std::int64_t generation = 0;
  std::string applied;
  json reverts;
  bool podsPlaced = false;
};

// The commits each sync applies after the first one: a re-apply of what
// runs (a GitOps tool's periodic sync, or its self-heal), a new commit, a
// re-apply, a new commit.
const std::vector<int> kSyncs = {0, 1, 1, 2};
// The same, then once more: after the operator has stopped, a new commit
// gets one more try and the re-apply after it stops it again.
const std::vector<int> kFightSyncs = {0, 1, 1, 2, 2};

// Creates the namespace, syncs the manifest (commit 0), places it, then
// syncs `commits`, settling after each. `placed`: the pods are expected to
// run on the placed type at the end.
Outcome run(const Scenario& s, const std::vector<int>& commits, bool placed) {
  operatorProcess();
  cluster().apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + s.ns + "}\n");
  sync(s, 0, true);
  createWorkload(s);
  REQUIRE_MESSAGE(
      cluster().waitFor([&] { return conditionOf(workload(s), "Applied") == "True/Applied"; }, 30s),
      s.ns << ": " << workload(s)["status"].dump());
  REQUIRE_MESSAGE(cluster().waitFor([&] { return podsRunPlaced(s); }, 60s), s.ns);
  Outcome outcome;
  for (const int commit : commits) {
    sync(s, commit);
    settle(s);
    outcome.carriedAfterSync.push_back(carried(deployment(s)));
  }
  outcome.podsPlaced = placed && cluster().waitFor([&] { return podsRunPlaced(s); }, 30s);
  outcome.writes = writesIn(s);
  outcome.generation = deployment(s)["metadata"]["generation"].get<std::int64_t>();
  const auto object = workload(s);
  outcome.applied = conditionOf(object, "Applied");
  outcome.reverts = base::memberOf(object["status"], "reverts");
  MESSAGE(s.ns << " | " << std::string(nameOf(s.writer))
               << " | team fields: " << std::string(s.teamFields ? "yes" : "no") << " | placeAt "
               << s.placeAt << " | after each sync: " << json(outcome.carriedAfterSync).dump()
               << " | operator patches: Deployment " << outcome.writes.operatorDeployment << " (+"
               << outcome.writes.operatorConflicts << " refused 409), pods "
               << outcome.writes.operatorPods << " | tool writes " << outcome.writes.tool
               << " | generation " << outcome.generation << " | Applied " << outcome.applied
               << " | pods on the placed type: " << std::string(outcome.podsPlaced ? "yes" : "no"));
  return outcome;
}

// Where the placement is after each of kFightSyncs when the tool takes it
// back every time: put back twice, not the third time, one more try after
// the new commit, stopped again.
const std::vector<std::string> kFought = {"PodTemplate", "PodTemplate", "", "PodTemplate", ""};

}  // namespace

TEST_CASE(
    "gitops: re-applied manifests without scheduling fields keep the placement in the template") {
  for (const auto writer : {Writer::ClientSideApply, Writer::ServerSideApply}) {
    const Scenario s{writer == Writer::ClientSideApply ? "csa-bare" : "ssa-bare", writer, false,
                     "Auto"};
    CAPTURE(s.ns);
    const auto outcome = run(s, kSyncs, true);
    CHECK(outcome.carriedAfterSync == std::vector<std::string>(kSyncs.size(), "PodTemplate"));
    CHECK(outcome.applied == "True/Applied");
    CHECK(outcome.podsPlaced);
    // One placement, never written again; the tool's two new commits roll
    // the Deployment once each and nothing else does (1 at creation, 1 for
    // the placement).
    CHECK(outcome.writes.operatorDeployment == 1);
    CHECK(outcome.writes.operatorPods == 0);
    CHECK(outcome.generation == 4);
    CHECK(outcome.reverts.is_null());
    // What Argo CD's ignoreDifferences.managedFieldsManagers names: the
    // operator's entries are owned by its field manager.
    const auto shown = kubectl("get deployment app -n " + s.ns + " --show-managed-fields -o json");
    REQUIRE(shown.exitCode == 0);
    const auto object = json::parse(shown.out, nullptr, false);
    bool owned = false;
    for (const auto& entry : base::memberOf(object["metadata"], "managedFields")) {
      if (base::stringMember(entry, "manager") == core::kFieldManager) {
        const auto& spec = base::memberOf(
            base::memberOf(base::memberOf(base::memberOf(entry, "fieldsV1"), "f:spec"),
                           "f:template"),
            "f:spec");
        // Atomic fields: owned whole, not key by key.
        owned = spec.contains("f:nodeSelector") && spec.contains("f:tolerations");
      }
    }
    CHECK(owned);
  }
}

TEST_CASE(
    "gitops: manifests with their own node selector and tolerations move to the pods at "
    "the first sync, and stay") {
  for (const auto writer : {Writer::ClientSideApply, Writer::ServerSideApply}) {
    const Scenario s{writer == Writer::ClientSideApply ? "csa-team" : "ssa-team", writer, true,
                     "Auto"};
    CAPTURE(s.ns);
    const auto outcome = run(s, kSyncs, true);
    // The first re-apply takes the template's atomic fields back; the
    // operator moves the placement to the pods, where no sync reaches it.
    CHECK(outcome.carriedAfterSync == std::vector<std::string>(kSyncs.size(), "Pods"));
    CHECK(outcome.applied == "True/Applied");
    CHECK(outcome.podsPlaced);
    // The placement, and the move to the pods; nothing after.
    CHECK(outcome.writes.operatorDeployment == 2);
    // The pod of the move and one for each new commit's rollout.
    CHECK(outcome.writes.operatorPods == 3);
    // Created, placed, taken back, moved, two commits.
    CHECK(outcome.generation == 6);
    REQUIRE(outcome.reverts.is_object());
    CHECK(outcome.reverts["count"] == 1);
    CHECK_FALSE(outcome.reverts.contains("stoppedAtGeneration"));
    // The team's own fields stay as git has them.
    const auto templ = deployment(s)["spec"]["template"]["spec"];
    CHECK(templ["nodeSelector"] == json{{"kubernetes.io/os", "linux"}});
    CHECK(templ["tolerations"].size() == 1);
    // The pod was given the GPU toleration after its own, which keep what
    // admission gave them: the default not-ready and unreachable
    // tolerations' 300 s (without them it would tolerate a dead node for ever).
    auto pods = cluster().get("/api/v1/namespaces/" + s.ns + "/pods");
    REQUIRE(pods.ok());
    for (const auto& pod : (*pods)["items"]) {
      if (pod["metadata"].contains("deletionTimestamp")) {
        continue;
      }
      std::vector<std::string> keys;
      for (const auto& toleration : pod["spec"]["tolerations"]) {
        keys.push_back(base::stringMember(toleration, "key"));
        if (base::stringMember(toleration, "effect") == "NoExecute") {
          CHECK(base::integerMember(toleration, "tolerationSeconds") == 300);
        }
      }
      CHECK(std::find(keys.begin(), keys.end(), "nvidia.com/gpu") != keys.end());
      CHECK(std::find(keys.begin(), keys.end(), "node.kubernetes.io/not-ready") != keys.end());
      CHECK(pod["spec"]["nodeSelector"][kTypeLabel] == kPlacedType);
    }
  }
}

TEST_CASE(
    "gitops: in the template, atomic fields a manifest sets are taken back; the operator "
    "stops after two repairs and names the field manager") {
  for (const auto writer : {Writer::ClientSideApply, Writer::ServerSideApply}) {
    const Scenario s{writer == Writer::ClientSideApply ? "csa-team-template" : "ssa-team-template",
                     writer, true, "PodTemplate"};
    CAPTURE(s.ns);
    const auto outcome = run(s, kFightSyncs, false);
    CHECK(outcome.carriedAfterSync == kFought);
    CHECK(outcome.applied == "False/ManagerConflict");
    REQUIRE(outcome.reverts.is_object());
    CHECK(outcome.reverts.contains("stoppedAtGeneration"));
    const std::string manager = base::stringMember(outcome.reverts, "fieldManager");
    CHECK_MESSAGE(manager == (writer == Writer::ServerSideApply
                                  ? kGitOpsManager + " (Apply)"
                                  : std::string("kubectl-client-side-apply (Update)")),
                  manager);
    // What does not survive: the toleration (client-side apply replaces
    // the list) or both fields (server-side apply owns them whole).
    CHECK(outcome.reverts["fields"].dump().find("spec.template.spec.tolerations") !=
          std::string::npos);
    // The placement, two repairs, one more try after the new commit: a
    // bounded fight.
    CHECK(outcome.writes.operatorDeployment == 4);
    const auto object = workload(s);
    const auto* applied = condition(object, "Applied");
    REQUIRE(applied);
    const auto message = base::stringMember(*applied, "message");
    CHECK(message.find(manager) != std::string::npos);
    CHECK(message.find("placeAt: Pods") != std::string::npos);
  }
}

TEST_CASE("gitops: a tool that replaces the whole Deployment is not fought") {
  const Scenario s{"replace-bare", Writer::Replace, false, "Auto"};
  const auto outcome = run(s, kFightSyncs, false);
  CHECK(outcome.carriedAfterSync == kFought);
  CHECK(outcome.applied == "False/ManagerConflict");
  REQUIRE(outcome.reverts.is_object());
  CHECK(base::stringMember(outcome.reverts, "fieldManager") == "kubectl-replace (Update)");
  CHECK(outcome.writes.operatorDeployment == 4);
  // Stopped: replacing it with the same manifest again is not answered,
  // although it makes a new generation (a replace drops the Deployment
  // controller's revision annotation, and annotations count).
  const auto before = writesIn(s).operatorDeployment;
  sync(s, kFightSyncs.back());
  settle(s);
  CHECK(writesIn(s).operatorDeployment == before);
}

}  // namespace gpuplacement
