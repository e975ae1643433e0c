// /metrics behind the API server's reviews, on the real control plane: the
// chart's RBAC (the operator's review grants, the metrics-reader role bound
// through metrics.readers), the operator run with the chart's ServiceAccount,
// and scrapes with real service-account tokens: 401, 403, 200; what the
// reviews cost by the audit log; a certificate from a directory verified by
// its CA; plain HTTP as a flag.
#include <filesystem>
#include <fstream>
#include <thread>

#include <doctest/doctest.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/why_not.h"

namespace gpuplacement {
namespace {

using testing::Cluster;
using testing::CommandResult;
using testing::ControlPlane;
using testing::json;
using testing::OperatorProcess;

const bool kAuditConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;  // the audit log counts the reviews
  ControlPlane::configure(options);
  return true;
}();

const std::string kMetricsChart = testing::repoRoot() + "/charts/gpu-placement-operator";
const std::string kMetricsNamespace = "gpu-placement-system";
const std::string kMetricsRelease = "gpo-metrics";
const std::string kMetricsFullname = "gpo-metrics-gpu-placement-operator";

std::string tokenOf(Cluster& c, const std::string& account) {
  auto token =
      c.create("/api/v1/namespaces/" + kMetricsNamespace + "/serviceaccounts/" + account + "/token",
               json{{"apiVersion", "authentication.k8s.io/v1"},
                    {"kind", "TokenRequest"},
                    {"spec", {{"expirationSeconds", 3600}}}});
  REQUIRE_MESSAGE(token.ok(), gpuplacement::testing::whyNot(token));
  return base::stringMember(base::memberOf(*token, "status"), "token");
}

// A kubeconfig that authenticates as `account` (the operator runs with it).
std::string kubeconfigOf(Cluster& c, const std::string& account) {
  const std::string path = c.plane().dir() + "/" + account + ".kubeconfig";
  const auto admin = testing::readFile(c.plane().kubeconfigPath());
  const auto start = admin.find("certificate-authority-data: ") + 28;
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: sa\nclusters:\n- name: c\n"
                      << "  cluster:\n    server: " << c.plane().adminConfig().server
                      << "\n    certificate-authority-data: "
                      << admin.substr(start, admin.find('\n', start) - start)
                      << "\nusers:\n- name: sa\n  user:\n    token: " << tokenOf(c, account)
                      << "\ncontexts:\n- name: sa\n  context: {cluster: c, user: sa}\n";
  return path;
}

struct Scrape {
  int status = 0;
  std::string body;
};

// GET /metrics with curl; `tls` is curl's TLS option (-k, --cacert FILE).
Scrape scrape(const std::string& url, const std::string& token, const std::string& tls = "-k") {
  const auto result =
      testing::runCommand("curl -s --max-time 10 " + tls + " -w '\\n%{http_code}' " +
                          (token.empty() ? "" : "-H 'Authorization: Bearer " + token + "' ") + url);
  const auto newline = result.out.rfind('\n');
  if (newline == std::string::npos) {
    return {};
  }
  return {std::atoi(result.out.c_str() + newline + 1), result.out.substr(0, newline)};
}

// Reviews the operator's account asked the API server for, by the audit log.
int reviewsBy(const std::string& user, const std::string& resource) {
  int count = 0;
  for (const auto& entry : testing::readAudit(ControlPlane::shared(), user)) {
    if (entry.verb == "create" && entry.resource == resource && entry.stage == "ResponseComplete") {
      ++count;
    }
  }
  return count;
}

}  // namespace

TEST_CASE(
    "/metrics over HTTPS with the chart's RBAC: 401 without a token, 403 without the role, 200 "
    "with it, two reviews a minute per token; plain HTTP as a flag") {
  auto& c = Cluster::withCrds();
  c.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: " + kMetricsNamespace + "}\n");
  for (const char* account : {"prometheus", "stranger"}) {
    c.apply("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: " + std::string(account) +
            ", namespace: " + kMetricsNamespace + "}\n");
  }
  // The chart, with Prometheus's account bound to the metrics-reader role.
  const auto installed = ControlPlane::shared().withTools(
      "helm install " + kMetricsRelease + " " + kMetricsChart + " -n " + kMetricsNamespace +
      " --wait=false --set placementPolicy.create=false --set-json "
      "'metrics.readers=[{\"kind\":\"ServiceAccount\",\"name\":\"prometheus\",\"namespace\":\"" +
      kMetricsNamespace + "\"}]'");
  REQUIRE_MESSAGE(installed.exitCode == 0, installed.err);
  const std::string prometheus = "system:serviceaccount:" + kMetricsNamespace + ":prometheus";
  // RBAC is in force once the authorizer has seen the binding: wait for it,
  // or a 403 from before would be what the cache keeps.
  REQUIRE(c.waitFor([&] {
    return ControlPlane::shared()
               .withTools("kubectl auth can-i get /metrics --as=" + prometheus)
               .out == "yes\n";
  }));
  CHECK(ControlPlane::shared()
            .withTools("kubectl auth can-i get /metrics --as=system:serviceaccount:" +
                       kMetricsNamespace + ":stranger")
            .out == "no\n");

  // The operator with the chart's ServiceAccount, /metrics as by default.
  const std::string operatorUser =
      "system:serviceaccount:" + kMetricsNamespace + ":" + kMetricsFullname;
  OperatorProcess op(kubeconfigOf(c, kMetricsFullname),
                     {"--namespaces", kMetricsNamespace, "--metrics-secure"});
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  CHECK(op.log().find("TokenReview and SubjectAccessReview for get /metrics") != std::string::npos);
  const std::string url = "https://127.0.0.1:" + std::to_string(op.metricsPort()) + "/metrics";
  const std::string reader = tokenOf(c, "prometheus");
  const std::string stranger = tokenOf(c, "stranger");

  const auto anonymous = scrape(url, "");
  CHECK(anonymous.status == 401);
  CHECK(anonymous.body == "Unauthorized\n");
  CHECK(scrape(url, "not-a-token").status == 401);
  for (int i = 0; i < 3; ++i) {
    const auto refused = scrape(url, stranger);
    CHECK(refused.status == 403);
    CHECK(refused.body == "Authorization denied for user system:serviceaccount:" +
                              kMetricsNamespace + ":stranger\n");
  }
  for (int i = 0; i < 5; ++i) {
    const auto allowed = scrape(url, reader);
    CHECK(allowed.status == 200);
    CHECK(allowed.body.find("# TYPE controller_runtime_reconcile_total counter") !=
          std::string::npos);
  }
  // Over plain HTTP the port answers nothing.
  CHECK(scrape("http://127.0.0.1:" + std::to_string(op.metricsPort()) + "/metrics", reader, "")
            .status != 200);

  // What it cost the API server: one TokenReview per token (the missing one
  // none), one SubjectAccessReview per authenticated token; the other
  // scrapes came from the cache.
  REQUIRE(c.waitFor([&] { return reviewsBy(operatorUser, "tokenreviews") >= 3; }));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the audit log is written in batches
  CHECK(reviewsBy(operatorUser, "tokenreviews") == 3);
  CHECK(reviewsBy(operatorUser, "subjectaccessreviews") == 2);
  MESSAGE("11 scrapes (1 without a token, 1 forged, 3 refused, 5 allowed, 1 plain): "
          << reviewsBy(operatorUser, "tokenreviews") << " TokenReviews, "
          << reviewsBy(operatorUser, "subjectaccessreviews") << " SubjectAccessReviews");
  CHECK(op.stop() == 0);

  // A certificate from a directory (cert-manager's Secret, mounted): the
  // scraper verifies it against its CA.
  const std::string dir = c.plane().dir() + "/metrics-cert";
  std::filesystem::create_directories(dir);
  const auto made = testing::runCommand(
      "cd " + dir +
      " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 "
      "-subj /CN=metrics-ca -keyout ca.key -out ca.crt 2>&1"
      " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=metrics"
      " -keyout tls.key -out tls.csr 2>&1"
      " && printf 'subjectAltName=IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > ext.cnf"
      " && openssl x509 -req -in tls.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1"
      " -extfile ext.cnf -out tls.crt 2>&1");
  REQUIRE_MESSAGE(made.exitCode == 0, made.out);
  OperatorProcess verified(kubeconfigOf(c, kMetricsFullname),
                           {"--namespaces", kMetricsNamespace, "--metrics-cert-dir", dir});
  REQUIRE_MESSAGE(verified.waitReady(), verified.log());
  const std::string verifiedUrl =
      "https://127.0.0.1:" + std::to_string(verified.metricsPort()) + "/metrics";
  CHECK(scrape(verifiedUrl, reader, "--cacert " + dir + "/ca.crt").status == 200);
  CHECK(scrape(verifiedUrl, "", "--cacert " + dir + "/ca.crt").status == 401);
  CHECK(verified.stop() == 0);

  // Plain HTTP, as with metrics.secure=false: no token needed.
  OperatorProcess plain(kubeconfigOf(c, kMetricsFullname),
                        {"--namespaces", kMetricsNamespace, "--metrics-secure=false"});
  REQUIRE_MESSAGE(plain.waitReady(), plain.log());
  const auto open = OperatorProcess::httpGet(plain.metricsPort(), "/metrics");
  CHECK(open.first == 200);
  CHECK(open.second.find("# TYPE controller_runtime_reconcile_total counter") != std::string::npos);
  CHECK(plain.stop() == 0);

  // A bad certificate directory is refused at start, naming the flag.
  OperatorProcess broken(kubeconfigOf(c, kMetricsFullname),
                         {"--metrics-cert-dir", c.plane().dir() + "/no-such-dir"});
  CHECK_FALSE(broken.waitReady(std::chrono::seconds(5)));
  CHECK(broken.stop() == -1);  // it had exited already
  CHECK(broken.log().find("--metrics-cert-dir: cannot read") != std::string::npos);

  REQUIRE(ControlPlane::shared()
              .withTools("helm uninstall " + kMetricsRelease + " -n " + kMetricsNamespace)
              .exitCode == 0);
}

}  // namespace gpuplacement
