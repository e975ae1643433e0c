// The Helm chart and the way the operator runs in a cluster, against the
// real control plane: lint, template, server-side dry-run, install, upgrade
// and uninstall; the chart's RBAC proven by running the operator with its
// ServiceAccount's token; leader election across two processes; metrics and
// health endpoints.
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <signal.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "kube/connect.h"
#include "kube/kubeconfig.h"
#include "runtime/run_sync.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/paths.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::CommandResult;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;
  ControlPlane::configure(options);
  return true;
}();

const std::string kChart = testing::repoRoot() + "/charts/gpu-placement-operator";
const std::string kNamespace = "gpu-placement-system";
const std::string kRelease = "gpo";
const std::string kFullname = "gpo-gpu-placement-operator";

Cluster& cluster() {
  static Cluster instance(ControlPlane::shared());
  static const bool ready = [] {
    instance.installCrds();
    // prometheus-operator's ServiceMonitor, as a schemaless stand-in, so a
    // dry-run of a chart that renders one can be checked.
    instance.apply(R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, plural: servicemonitors, singular: servicemonitor, listKind: ServiceMonitorList}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
)");
    return true;
  }();
  (void)ready;
  return instance;
}

// A shell command with the pinned kubectl and helm on PATH and KUBECONFIG
// pointing at the test's control plane.
CommandResult tool(const std::string& command) {
  return ControlPlane::shared().withTools(command);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<json> documents(const std::string& yaml) {
  auto parsed = base::parseYamlDocuments(yaml, "rendered");
  REQUIRE_MESSAGE(parsed.ok(), gpuplacement::testing::whyNot(parsed));
  return *parsed;
}

const json* findKind(const std::vector<json>& objects, const std::string& kind,
                     const std::string& name = "") {
  for (const auto& object : objects) {
    if (base::stringMember(object, "kind") == kind &&
        (name.empty() || base::stringMember(base::memberOf(object, "metadata"), "name") == name)) {
      return &object;
    }
  }
  return nullptr;
}

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

}  // namespace

TEST_CASE("the chart's CRDs and RBAC are the project's, not copies that drift") {
  for (const char* file :
       {"gpuplacement.io_gpuworkloads.yaml", "gpuplacement.io_placementpolicies.yaml"}) {
    CAPTURE(std::string(file));
    CHECK(readFile(kChart + "/crds/" + file) == readFile(testing::repoRoot() + "/crds/" + file));
  }
  const auto rendered = tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace +
                             " --kube-version 1.34.10");
  REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
  const auto objects = documents(rendered.out);
  const auto* role = findKind(objects, "ClusterRole", kFullname);
  REQUIRE(role);
  const auto reference = documents(readFile(testing::repoRoot() + "/config/rbac/role.yaml"));
  CHECK((*role)["rules"] == reference.at(0)["rules"]);
  const auto* reader = findKind(objects, "ClusterRole", kFullname + "-metrics-reader");
  REQUIRE(reader);
  CHECK((*reader)["rules"] ==
        documents(readFile(testing::repoRoot() + "/config/rbac/metrics_reader_role.yaml"))
            .at(0)["rules"]);
  // No Secrets, anywhere.
  for (const auto& rule : (*role)["rules"]) {
    for (const auto& resource : rule["resources"]) {
      CHECK(resource.get<std::string>().find("secret") == std::string::npos);
    }
  }
}

TEST_CASE("helm lint and template, with the defaults and with every value set") {
  CHECK(tool("helm lint " + kChart).exitCode == 0);
  CHECK(
      tool("helm lint " + kChart + " -f " + testing::repoRoot() + "/tests/fixtures/values-all.yaml")
          .exitCode == 0);

  const auto defaults = tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace +
                             " --kube-version 1.34.10");
  REQUIRE_MESSAGE(defaults.exitCode == 0, defaults.err);
  const auto objects = documents(defaults.out);
  std::set<std::string> kinds;
  for (const auto& object : objects) {
    kinds.insert(base::stringMember(object, "kind"));
  }
  // helm's own capabilities know no MutatingAdmissionPolicy v1 (a cluster
  // of 1.36 does: tests/integration/targets_test.cc); the validating policy
  // for labelled Jobs is always there.
  CHECK(kinds == std::set<std::string>{"ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                                       "Role", "RoleBinding", "Deployment", "Service",
                                       "PodDisruptionBudget", "PlacementPolicy", "NetworkPolicy",
                                       "ValidatingAdmissionPolicy",
                                       "ValidatingAdmissionPolicyBinding"});
  const auto& deployment = *findKind(objects, "Deployment");
  const auto& pod = deployment["spec"]["template"]["spec"];
  const auto& container = pod["containers"][0];
  CHECK(container["image"] == "ghcr.io/gpu-placement/gpu-placement-operator:0.2.0");
  CHECK(pod["securityContext"]["runAsNonRoot"] == true);
  CHECK(pod["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault");
  CHECK(container["securityContext"]["readOnlyRootFilesystem"] == true);
  CHECK(container["securityContext"]["allowPrivilegeEscalation"] == false);
  CHECK(container["securityContext"]["capabilities"]["drop"] == json::array({"ALL"}));
  CHECK(container["livenessProbe"]["httpGet"]["path"] == "/healthz");
  CHECK(container["readinessProbe"]["httpGet"]["path"] == "/readyz");
  CHECK(container["resources"]["requests"]["ephemeral-storage"] == "64Mi");
  CHECK(container["resources"]["limits"]["ephemeral-storage"] == "256Mi");
  // Two replicas: spread over nodes and zones, scheduled anyway.
  REQUIRE(pod["topologySpreadConstraints"].size() == 2);
  CHECK(pod["topologySpreadConstraints"][0]["topologyKey"] == "kubernetes.io/hostname");
  CHECK(pod["topologySpreadConstraints"][1]["topologyKey"] == "topology.kubernetes.io/zone");
  for (const auto& constraint : pod["topologySpreadConstraints"]) {
    CHECK(constraint["whenUnsatisfiable"] == "ScheduleAnyway");
    CHECK(constraint["labelSelector"]["matchLabels"] ==
          deployment["spec"]["selector"]["matchLabels"]);
  }
  // /metrics over HTTPS behind the reviews (the binary's default).
  CHECK(container["args"].dump().find("--metrics-secure") == std::string::npos);
  CHECK((*findKind(objects, "Service"))["spec"]["ports"][0]["name"] == "https");
  const auto& operatorRules = (*findKind(objects, "ClusterRole", kFullname))["rules"].dump();
  CHECK(operatorRules.find("tokenreviews") != std::string::npos);
  CHECK(operatorRules.find("subjectaccessreviews") != std::string::npos);
  // The NetworkPolicy: in to the two ports, out to the API server and DNS.
  const auto& policy = (*findKind(objects, "NetworkPolicy"))["spec"];
  CHECK(policy["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]);
  CHECK(policy["policyTypes"] == json::array({"Ingress", "Egress"}));
  REQUIRE(policy["ingress"].size() == 2);
  CHECK(policy["ingress"][0]["ports"][0]["port"] == 8080);
  CHECK(policy["ingress"][1]["ports"][0]["port"] == 8081);
  REQUIRE(policy["egress"].size() == 2);
  CHECK(policy["egress"][0]["ports"] == json::array({{{"protocol", "TCP"}, {"port", 443}}}));
  CHECK(policy["egress"][0]["to"].size() == 3);
  CHECK(policy["egress"][1]["to"][0]["podSelector"]["matchLabels"]["k8s-app"] == "kube-dns");
  CHECK(policy["egress"][1]["ports"].size() == 2);

  const auto all =
      tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace +
           " --kube-version 1.34.10 -f " + testing::repoRoot() + "/tests/fixtures/values-all.yaml");
  REQUIRE_MESSAGE(all.exitCode == 0, all.err);
  const auto everything = documents(all.out);
  REQUIRE(findKind(everything, "ServiceMonitor"));
  const auto* config = findKind(everything, "ConfigMap");
  REQUIRE(config);
  {
    // What the pod mounts is what the operator reads: the catalog and
    // rules load, priced by the price list, for the list's region.
    testing::TempDir mounted;
    const auto& data = (*config)["data"];
    const auto catalog = mounted.write("catalog.yaml", data["catalog.yaml"].get<std::string>());
    const auto rules = mounted.write("rules.yaml", data["rules.yaml"].get<std::string>());
    const auto prices =
        mounted.write("price-list.yaml", data["price-list.yaml"].get<std::string>());
    const auto read =
        testing::runCommand(testing::operatorBinary() + " catalog -o json --catalog " + catalog +
                            " --rules " + rules + " --price-list " + prices);
    REQUIRE_MESSAGE(read.exitCode == 0, read.err);
    const auto listed = json::parse(read.out);
    CHECK(listed["prices"]["region"] == "eu-central-1");
    CHECK(listed["instances"][0]["onDemand"] == 0.658);
  }
  const auto* refuse = findKind(everything, "ValidatingAdmissionPolicy");
  REQUIRE(refuse);
  CHECK((*refuse)["spec"]["matchConstraints"]["namespaceSelector"]["matchLabels"]["team"] == "ml");
  const auto& full = *findKind(everything, "Deployment");
  const auto& fullPod = full["spec"]["template"]["spec"];
  CHECK(full["spec"]["replicas"] == 3);
  CHECK(fullPod["serviceAccountName"] == "gpu-placer");
  CHECK(fullPod["priorityClassName"] == "system-cluster-critical");
  CHECK(fullPod["nodeSelector"]["node-role"] == "platform");
  CHECK(fullPod["imagePullSecrets"][0]["name"] == "registry-credentials");
  CHECK(fullPod["containers"][0]["image"] ==
        "registry.example.com/platform/gpu-placement-operator:0.1.0-test@sha256:"
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  const std::string args = fullPod["containers"][0]["args"].dump();
  for (const char* expected :
       {"--namespaces=ml-serving,research", "--workers=8", "--qps=80", "--lease-duration=20s",
        "--catalog=/etc/gpu-placement/custom/catalog.yaml",
        "--rules=/etc/gpu-placement/custom/rules.yaml",
        "--price-list=/etc/gpu-placement/custom/price-list.yaml", "--region=eu-central-1",
        "--metrics-addr=:9090", "--per-workload-metrics=false"}) {
    CAPTURE(std::string(expected));
    CHECK(args.find(expected) != std::string::npos);
  }
  CHECK((*findKind(everything, "PlacementPolicy"))["spec"]["costModel"] == "WholeInstance");
  // The certificate from a Secret, re-read by the operator and verified by
  // Prometheus against its ca.crt.
  CHECK(args.find("--metrics-cert-dir=/etc/gpu-placement/metrics-cert") != std::string::npos);
  CHECK(fullPod["volumes"].dump().find("\"secretName\":\"gpo-metrics-cert\"") != std::string::npos);
  const auto& endpoint = (*findKind(everything, "ServiceMonitor"))["spec"]["endpoints"][0];
  CHECK(endpoint["scheme"] == "https");
  CHECK(endpoint["port"] == "https");
  CHECK(endpoint["bearerTokenFile"] == "/var/run/secrets/kubernetes.io/serviceaccount/token");
  CHECK(endpoint["tlsConfig"]["ca"]["secret"] ==
        json{{"name", "gpo-metrics-cert"}, {"key", "ca.crt"}});
  CHECK(endpoint["tlsConfig"]["serverName"] ==
        "gpo-gpu-placement-operator-metrics.gpu-placement-system.svc");
  const auto* readers = findKind(everything, "ClusterRoleBinding", kFullname + "-metrics-reader");
  REQUIRE(readers);
  CHECK((*readers)["subjects"][0]["name"] == "prometheus-k8s");
  CHECK(fullPod["topologySpreadConstraints"].size() == 1);
  CHECK((*findKind(everything, "NetworkPolicy"))["spec"]["egress"][0]["ports"][0]["port"] == 6443);

  // Plain HTTP as a value: the flag, the port's name, no reviews to grant,
  // no reader role, a ServiceMonitor without TLS.
  const auto plain = tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace +
                          " --kube-version 1.34.10 --set metrics.secure=false"
                          " --set metrics.serviceMonitor.enabled=true");
  REQUIRE_MESSAGE(plain.exitCode == 0, plain.err);
  const auto plainObjects = documents(plain.out);
  CHECK((*findKind(plainObjects, "Deployment"))["spec"]["template"]["spec"]["containers"][0]["args"]
            .dump()
            .find("--metrics-secure=false") != std::string::npos);
  CHECK((*findKind(plainObjects, "Service"))["spec"]["ports"][0]["name"] == "http");
  CHECK((*findKind(plainObjects, "ClusterRole", kFullname))["rules"].dump().find("review") ==
        std::string::npos);
  CHECK_FALSE(findKind(plainObjects, "ClusterRole", kFullname + "-metrics-reader"));
  const auto& plainEndpoint = (*findKind(plainObjects, "ServiceMonitor"))["spec"]["endpoints"][0];
  CHECK(plainEndpoint["port"] == "http");
  CHECK_FALSE(plainEndpoint.contains("scheme"));
  CHECK_FALSE(plainEndpoint.contains("tlsConfig"));

  // One replica: nothing to spread. The NetworkPolicy can be turned off.
  const auto single = tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace +
                           " --kube-version 1.34.10 --set replicaCount=1"
                           " --set networkPolicy.enabled=false");
  REQUIRE_MESSAGE(single.exitCode == 0, single.err);
  const auto singleObjects = documents(single.out);
  CHECK_FALSE((*findKind(singleObjects, "Deployment"))["spec"]["template"]["spec"].contains(
      "topologySpreadConstraints"));
  CHECK_FALSE(findKind(singleObjects, "NetworkPolicy"));
}

TEST_CASE("values.schema.json rejects wrong types and unknown keys") {
  const std::string base = "helm template " + kRelease + " " + kChart + " --kube-version 1.34.10 ";
  const auto wrongType = tool(base + "--set-string replicaCount=two");
  CHECK(wrongType.exitCode != 0);
  CHECK(wrongType.err.find("/replicaCount': got string, want integer") != std::string::npos);
  const auto unknown = tool(base + "--set replicas=3");
  CHECK(unknown.exitCode != 0);
  CHECK(unknown.err.find("additional properties 'replicas' not allowed") != std::string::npos);
  const auto badEnum = tool(base + "--set logging.format=xml");
  CHECK(badEnum.exitCode != 0);
  CHECK(badEnum.err.find("/logging/format': value must be one of") != std::string::npos);
  const auto badCidr = tool(base + "--set-json 'networkPolicy.apiServer.cidrs=[\"10.0.0.1\"]'");
  CHECK(badCidr.exitCode != 0);
  CHECK(badCidr.err.find("/networkPolicy/apiServer/cidrs/0': '10.0.0.1' does not match pattern") !=
        std::string::npos);
  const auto badDigest = tool(base + "--set image.digest=latest");
  CHECK(badDigest.exitCode != 0);
  CHECK(badDigest.err.find("/image/digest': 'latest' does not match pattern") != std::string::npos);
}

TEST_CASE("the rendered chart passes the API server's dry run") {
  cluster();
  for (const std::string& values :
       {std::string(), " -f " + testing::repoRoot() + "/tests/fixtures/values-all.yaml"}) {
    CAPTURE(values);
    const auto result =
        tool("kubectl create namespace " + kNamespace +
             " --dry-run=client -o yaml | kubectl apply -f - >/dev/null && helm "
             "template " +
             kRelease + " " + kChart + " -n " + kNamespace + " --kube-version 1.34.10" + values +
             " | kubectl apply --dry-run=server -n " + kNamespace + " -f -");
    CHECK_MESSAGE(result.exitCode == 0, result.err);
    CHECK(result.out.find("deployment.apps/gpo-gpu-placement-operator created (server dry run)") !=
          std::string::npos);
  }
}

TEST_CASE(
    "helm install, the chart's RBAC doing the whole job, leader election, upgrade, uninstall") {
  auto& c = cluster();
  const auto installed = tool("helm install " + kRelease + " " + kChart + " -n " + kNamespace +
                              " --create-namespace --wait=false");
  REQUIRE_MESSAGE(installed.exitCode == 0, installed.err);
  CHECK(installed.out.find("kubectl get gpuw -A") != std::string::npos);  // NOTES.txt
  CHECK(c.get(Cluster::pathOf("apps/v1", "Deployment", kNamespace, kFullname)).ok());
  CHECK(c.get(Cluster::pathOf("gpuplacement.io/v1alpha1", "PlacementPolicy", "", "default")).ok());

  // No kubelet runs here, so the chart's pods never start: run the binary
  // locally with the chart's ServiceAccount token instead.
  const auto kubeconfig = cluster().serviceAccountKubeconfig(kNamespace, kFullname);
  const std::string user = "system:serviceaccount:" + kNamespace + ":" + kFullname;
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: rbac-proof}\n");
  c.apply(R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: model, namespace: rbac-proof}
spec:
  replicas: 1
  selector: {matchLabels: {app: model}}
  template:
    metadata: {labels: {app: model}}
    spec:
      containers: [{name: server, image: busybox:1.36}]
)");
  c.apply(R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: model, namespace: rbac-proof}
spec:
  targetRef: {name: model}
  workload: {kind: Inference}
  model: {parameters: 7B}
)");
  const std::string workloadPath =
      Cluster::pathOf("gpuplacement.io/v1alpha1", "GpuWorkload", "rbac-proof", "model");
  const auto applied = [&] {
    auto object = c.get(workloadPath);
    if (!object) {
      return false;
    }
    for (const auto& condition : base::memberOf(base::memberOf(*object, "status"), "conditions")) {
      if (base::stringMember(condition, "type") == "Applied") {
        return base::stringMember(condition, "status") == "True";
      }
    }
    return false;
  };

  auto first = std::make_unique<OperatorProcess>(kubeconfig, operatorArgs());
  REQUIRE_MESSAGE(first->waitReady(), first->log());
  auto second = std::make_unique<OperatorProcess>(kubeconfig, operatorArgs());
  REQUIRE_MESSAGE(second->waitReady(), second->log());  // a standby is ready too
  REQUIRE_MESSAGE(c.waitFor(applied), (first->log() + second->log()));

  // Everything the operator did with the chart's token, it was allowed to.
  for (const auto& entry : testing::readAudit(c.plane(), user)) {
    if (entry.stage == "ResponseComplete") {
      CHECK_MESSAGE(entry.code != 403, entry.verb << " " << entry.resource << " was forbidden");
    }
  }
  // And it cannot read a Secret.
  {
    const auto config = kube::loadKubeconfigFiles({kubeconfig}, "");
    REQUIRE(config.ok());
    asio::io_context context;
    runtime::RealClock clock;
    auto client = kube::connect(context.get_executor(), *config, {}, clock);
    REQUIRE(client.ok());
    auto secrets =
        runtime::runSync(context, (*client)->list("/api/v1/namespaces/" + kNamespace + "/secrets"));
    REQUIRE_FALSE(secrets.ok());
    CHECK(secrets.error().forbidden());
  }

  // Exactly one of them leads: the Lease names it, and it alone reports 1.
  const std::string leasePath =
      "/apis/coordination.k8s.io/v1/namespaces/" + kNamespace + "/leases/" + kFullname;
  const auto lease = c.mustGet(leasePath);
  const std::string leaderIdentity = base::stringMember(lease["spec"], "holderIdentity");
  const bool firstLeads = first->metric("leader_election_master_status") == 1;
  const bool secondLeads = second->metric("leader_election_master_status") == 1;
  CHECK(firstLeads != secondLeads);
  const bool named = first->log().find(leaderIdentity) != std::string::npos ||
                     second->log().find(leaderIdentity) != std::string::npos;
  CHECK(named);

  // The metrics a dashboard needs, and both health endpoints.
  auto& leader = firstLeads ? first : second;
  auto& standby = firstLeads ? second : first;
  const auto metrics = OperatorProcess::httpGet(leader->metricsPort(), "/metrics");
  CHECK(metrics.first == 200);
  for (const char* family : {"controller_runtime_reconcile_total",
                             "controller_runtime_reconcile_time_seconds",
                             "workqueue_depth",
                             "workqueue_adds_total",
                             "workqueue_queue_duration_seconds",
                             "workqueue_work_duration_seconds",
                             "workqueue_retries_total",
                             "rest_client_requests_total",
                             "rest_client_request_duration_seconds",
                             "gpu_placement_placements_total",
                             "gpu_placement_placed_workloads",
                             "gpu_placement_estimated_hourly_cost_dollars",
                             "gpu_placement_replacements_total",
                             "gpu_placement_replacement_monthly_savings_dollars_total",
                             "gpu_placement_policy_generation",
                             "gpu_placement_informer_relists_total",
                             "leader_election_master_status",
                             "process_resident_memory_bytes",
                             "process_cpu_seconds_total",
                             "gpu_placement_events_total",
                             "gpu_placement_events_waiting",
                             "gpu_placement_heap_bytes"}) {
    CAPTURE(std::string(family));
    CHECK(metrics.second.find(std::string("# TYPE ") + family + " ") != std::string::npos);
  }
  // Samples, not just declarations.
  CHECK(leader->metric("controller_runtime_reconcile_total", "result=\"success\"") >= 1);
  CHECK(leader->metric("rest_client_requests_total", "verb=\"patch\"") >= 1);
  CHECK(leader->metric("process_resident_memory_bytes") > 1e6);
#if !defined(GPUPLACEMENT_SANITIZED)
  // The heap holds the caches, and cannot hold more than is resident. (Not
  // under ASan, which this test is built with when the operator is: its
  // allocator stands in for glibc's and mallinfo2 reads zero.)
  const double heapInUse = leader->metric("gpu_placement_heap_bytes", "state=\"in_use\"");
  CHECK(heapInUse > 1e5);
  CHECK(heapInUse < leader->metric("process_resident_memory_bytes"));
#endif
  CHECK(leader->metric("gpu_placement_placed_workloads", "instance_type=\"") >= 1);
  CHECK(OperatorProcess::httpGet(leader->healthPort(), "/healthz").first == 200);
  CHECK(OperatorProcess::httpGet(standby->healthPort(), "/readyz").first == 200);
  CHECK(OperatorProcess::httpGet(standby->healthPort(), "/healthz").first == 200);

  // kill -9 the leader: the standby takes over within the lease duration
  // plus a retry period (15 s + 2 s), and then it places new work.
  const auto killedAt = std::chrono::steady_clock::now();
  leader->stop(SIGKILL);
  const bool tookOver = c.waitFor(
      [&] {
        auto current = c.get(leasePath);
        return current &&
               base::stringMember((*current)["spec"], "holderIdentity") != leaderIdentity;
      },
      std::chrono::seconds(30), std::chrono::milliseconds(200));
  const auto takeover = std::chrono::steady_clock::now() - killedAt;
  REQUIRE(tookOver);
  MESSAGE("takeover after kill -9: "
          << std::chrono::duration_cast<std::chrono::milliseconds>(takeover).count() << " ms");
  CHECK(takeover <= std::chrono::seconds(17) + std::chrono::milliseconds(1500));
  CHECK(standby->metric("leader_election_master_status") == 1);
  // A bigger model: a new placement, so the new leader patches the Deployment.
  REQUIRE(c.patch(workloadPath, json{{"spec", {{"model", {{"parameters", "70B"}}}}}}).ok());
  CHECK(c.waitFor([&] {
    auto object = c.get(workloadPath);
    return object && base::integerMember((*object)["status"], "observedGeneration") == 2 &&
           applied();
  }));

  // No Deployment was patched by both: every patch came from the leader of
  // its time, told apart by the User-Agent carrying each identity.
  std::ifstream audit(c.plane().dir() + "/logs/audit.log");
  std::string line;
  std::set<std::string> patchers;
  std::string lastPatcher;
  int switches = 0;
  while (std::getline(audit, line)) {
    const auto event = json::parse(line, nullptr, false);
    if (base::stringMember(event, "verb") != "patch" ||
        base::stringMember(base::memberOf(event, "objectRef"), "resource") != "deployments" ||
        base::stringMember(event, "stage") != "ResponseComplete") {
      continue;
    }
    const std::string agent = base::stringMember(event, "userAgent");
    patchers.insert(agent);
    if (!lastPatcher.empty() && agent != lastPatcher) {
      ++switches;
    }
    lastPatcher = agent;
  }
  CHECK(patchers.size() == 2);
  CHECK(switches == 1);  // the old leader's patches, then only the new one's

  // helm upgrade changes the operator; helm uninstall removes it and leaves
  // the CRDs (and so every GpuWorkload and the Deployments they placed).
  CHECK(standby->stop() == 0);
  const auto upgraded = tool("helm upgrade " + kRelease + " " + kChart + " -n " + kNamespace +
                             " --set workers=8 --set replicaCount=3 --wait=false");
  REQUIRE_MESSAGE(upgraded.exitCode == 0, upgraded.err);
  const auto deployment =
      c.mustGet(Cluster::pathOf("apps/v1", "Deployment", kNamespace, kFullname));
  CHECK(deployment["spec"]["replicas"] == 3);
  CHECK(deployment["spec"]["template"]["spec"]["containers"][0]["args"].dump().find(
            "--workers=8") != std::string::npos);
  const auto removed = tool("helm uninstall " + kRelease + " -n " + kNamespace);
  REQUIRE_MESSAGE(removed.exitCode == 0, removed.err);
  CHECK(c.waitFor([&] {
    return !c.get(Cluster::pathOf("apps/v1", "Deployment", kNamespace, kFullname)).ok();
  }));
  CHECK(
      c.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gpuworkloads.gpuplacement.io")
          .ok());
  CHECK(c.get(workloadPath).ok());
}

namespace {

// What kube-score (pinned: tests/controlplane/kube-score) says of a render:
// its WARNING and CRITICAL findings, and the checks the render marks as
// choices (kube-score/ignore) that it therefore skipped.
struct KubeScoreReport {
  std::vector<std::string> findings;  // "object: check (grade): summary"
  std::set<std::string> chosen;
};

KubeScoreReport kubeScore(const std::string& values) {
  const auto result = tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace +
                           " --kube-version 1.34.10" + values +
                           " | kube-score score --kubernetes-version v1.28 --output-format json -");
  // kube-score exits 1 when it finds anything CRITICAL; the JSON says what.
  const auto report = json::parse(result.out, nullptr, false);
  REQUIRE_MESSAGE(report.is_array(), (result.out + result.err));
  KubeScoreReport found;
  for (const auto& object : report) {
    for (const auto& check : object["checks"]) {
      const std::string id = check["check"]["id"];
      std::string summary;
      for (const auto& comment : base::memberOf(check, "comments")) {
        summary += base::stringMember(comment, "summary") + "; ";
      }
      if (check["skipped"] == true) {
        // Optional checks not asked for read "ignored" too: not a choice.
        if (check["check"]["optional"] != true &&
            summary.find("Skipped because " + id + " is ignored") != std::string::npos) {
          found.chosen.insert(id);
        }
        continue;
      }
      const int grade = check["grade"];
      if (grade <= 5) {  // kube-score's WARNING is 5, CRITICAL 1
        found.findings.push_back(base::stringMember(object, "object_name") + ": " + id + " (" +
                                 (grade == 1 ? "CRITICAL" : "WARNING") + "): " + summary);
      }
    }
  }
  return found;
}

}  // namespace

TEST_CASE("kube-score finds nothing in the chart that is not a documented choice") {
  const auto version = tool("kube-score version");
  REQUIRE_MESSAGE(version.out.find("1.20.0") != std::string::npos, (version.out + version.err));
  // Each finding the defaults leave, and why; values.yaml says the same next
  // to the value, and the chart marks it on the Deployment.
  const std::map<std::string, std::string> kChoices = {
      {"container-image-pull-policy",
       "IfNotPresent with image.digest: a digest cannot move, and a pod restarted on a node that "
       "has the image starts while the registry is unreachable"},
      {"deployment-has-host-podantiaffinity",
       "topologySpreadConstraints over hostname and zone spread the replicas (ScheduleAnyway); "
       "kube-score 1.20.0 counts only a podAntiAffinity"},
  };
  const auto defaults = kubeScore("");
  std::string said;
  for (const auto& finding : defaults.findings) {
    said += finding + "\n";
  }
  CHECK_MESSAGE(defaults.findings.empty(), said);
  std::set<std::string> documented;
  for (const auto& [check, why] : kChoices) {
    documented.insert(check);
    MESSAGE("kube-score " << check << " is a choice: " << why);
  }
  CHECK(defaults.chosen == documented);

  // Every value set: Always, a podAntiAffinity of its own; nothing to skip.
  const auto all = kubeScore(" -f " + testing::repoRoot() + "/tests/fixtures/values-all.yaml");
  said.clear();
  for (const auto& finding : all.findings) {
    said += finding + "\n";
  }
  CHECK_MESSAGE(all.findings.empty(), said);
  CHECK(all.chosen.empty());

  // The control: without the NetworkPolicy, kube-score does object.
  const auto open = kubeScore(" --set networkPolicy.enabled=false");
  REQUIRE(open.findings.size() == 1);
  CHECK(open.findings[0].find("pod-networkpolicy (CRITICAL)") != std::string::npos);
}

TEST_CASE("the Dockerfile: bases pinned by digest, the release build, what it copies, its labels") {
  const auto result = testing::runCommand(testing::repoRoot() + "/scripts/check-dockerfile " +
                                          testing::repoRoot() + " " + testing::buildDir());
  CHECK_MESSAGE(result.exitCode == 0, (result.out + result.err));
}

}  // namespace gpuplacement

namespace gpuplacement {
namespace {

// The operator's pod as the chart renders it, for a Pod of its own.
json renderedPod(const std::string& values) {
  const auto rendered =
      tool("helm template " + kRelease + " " + kChart + " -n " + kNamespace + values);
  REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
  const auto objects = documents(rendered.out);
  const auto* deployment = findKind(objects, "Deployment");
  REQUIRE(deployment);
  return json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "operator-pod"}}},
              {"spec", (*deployment)["spec"]["template"]["spec"]}};
}

}  // namespace

TEST_CASE(
    "offline render for GitOps: helm template with no flags, then kubectl apply "
    "--server-side") {
  // What a GitOps user runs first, with no cluster and no flags at all: it
  // used to fail on the chart's kubeVersion against helm's default v1.20.0.
  const auto bare = tool("helm template " + kChart);
  REQUIRE_MESSAGE(bare.exitCode == 0, bare.err);
  CHECK(findKind(documents(bare.out), "Deployment"));

  // The documented path (docs/operating/install.md, "Rendering offline for
  // GitOps"), applied to the real control plane: CRDs first, then the
  // render, server-side.
  cluster();
  const std::string ns = "gitops";
  const std::string file = ControlPlane::shared().dir() + "/gitops.yaml";
  REQUIRE(tool("kubectl delete placementpolicy default --ignore-not-found").exitCode == 0);
  const auto rendered = tool("helm template gpo " + kChart + " -n " + ns + " > " + file);
  REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
  const auto crds = tool("kubectl apply --server-side -f " + kChart + "/crds/");
  REQUIRE_MESSAGE(crds.exitCode == 0, crds.err);
  REQUIRE(tool("kubectl create namespace " + ns).exitCode == 0);
  const auto applied = tool("kubectl apply --server-side -n " + ns + " -f " + file);
  REQUIRE_MESSAGE(applied.exitCode == 0, applied.err);
  CHECK(applied.out.find("deployment.apps/gpo-gpu-placement-operator serverside-applied") !=
        std::string::npos);
  CHECK(applied.out.find("placementpolicy.gpuplacement.io/default serverside-applied") !=
        std::string::npos);
  auto& c = cluster();
  const auto deployment =
      c.mustGet(Cluster::pathOf("apps/v1", "Deployment", ns, "gpo-gpu-placement-operator"));
  CHECK(deployment["spec"]["template"]["spec"]["serviceAccountName"] ==
        "gpo-gpu-placement-operator");
  // Applying the same render again changes nothing (what a GitOps loop does).
  const auto again = tool("kubectl apply --server-side -n " + ns + " -f " + file);
  REQUIRE_MESSAGE(again.exitCode == 0, again.err);
  CHECK(c.mustGet(Cluster::pathOf("apps/v1", "Deployment", ns,
                                  "gpo-gpu-placement-operator"))["metadata"]["generation"] ==
        deployment["metadata"]["generation"]);
  CHECK(tool("kubectl delete -n " + ns + " -f " + file + " && kubectl delete namespace " + ns +
             " --wait=false")
            .exitCode == 0);
}

TEST_CASE("the operator's pod passes the Pod Security restricted profile") {
  cluster();
  const std::string ns = "pss-restricted";
  REQUIRE(tool("kubectl create namespace " + ns + " && kubectl label namespace " + ns +
               " pod-security.kubernetes.io/enforce=restricted")
              .exitCode == 0);
  const std::string file = ControlPlane::shared().dir() + "/pod.json";
  for (const std::string& values :
       {std::string(), " -f " + testing::repoRoot() + "/tests/fixtures/values-all.yaml"}) {
    CAPTURE(values);
    std::ofstream(file) << renderedPod(values).dump();
    const auto result = tool("kubectl create --dry-run=server -n " + ns + " -f " + file);
    CHECK_MESSAGE(result.exitCode == 0, result.err);
    CHECK(result.out.find("pod/operator-pod created (server dry run)") != std::string::npos);
  }
  // The namespace does enforce: the same pod without its security context
  // is refused, naming what the profile requires.
  auto loose = renderedPod("");
  loose["spec"].erase("securityContext");
  loose["spec"]["containers"][0].erase("securityContext");
  std::ofstream(file) << loose.dump();
  const auto refused = tool("kubectl create --dry-run=server -n " + ns + " -f " + file);
  CHECK(refused.exitCode != 0);
  CHECK(refused.err.find("violates PodSecurity \"restricted:latest\"") != std::string::npos);
}

}  // namespace gpuplacement
