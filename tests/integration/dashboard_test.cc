// The Grafana dashboard the chart ships (charts/gpu-placement-operator/
// dashboards/gpu-placement.json): valid JSON, every panel and query on the
// datasource variable, the ConfigMap the chart renders carrying the file as
// it is, and every metric its queries select on /metrics of a real operator
// after a placement, a fallback and the re-placement it forces.
#include <map>
#include <set>

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "base/time_format.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/objects.h"
#include "support/prometheus_text.h"
#include "support/promql.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::json;
using testing::OperatorProcess;

const std::string kChart = testing::repoRoot() + "/charts/gpu-placement-operator";
const std::string kDashboardFile = kChart + "/dashboards/gpu-placement.json";
const json kDatasource = {{"type", "prometheus"}, {"uid", "${datasource}"}};

json dashboard() {
  const auto text = testing::readFile(kDashboardFile);
  REQUIRE_MESSAGE(!text.empty(), "cannot read " << kDashboardFile);
  auto parsed = json::parse(text, nullptr, false);
  REQUIRE_MESSAGE(!parsed.is_discarded(), kDashboardFile << " is not valid JSON");
  return parsed;
}

// Every panel, rows' collapsed panels included.
std::vector<json> panelsOf(const json& board) {
  std::vector<json> panels;
  for (const auto& panel : base::memberOf(board, "panels")) {
    panels.push_back(panel);
    for (const auto& inner : base::memberOf(panel, "panels")) {
      panels.push_back(inner);
    }
  }
  return panels;
}

struct Query {
  std::string where;  // panel title or variable name
  testing::PromqlSelection selection;
  std::string text;
};

// The PromQL of every panel target and every query variable.
std::vector<Query> queriesOf(const json& board) {
  std::vector<Query> queries;
  for (const auto& panel : panelsOf(board)) {
    for (const auto& target : base::memberOf(panel, "targets")) {
      const std::string expr = base::stringMember(target, "expr");
      queries.push_back({"panel \"" + base::stringMember(panel, "title") + "\"",
                         testing::promqlSelection(expr), expr});
    }
  }
  for (const auto& variable : base::memberOf(base::memberOf(board, "templating"), "list")) {
    if (base::stringMember(variable, "type") != "query") {
      continue;
    }
    const auto& query = base::memberOf(variable, "query");
    const std::string text =
        query.is_string() ? query.get<std::string>() : base::stringMember(query, "query");
    queries.push_back({"variable $" + base::stringMember(variable, "name"),
                       testing::labelValuesSelection(text), text});
  }
  return queries;
}

const json* variable(const json& board, const std::string& name) {
  for (const auto& item : base::memberOf(base::memberOf(board, "templating"), "list")) {
    if (base::stringMember(item, "name") == name) {
      return &item;
    }
  }
  return nullptr;
}

testing::CommandResult helm(const std::string& arguments) {
  return testing::runCommand("eval \"$(" + testing::repoRoot() +
                             "/scripts/controlplane env)\" && helm " + arguments);
}

}  // namespace

TEST_CASE("PromQL: the metric names and matcher labels a query selects") {
  struct Row {
    std::string expr;
    std::set<std::string> metrics;
  };
  const std::vector<Row> rows = {
      {"sum(rate(a_total{job=~\"$job\", code!=\"200\"}[$__rate_interval]))", {"a_total"}},
      {"histogram_quantile(0.99, sum by (le, controller) "
       "(rate(x_seconds_bucket{job=\"j\"}[5m])))",
       {"x_seconds_bucket"}},
      {"sum(a) by (namespace) / on(namespace) group_left(tier) b", {"a", "b"}},
      {"label_replace(up{job=\"x\"}, \"dst\", \"$1 not_a_metric\", \"src\", \"(.*)\")", {"up"}},
      {"a offset 5m > bool 0.5 and b @ start() unless c", {"a", "b", "c"}},
      {"max_over_time(a:recorded[1h:5m]) or vector(0)", {"a:recorded"}},
      {"topk(20, sum without (instance) (c{name='x\\'y'}))", {"c"}},
      {"rate(a[5m]) * 1e-3 + Inf - NaN", {"a"}},
      {"count_values(\"version\", build_info)", {"build_info"}},
      {"sum by (namespace)(a) / ignoring(x) sum(b) by (namespace)", {"a", "b"}},
  };
  for (const auto& row : rows) {
    CAPTURE(row.expr);
    const auto selection = testing::promqlSelection(row.expr);
    CHECK(selection.problems.empty());
    CHECK(selection.metrics() == row.metrics);
  }
  const auto matchers =
      testing::promqlSelection("sum(rate(a_total{job=~\"$job\", code!=\"200\"}[1m]))");
  REQUIRE(matchers.selectors.size() == 1);
  CHECK(matchers.selectors[0].labels == std::vector<std::string>{"job", "code"});

  // What it cannot read fails rather than passes.
  for (const char* unreadable :
       {"rat(a[5m])", "{__name__=\"a\"}", "a{job=\"x\"", "a{job=x}", "sum(a{b=\"c)"}) {
    CAPTURE(std::string(unreadable));
    CHECK_FALSE(testing::promqlSelection(unreadable).problems.empty());
  }
  CHECK(testing::labelValuesSelection("label_values(gpu_placement_heap_bytes, job)").metrics() ==
        std::set<std::string>{"gpu_placement_heap_bytes"});
  CHECK(testing::labelValuesSelection("label_values(a{job=~\"$job\"}, namespace)").metrics() ==
        std::set<std::string>{"a"});
  CHECK_FALSE(testing::labelValuesSelection("query_result(a)").problems.empty());
}

TEST_CASE("the dashboard: valid JSON, every panel on the datasource variable, a namespace filter") {
  const auto board = dashboard();
  CHECK(!base::stringMember(board, "uid").empty());
  CHECK(!base::stringMember(board, "title").empty());

  const auto* datasource = variable(board, "datasource");
  REQUIRE(datasource);
  CHECK(base::stringMember(*datasource, "type") == "datasource");
  CHECK(base::stringMember(*datasource, "query") == "prometheus");
  for (const char* name : {"job", "namespace"}) {
    CAPTURE(std::string(name));
    const auto* item = variable(board, name);
    REQUIRE(item);
    CHECK(base::stringMember(*item, "type") == "query");
    CHECK((*item)["datasource"] == kDatasource);
  }
  CHECK((*variable(board, "namespace"))["includeAll"] == true);

  std::set<std::int64_t> ids;
  int queried = 0;
  for (const auto& panel : panelsOf(board)) {
    const std::string title = base::stringMember(panel, "title");
    CAPTURE(title);
    CHECK(ids.insert(base::integerMember(panel, "id")).second);  // unique ids
    CHECK(base::integerMember(panel["gridPos"], "w") > 0);
    if (base::stringMember(panel, "type") == "row") {
      CHECK(base::memberOf(panel, "targets").empty());
      continue;
    }
    CHECK(panel["datasource"] == kDatasource);
    CHECK(!base::stringMember(panel, "description").empty());
    REQUIRE(!base::memberOf(panel, "targets").empty());
    for (const auto& target : panel["targets"]) {
      CHECK(target["datasource"] == kDatasource);
      CHECK(!base::stringMember(target, "expr").empty());
      ++queried;
    }
  }
  CHECK(queried >= 15);

  // Readable queries that each select something, and the namespace filter
  // wherever a metric has the GpuWorkload's namespace.
  std::set<std::string> selected;
  for (const auto& query : queriesOf(board)) {
    CAPTURE(query.where);
    CAPTURE(query.text);
    CHECK(query.selection.problems.empty());
    CHECK(!query.selection.selectors.empty());
    for (const auto& selector : query.selection.selectors) {
      selected.insert(selector.metric);
      const auto& labels = selector.labels;
      // Other operators export controller-runtime's and process_* names too.
      const bool ofJob = std::find(labels.begin(), labels.end(), "job") != labels.end();
      CHECK((ofJob || query.where == "variable $job"));
      if (selector.metric.find("hourly_cost_dollars") != std::string::npos ||
          selector.metric.find("idle_accelerators") != std::string::npos) {
        const bool filtered = std::find(labels.begin(), labels.end(), "namespace") != labels.end();
        CHECK((filtered || query.where == "variable $namespace"));
      }
    }
  }
  // What the dashboard is for: each of these is queried.
  for (const char* metric :
       {"gpu_placement_placements_total", "gpu_placement_replacements_total",
        "gpu_placement_estimated_hourly_cost_dollars", "gpu_placement_workload_hourly_cost_dollars",
        "gpu_placement_workload_idle_accelerators", "gpu_placement_fallbacks_total",
        "controller_runtime_reconcile_time_seconds_bucket", "rest_client_requests_total",
        "process_resident_memory_bytes", "gpu_placement_heap_bytes", "workqueue_depth",
        "leader_election_master_status"}) {
    CAPTURE(std::string(metric));
    CHECK(selected.count(metric) == 1);
  }
}

TEST_CASE("the chart ships the dashboard file as it is, labelled for Grafana's sidecar") {
  const auto fileText = testing::readFile(kDashboardFile);
  REQUIRE(!fileText.empty());
  const auto render = [](const std::string& values) {
    const auto rendered = helm("template gpo " + kChart + " -n gpu-placement-system " + values);
    REQUIRE_MESSAGE(rendered.exitCode == 0, rendered.err);
    auto documents = base::parseYamlDocuments(rendered.out, "rendered");
    REQUIRE(documents.ok());
    for (const auto& object : *documents) {
      if (base::stringMember(object["metadata"], "name") ==
          "gpo-gpu-placement-operator-dashboard") {
        return object;
      }
    }
    return json();
  };
  CHECK(render("").is_null());  // off by default

  const auto configMap =
      render("--set grafanaDashboard.enabled=true --set grafanaDashboard.folder=GPU");
  REQUIRE(configMap.is_object());
  CHECK(configMap["kind"] == "ConfigMap");
  CHECK(configMap["metadata"]["namespace"] == "gpu-placement-system");
  CHECK(configMap["metadata"]["labels"]["grafana_dashboard"] == "1");
  CHECK(configMap["metadata"]["annotations"]["k8s-sidecar-target-directory"] == "GPU");
  const std::string shipped = base::stringMember(configMap["data"], "gpu-placement.json");
  // `|-` drops the file's final newline; nothing else changes.
  CHECK(shipped + "\n" == fileText);
  CHECK(json::parse(shipped, nullptr, false) == json::parse(fileText));

  const auto custom = render("-f " + testing::repoRoot() + "/tests/fixtures/values-all.yaml");
  REQUIRE(custom.is_object());
  CHECK(custom["metadata"]["labels"]["grafana_dashboard_gpu"] == "yes");
  CHECK(custom["metadata"]["annotations"]["grafana_folder"] == "Platform");
  CHECK(custom["metadata"]["annotations"]["example.com/owner"] == "platform");
  CHECK_FALSE(custom["metadata"]["labels"].contains("grafana_dashboard"));
}

TEST_CASE("every metric the dashboard queries is on /metrics of a running operator") {
  auto& c = Cluster::withCrds();
  const std::string ns = "dashboard";
  testing::createNamespace(c, ns);
  testing::createDeployment(c, ns, "svc");
  // Pods are created below: the ServiceAccount admission wants the
  // namespace's default account, which no controller-manager makes here.
  c.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: " + ns +
          "}\n");
  // No nodes here: every type is a candidate (source None); a type whose
  // pods wait 3 s for a node is left.
  auto policy = c.create(
      testing::policiesPath(),
      json{{"apiVersion", "gpuplacement.io/v1alpha1"},
           {"kind", "PlacementPolicy"},
           {"metadata", {{"name", "dashboard"}}},
           {"spec",
            {{"capacity", {{"source", "None"}, {"fallbackAfter", "3s"}, {"retryAfter", "1h"}}}}}});
  REQUIRE_MESSAGE(policy.ok(), testing::whyNot(policy));

  OperatorProcess op(c.operatorKubeconfig());
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  auto spec = testing::inferenceSpec("svc", "7B");
  spec["policyRef"] = {{"name", "dashboard"}};
  REQUIRE(c.create(testing::workloadsPath(ns), testing::workloadObject(ns, "svc", spec)).ok());
  const std::string path = testing::workloadsPath(ns, "svc");
  REQUIRE_MESSAGE(c.waitFor([&] {
    auto object = c.get(path);
    return object && testing::conditionIs(*object, "Applied", "True");
  }),
                  op.log());
  const auto placed = c.mustGet(path)["status"]["placement"];
  const std::string first = base::stringMember(placed, "instanceType");
  const std::string firstCapacity = base::stringMember(placed, "capacityType");

  // A pod of the Deployment the scheduler cannot place, as kube-scheduler
  // would report it.
  const std::string pod = "svc-5d8f9c7b6-abcde";
  auto created = c.create(
      "/api/v1/namespaces/" + ns + "/pods",
      json{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"metadata",
            {{"name", pod},
             {"namespace", ns},
             {"ownerReferences", json::array({{{"apiVersion", "apps/v1"},
                                               {"kind", "ReplicaSet"},
                                               {"name", "svc-5d8f9c7b6"},
                                               {"uid", "4b9f6f5e-1f0c-4a57-9d3e-6a1c2f0e9b11"},
                                               {"controller", true}}})}}},
           {"spec",
            {{"automountServiceAccountToken", false},
             {"containers", json::array({{{"name", "server"}, {"image", "busybox:1.36"}}})}}}});
  REQUIRE_MESSAGE(created.ok(), testing::whyNot(created));
  auto unschedulable = c.patch(
      "/api/v1/namespaces/" + ns + "/pods/" + pod + "/status",
      json{{"status",
            {{"conditions",
              json::array({{{"type", "PodScheduled"},
                            {"status", "False"},
                            {"reason", "Unschedulable"},
                            {"message", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."},
                            {"lastTransitionTime",
                             base::formatRfc3339(std::chrono::system_clock::now())}}})}}}});
  REQUIRE_MESSAGE(unschedulable.ok(), testing::whyNot(unschedulable));
  // After 3 s the type is left and the workload moves (a forced
  // re-placement); the pod goes before the next type's 3 s are up.
  const bool fellBack = c.waitFor([&] {
    auto object = c.get(path);
    return object && !base::memberOf((*object)["status"], "unavailable").empty();
  });
  REQUIRE(c.remove("/api/v1/namespaces/" + ns + "/pods/" + pod).ok());
  REQUIRE_MESSAGE(fellBack, op.log());
  CHECK(c.waitFor([&] {
    auto object = c.get(path);
    return object &&
           base::stringMember((*object)["status"]["placement"], "instanceType") != first &&
           testing::conditionIs(*object, "Applied", "True");
  }));
  CHECK(c.waitFor([&] { return op.metric("gpu_placement_fallbacks_total") >= 1; }));
  CHECK(op.metric("gpu_placement_fallbacks_total",
                  "instance_type=\"" + first + "\",capacity_type=\"" + firstCapacity + "\"") == 1);
  CHECK(op.metric("gpu_placement_replacements_total", "policy=\"dashboard\"") >= 1);

  const auto [status, body] = OperatorProcess::httpGet(op.metricsPort(), "/metrics");
  REQUIRE(status == 200);
  const auto scrape = testing::parsePrometheusText(body);
  CHECK(scrape.unreadable.empty());
  std::set<std::string> sampled;
  std::map<std::string, std::set<std::string>> labelsOf;  // by sample name
  for (const auto& sample : scrape.samples) {
    sampled.insert(sample.name);
    for (const auto& [key, value] : sample.labels) {
      labelsOf[sample.name].insert(key);
    }
  }
  // The family a name belongs to: itself, or a histogram's.
  const auto familyOf = [&](const std::string& name) -> std::string {
    if (scrape.types.count(name)) {
      return name;
    }
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string end(suffix);
      if (name.size() > end.size() &&
          name.compare(name.size() - end.size(), end.size(), end) == 0) {
        const auto base = name.substr(0, name.size() - end.size());
        const auto type = scrape.types.find(base);
        if (type != scrape.types.end() &&
            (type->second == "histogram" || type->second == "summary")) {
          return base;
        }
      }
    }
    return "";
  };
  // Labels Prometheus adds at scrape time, not on /metrics.
  const std::set<std::string> targetLabels = {"job", "instance"};
  std::set<std::string> missing;
  for (const auto& query : queriesOf(dashboard())) {
    CAPTURE(query.where);
    CAPTURE(query.text);
    for (const auto& selector : query.selection.selectors) {
      if (familyOf(selector.metric).empty() || !sampled.count(selector.metric)) {
        missing.insert(selector.metric);
        continue;
      }
      for (const auto& label : selector.labels) {
        CAPTURE(label);
        CHECK((targetLabels.count(label) || labelsOf[selector.metric].count(label)));
      }
    }
  }
  std::string names;
  for (const auto& name : missing) {
    names += " " + name;
  }
  CHECK_MESSAGE(missing.empty(),
                "the dashboard queries metrics /metrics does not expose:" << names);
  CHECK(op.stop() == 0);
}

}  // namespace gpuplacement
