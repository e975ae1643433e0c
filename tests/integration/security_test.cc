// Security checks against the real control plane: TLS refusals that say
// why, no secret in the logs, a rotated service-account token picked up,
// the chart's RBAC against what the operator really calls (from the API
// server's audit log), and a Role without `patch` on Deployments reported
// on the GpuWorkload and in /readyz while the operator backs off.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/objects.h"
#include "support/paths.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using namespace testing;

const std::string kOperatorNs = "gpu-placement-system";

std::string shell(const std::string& command) {
  const auto result = runCommand("eval \"$(" + repoRoot() + "/scripts/controlplane env " +
                                 ControlPlane::shared().dir() + ")\" && " + command);
  REQUIRE_MESSAGE(result.exitCode == 0, command << ": " << result.err);
  return result.out;
}

std::string caData() {
  const auto kubeconfig = readFile(ControlPlane::shared().kubeconfigPath());
  const auto start = kubeconfig.find("certificate-authority-data: ") + 28;
  return kubeconfig.substr(start, kubeconfig.find('\n', start) - start);
}

// A kubeconfig for `server` with `user` (YAML of the user entry's body).
std::string writeKubeconfig(const std::string& name, const std::string& cluster,
                            const std::string& user) {
  const std::string path = ControlPlane::shared().dir() + "/" + name + ".kubeconfig";
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: c\n"
                      << "  cluster:\n"
                      << cluster << "users:\n- name: u\n  user:\n"
                      << user << "contexts:\n- name: c\n  context: {cluster: c, user: u}\n";
  return path;
}

std::string server() {
  return ControlPlane::shared().adminConfig().server;
}

// A ServiceAccount bound to a ClusterRole made of `rules` (and the Lease
// Role), and a token for it.
std::string serviceAccountWithRules(const std::string& account, const json& rules) {
  auto& c = Cluster::withCrds();
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kOperatorNs + "}\n");
  c.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: " + account +
          ", namespace: " + kOperatorNs + "}\n");
  const std::string rolePath = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
  auto role = c.create(rolePath, json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                                      {"kind", "ClusterRole"},
                                      {"metadata", {{"name", account}}},
                                      {"rules", rules}});
  REQUIRE_MESSAGE(role.ok(), gpuplacement::testing::whyNot(role));
  auto binding = c.create(
      "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
      json{
          {"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRoleBinding"},
          {"metadata", {{"name", account}}},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", account}}},
          {"subjects",
           json::array(
               {{{"kind", "ServiceAccount"}, {"name", account}, {"namespace", kOperatorNs}}})}});
  REQUIRE_MESSAGE(binding.ok(), gpuplacement::testing::whyNot(binding));
  return "system:serviceaccount:" + kOperatorNs + ":" + account;
}

std::string tokenFor(const std::string& account, const json& boundTo = nullptr) {
  json spec = {{"expirationSeconds", 3600}};
  if (!boundTo.is_null()) {
    spec["boundObjectRef"] = boundTo;
  }
  auto token = Cluster::withCrds().create(
      "/api/v1/namespaces/" + kOperatorNs + "/serviceaccounts/" + account + "/token",
      json{{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}});
  REQUIRE_MESSAGE(token.ok(), gpuplacement::testing::whyNot(token));
  return base::stringMember((*token)["status"], "token");
}

json operatorRules() {
  const auto role = base::parseYaml(readFile(repoRoot() + "/config/rbac/role.yaml"), "role");
  REQUIRE(role.ok());
  return (*role)["rules"];
}

struct Permission {
  std::string group;
  std::string resource;  // with "/subresource"
  std::string verb;
  bool operator<(const Permission& other) const {
    return std::tie(group, resource, verb) < std::tie(other.group, other.resource, other.verb);
  }
};

std::string describe(const Permission& p) {
  return p.verb + " " + p.resource + (p.group.empty() ? "" : "." + p.group);
}

// What `user` was allowed to do and did, by the audit log.
std::set<Permission> used(const std::string& user) {
  std::set<Permission> permissions;
  for (const auto& entry : readAudit(ControlPlane::shared(), user)) {
    if (entry.resource.empty()) {
      continue;  // /version and other non-resource URLs
    }
    const std::string resource =
        entry.subresource.empty() ? entry.resource : entry.resource + "/" + entry.subresource;
    permissions.insert({entry.apiGroup, resource, entry.verb});
  }
  return permissions;
}

std::set<Permission> granted(const std::vector<json>& roles) {
  std::set<Permission> permissions;
  for (const auto& role : roles) {
    for (const auto& rule : role["rules"]) {
      for (const auto& group : rule["apiGroups"]) {
        for (const auto& resource : rule["resources"]) {
          for (const auto& verb : rule["verbs"]) {
            permissions.insert({group, resource, verb});
          }
        }
      }
    }
  }
  return permissions;
}

// Every call the operator's code makes, and where: the whole of what the
// chart may grant. A new call fails the test below until it is listed here
// and granted in config/rbac and the chart.
const std::set<std::string> kCalls = {
    "watch gpuworkloads.gpuplacement.io",       // informers: streaming lists, then watches
    "watch placementpolicies.gpuplacement.io",  //   (runtime/informer.h)
    "watch deployments.apps",                   //   and the targets: Deployments,
    "watch statefulsets.apps",                  //   StatefulSets, Jobs
    "watch jobs.batch",                         //
    "list gpuworkloads.gpuplacement.io",        // paged lists, where streaming lists are
    "list placementpolicies.gpuplacement.io",   //   refused or a stream was cut short
    "list deployments.apps",                    //   (kube/list_watch_client.cc)
    "list statefulsets.apps",                   //
    "list jobs.batch",                          //
    "get deployments.apps",                     // read again after a 409 (app/api_writes.cc)
    "get statefulsets.apps",                    //
    "get jobs.batch",                           //
    "patch deployments.apps",                   // the placement
    "patch statefulsets.apps",                  //
    "patch jobs.batch",                         //   (and a Job's resume, in the same patch)
    "watch rayclusters.ray.io",                 // the custom kinds, where their CRDs
    "watch rayservices.ray.io",                 //   are installed (core/kinds/)
    "watch leaderworkersets.leaderworkerset.x-k8s.io", "list rayclusters.ray.io",
    "list rayservices.ray.io", "list leaderworkersets.leaderworkerset.x-k8s.io",
    "get rayclusters.ray.io", "get rayservices.ray.io",
    "get leaderworkersets.leaderworkerset.x-k8s.io",
    "patch rayclusters.ray.io",  //   by JSON patch
    "patch rayservices.ray.io", "patch leaderworkersets.leaderworkerset.x-k8s.io",
    "watch jobsets.jobset.x-k8s.io", "list jobsets.jobset.x-k8s.io", "get jobsets.jobset.x-k8s.io",
    "patch jobsets.jobset.x-k8s.io", "watch rayjobs.ray.io", "list rayjobs.ray.io",
    "get rayjobs.ray.io", "patch rayjobs.ray.io", "watch trainjobs.trainer.kubeflow.org",
    "list trainjobs.trainer.kubeflow.org", "get trainjobs.trainer.kubeflow.org",
    "patch trainjobs.trainer.kubeflow.org",
    "patch gpuworkloads.gpuplacement.io",  // finalizers
    "patch gpuworkloads/status.gpuplacement.io", "patch placementpolicies/status.gpuplacement.io",
    "create events",
    "watch horizontalpodautoscalers.autoscaling",  // what a target may scale to
    "list horizontalpodautoscalers.autoscaling",   //   (app/caches.cc)
    "watch nodes",                                 // the cluster view (app/caches.cc), read only
    "watch pods",                                  //
    "watch nodepools.karpenter.sh",                // when the API server serves Karpenter's CRD
    "list nodes", "list pods", "list nodepools.karpenter.sh",
    "watch nodeoverlays.karpenter.sh",  // pricing as Karpenter does (app/caches.cc)
    "list nodeoverlays.karpenter.sh",
    "create nodeoverlays.karpenter.sh",  // sharing a policy's prices (app/policy_reconciler.cc)
    "patch nodeoverlays.karpenter.sh", "delete nodeoverlays.karpenter.sh",
    "watch ec2nodeclasses.karpenter.k8s.aws",  // when reservations end (app/caches.cc)
    "list ec2nodeclasses.karpenter.k8s.aws",
    "watch resourceslices.resource.k8s.io",  // the devices DRA drivers publish
                                             // (app/cluster_view_dra.cc)
    "list resourceslices.resource.k8s.io",
    "watch resourceclaims.resource.k8s.io",  // and the ones claims hold
    "list resourceclaims.resource.k8s.io",
    "create resourceclaimtemplates.resource.k8s.io",  // a placement's claim
                                                      // (app/workload_reconciler.cc)
    "delete resourceclaimtemplates.resource.k8s.io",
    "patch pods",  // placing the pods behind the scheduling gate (app/pod_release_reconciler.cc)
    "watch workloads.kueue.x-k8s.io",  // Kueue's admission check (app/kueue_admission.cc),
    "list workloads.kueue.x-k8s.io",   //   where Kueue is installed
    "watch resourceflavors.kueue.x-k8s.io", "list resourceflavors.kueue.x-k8s.io",
    "watch admissionchecks.kueue.x-k8s.io", "list admissionchecks.kueue.x-k8s.io",
    "patch workloads/status.kueue.x-k8s.io", "patch admissionchecks/status.kueue.x-k8s.io",
    "get leases.coordination.k8s.io",  // leader election (kube/leader_election.cc)
    "create leases.coordination.k8s.io", "update leases.coordination.k8s.io",
    "create tokenreviews.authentication.k8s.io",         // who scrapes /metrics, and may they
    "create subjectaccessreviews.authorization.k8s.io",  //   (app/metrics_access.cc)
};

}  // namespace

TEST_CASE("TLS: a wrong CA and a host-name mismatch are refused, and the error says which") {
  auto& plane = ControlPlane::shared();
  const std::string dir = plane.dir() + "/wrong-ca";
  std::filesystem::create_directories(dir);
  shell(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
      "-subj /CN=not-the-cluster-ca -keyout " +
      dir + "/ca.key -out " + dir + "/ca.crt 2>&1");
  const std::string user = "    client-certificate: " + plane.dir() + "/pki/admin.crt\n" +
                           "    client-key: " + plane.dir() + "/pki/admin.key\n";
  const auto wrongCa = writeKubeconfig(
      "wrong-ca", "    server: " + server() + "\n    certificate-authority: " + dir + "/ca.crt\n",
      user);
  const auto wrongName =
      writeKubeconfig("wrong-name",
                      "    server: " + server() + "\n    certificate-authority-data: " + caData() +
                          "\n    tls-server-name: not-the-apiserver.example\n",
                      user);
  const std::string binary = testing::operatorBinary();
  const auto ca = runCommand(binary + " version --server --kubeconfig " + wrongCa);
  CHECK(ca.exitCode == 3);
  CHECK_MESSAGE(ca.err.find("certificate verify failed") != std::string::npos, ca.err);
  CHECK_MESSAGE(ca.err.find("unable to get local issuer certificate") != std::string::npos, ca.err);
  const auto name = runCommand(binary + " version --server --kubeconfig " + wrongName);
  CHECK(name.exitCode == 3);
  CHECK_MESSAGE(name.err.find("hostname mismatch") != std::string::npos, name.err);
  CHECK(name.err.find("not-the-apiserver.example") != std::string::npos);
  // The control: the right CA and name work.
  CHECK(runCommand(binary + " version --server --kubeconfig " + plane.kubeconfigPath()).exitCode ==
        0);

  // The operator never becomes ready on a connection it cannot trust, and
  // its log says why.
  OperatorProcess op(wrongCa);
  CHECK_FALSE(op.waitReady(std::chrono::seconds(4)));
  CHECK(OperatorProcess::httpGet(op.healthPort(), "/readyz").first == 503);
  CHECK(op.log().find("unable to get local issuer certificate") != std::string::npos);
  CHECK(op.stop() == 0);
}

TEST_CASE("a rotated service-account token file is picked up; no token or key is ever logged") {
  auto& c = Cluster::withCrds();
  const std::string account = "rotating";
  const std::string user = serviceAccountWithRules(account, operatorRules());
  const std::string tokenFile = c.plane().dir() + "/rotating.token";
  const auto holder = [&](const std::string& name) {
    c.apply("apiVersion: v1\nkind: Secret\nmetadata: {name: " + name +
            ", namespace: " + kOperatorNs + "}\n");
    const auto secret = c.mustGet("/api/v1/namespaces/" + kOperatorNs + "/secrets/" + name);
    return json{{"apiVersion", "v1"},
                {"kind", "Secret"},
                {"name", name},
                {"uid", secret["metadata"]["uid"]}};
  };
  // Tokens bound to a Secret die with it: deleting the holder revokes them.
  const std::string first = tokenFor(account, holder("holder-1"));
  std::ofstream(tokenFile) << first;
  const auto kubeconfig = writeKubeconfig(
      "rotating",
      "    server: " + server() + "\n    certificate-authority-data: " + caData() + "\n",
      "    tokenFile: " + tokenFile + "\n");
  const std::string ns = "rotation";
  createNamespace(c, ns);
  createDeployment(c, ns, "before");
  createDeployment(c, ns, "after");
  OperatorProcess op(kubeconfig);
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  REQUIRE(c.create(workloadsPath(ns), workloadObject(ns, "before", inferenceSpec("before", "7B")))
              .ok());
  REQUIRE(c.waitFor([&] {
    auto object = c.get(workloadsPath(ns, "before"));
    return object && conditionIs(*object, "Applied", "True");
  }));

  // The kubelet's rotation: a new token in the file (renamed into place),
  // and the old one revoked.
  const std::string second = tokenFor(account, holder("holder-2"));
  std::ofstream(tokenFile + ".new") << second;
  std::filesystem::rename(tokenFile + ".new", tokenFile);
  REQUIRE(c.remove("/api/v1/namespaces/" + kOperatorNs + "/secrets/holder-1").ok());
  // Until the server refuses the old token (its authenticator caches a
  // little), the operator's next request could still pass with it.
  const auto answerTo = [&](const std::string& token) {
    const auto result =
        runCommand("curl -s -o /dev/null -w '%{http_code}' --cacert " + c.plane().dir() +
                   "/pki/ca.crt -H 'Authorization: Bearer " + token + "' " + server() +
                   "/apis/gpuplacement.io/v1alpha1/gpuworkloads");
    return result.out;
  };
  REQUIRE(c.waitFor([&] { return answerTo(first) == "401"; }, std::chrono::seconds(30)));
  CHECK(answerTo(second) == "200");
  REQUIRE(
      c.create(workloadsPath(ns), workloadObject(ns, "after", inferenceSpec("after", "7B"))).ok());
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      auto object = c.get(workloadsPath(ns, "after"));
                      return object && conditionIs(*object, "Applied", "True");
                    },
                    std::chrono::seconds(60)),
                op.log());
  CHECK(op.metric("rest_client_requests_total", "code=\"401\"") >= 1);
  const std::string log = op.log();
  CHECK(op.stop() == 0);

  // Debug logs of this operator and of one using the admin's client
  // certificate: neither token, nor any line of the private key.
  OperatorProcess withKey(c.plane().kubeconfigPath());  // logs at debug level
  REQUIRE(withKey.waitReady());
  CHECK(withKey.stop() == 0);
  const std::string logs = log + withKey.log();
  // Run with --log-level debug (OperatorProcess): every line it writes.
  CHECK(log.find(" info starting ") != std::string::npos);
  CHECK(logs.find(first) == std::string::npos);
  CHECK(logs.find(second) == std::string::npos);
  CHECK(logs.find(first.substr(0, 40)) == std::string::npos);
  CHECK(logs.find("PRIVATE KEY") == std::string::npos);
  std::istringstream key(readFile(c.plane().dir() + "/pki/admin.key"));
  for (std::string line; std::getline(key, line);) {
    if (line.find("-----") == std::string::npos && line.size() > 16) {
      CHECK(logs.find(line) == std::string::npos);
    }
  }
  (void)user;
}

TEST_CASE("RBAC: the chart's roles grant exactly the calls the operator makes") {
  auto& c = Cluster::withCrds();
  const std::string ns = "rbac-use";
  createNamespace(c, ns);
  createDeployment(c, ns, "model");
  // A whole life: leader election, placement, a policy with status, a
  // re-placement by a spec change, Events, deletion with the finalizer.
  const auto kubeconfig = c.operatorKubeconfig();
  OperatorProcess op(
      kubeconfig, {"--leader-elect", "--leader-election-namespace", kOperatorNs, "--lease-duration",
                   "4s", "--renew-deadline", "3s", "--retry-period", "1s", "--metrics-secure"});
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  // A scrape: both reviews (the operator's own account may not read /metrics).
  const auto scraped =
      runCommand("curl -sk -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer " +
                 tokenFor("gpu-placement-operator") +
                 "' https://127.0.0.1:" + std::to_string(op.metricsPort()) + "/metrics");
  CHECK(scraped.out == "403");
  c.apply(
      "apiVersion: gpuplacement.io/v1alpha1\nkind: PlacementPolicy\nmetadata: {name: "
      "rbac-use}\nspec: {hoursPerMonth: 720}\n");
  json spec = inferenceSpec("model", "7B");
  spec["policyRef"] = {{"name", "rbac-use"}};
  REQUIRE(c.create(workloadsPath(ns), workloadObject(ns, "model", spec)).ok());
  const auto applied = [&] {
    auto object = c.get(workloadsPath(ns, "model"));
    return object && conditionIs(*object, "Applied", "True") &&
           base::integerMember((*object)["status"], "observedGeneration") ==
               base::integerMember((*object)["metadata"], "generation");
  };
  REQUIRE_MESSAGE(c.waitFor(applied), op.log());
  REQUIRE(c.patch(workloadsPath(ns, "model"), json{{"spec", {{"model", {{"parameters", "13B"}}}}}})
              .ok());
  REQUIRE(c.waitFor(applied));
  REQUIRE(c.remove(workloadsPath(ns, "model")).ok());
  REQUIRE(c.waitFor([&] { return !c.get(workloadsPath(ns, "model")).ok(); }));
  CHECK(op.stop() == 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the audit log is written in batches

  const auto rendered =
      shell("helm template gpo " + repoRoot() + "/charts/gpu-placement-operator -n " + kOperatorNs);
  auto documents = base::parseYamlDocuments(rendered, "chart");
  REQUIRE(documents.ok());
  std::vector<json> roles;
  const std::string reader = "gpo-gpu-placement-operator-metrics-reader";
  for (const auto& document : *documents) {
    const auto kind = base::stringMember(document, "kind");
    const auto name = base::stringMember(base::memberOf(document, "metadata"), "name");
    if (kind == "ClusterRole" && name == reader) {
      // For Prometheus, not the operator: get /metrics and nothing else.
      CHECK(document["rules"] ==
            json::array({{{"nonResourceURLs", {"/metrics"}}, {"verbs", {"get"}}}}));
    } else if (kind == "ClusterRole" || kind == "Role") {
      roles.push_back(document);
    }
  }
  REQUIRE(roles.size() == 2);
  std::set<std::string> grants;
  for (const auto& grant : granted(roles)) {
    grants.insert(describe(grant));
  }
  // The chart grants exactly the list: nothing missing, nothing more.
  CHECK(grants == kCalls);
  // The list is complete: whatever the operator did, it is on it (this
  // life, and any other test of this binary run before it).
  const auto calls = used(c.operatorUser());
  REQUIRE(calls.size() >= 10);
  std::string seen;
  for (const auto& call : calls) {
    seen += describe(call) + ", ";
    CAPTURE(describe(call));
    CHECK(kCalls.count(describe(call)) == 1);
  }
  MESSAGE("the operator called, by the audit log: " << seen);
}

TEST_CASE(
    "a Role without patch on Deployments: said on the GpuWorkload and in /readyz, "
    "retried with backoff") {
  auto& c = Cluster::withCrds();
  json rules = operatorRules();
  for (auto& rule : rules) {
    if (rule["apiGroups"] == json::array({"apps"})) {
      rule["verbs"] = json::array({"get", "list", "watch"});
    }
  }
  const std::string account = "no-patch";
  const std::string user = serviceAccountWithRules(account, rules);
  const auto kubeconfig = writeKubeconfig(
      account, "    server: " + server() + "\n    certificate-authority-data: " + caData() + "\n",
      "    token: " + tokenFor(account) + "\n");
  const std::string ns = "rbac-missing";
  createNamespace(c, ns);
  createDeployment(c, ns, "model");
  const auto before = c.mustGet(deploymentsPath(ns, "model"));
  // Its own namespace only: the other tests' workloads are not its to place.
  OperatorProcess op(kubeconfig, {"--namespaces", ns});
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(
      c.create(workloadsPath(ns), workloadObject(ns, "model", inferenceSpec("model", "7B"))).ok());
  const bool said = c.waitFor([&] {
    auto object = c.get(workloadsPath(ns, "model"));
    return object && conditionIs(*object, "Applied", "False", "Forbidden");
  });
  REQUIRE_MESSAGE(said, op.log());
  const auto refused = c.mustGet(workloadsPath(ns, "model"));
  const auto* condition = conditionOf(refused, "Applied");
  const std::string message = base::stringMember(*condition, "message");
  CHECK_MESSAGE(message.find("cannot patch resource \"deployments\" in API group \"apps\"") !=
                    std::string::npos,
                message);
  const auto readyz = OperatorProcess::httpGet(op.healthPort(), "/readyz");
  CHECK(readyz.first == 503);
  CHECK(readyz.second == "forbidden: patch deployments.apps in namespace rbac-missing\n");
  CHECK(OperatorProcess::httpGet(op.healthPort(), "/healthz").first == 200);

  // Retries, further and further apart.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  std::size_t tried = 0;
  std::ifstream in(c.plane().dir() + "/logs/audit.log");
  for (std::string line; std::getline(in, line);) {
    const auto event = json::parse(line, nullptr, false);
    const auto& object = base::memberOf(event, "objectRef");
    if (base::stringMember(base::memberOf(event, "user"), "username") == user &&
        base::stringMember(event, "verb") == "patch" &&
        base::stringMember(object, "resource") == "deployments" &&
        base::stringMember(event, "stage") == "ResponseComplete") {
      CHECK(base::integerMember(base::memberOf(event, "responseStatus"), "code") == 403);
      ++tried;
    }
  }
  CHECK(tried >= 4);
  CHECK(tried <= 14);  // backoff from 5 ms doubling: about 11 in 6 s, never a hot loop
  MESSAGE("403 answers to the patch in the first "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
          << " s: " << tried);
  CHECK(c.mustGet(deploymentsPath(ns, "model"))["metadata"]["generation"] ==
        before["metadata"]["generation"]);

  // Granted at last: placed at the next retry, ready again.
  auto role = c.mustGet("/apis/rbac.authorization.k8s.io/v1/clusterroles/" + account);
  role["rules"] = operatorRules();
  auto replaced = c.patch("/apis/rbac.authorization.k8s.io/v1/clusterroles/" + account,
                          json{{"rules", role["rules"]}});
  REQUIRE(replaced.ok());
  CHECK_MESSAGE(c.waitFor(
                    [&] {
                      auto object = c.get(workloadsPath(ns, "model"));
                      return object && conditionIs(*object, "Applied", "True");
                    },
                    std::chrono::seconds(90)),
                op.log());
  CHECK(
      c.waitFor([&] { return OperatorProcess::httpGet(op.healthPort(), "/readyz").first == 200; }));
  CHECK(op.stop() == 0);
}

}  // namespace gpuplacement
