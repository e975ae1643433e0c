#include "kube/kubeconfig.h"

#include <map>

#include <doctest/doctest.h>

#include "kube/beast_transport.h"
#include "support/temp_dir.h"
#include "support/why_not.h"

namespace gpuplacement::kube {
namespace {

using testing::TempDir;

Environment fakeEnvironment(std::map<std::string, std::string> variables,
                            std::string serviceAccountDir = "/nonexistent") {
  Environment environment;
  environment.getenv = [variables](const std::string& name) -> std::optional<std::string> {
    const auto it = variables.find(name);
    return it == variables.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  environment.serviceAccountDir = std::move(serviceAccountDir);
  return environment;
}

const char* kTwoContexts = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example.com:6443
    certificate-authority-data: Q0EtUEVN
- name: prod-cluster
  cluster:
    server: https://prod.example.com
    certificate-authority: certs/ca.pem
    tls-server-name: api.prod.internal
users:
- name: dev-user
  user:
    client-certificate-data: Q0VSVA==
    client-key-data: S0VZ
- name: prod-user
  user:
    tokenFile: token.txt
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: ml
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
)";

}  // namespace

TEST_CASE("kubeconfig: current context, inline data and relative paths") {
  TempDir dir;
  const auto path = dir.write("config", kTwoContexts);
  dir.write("certs/ca.pem", "PROD-CA");

  auto dev = loadKubeconfigFiles({path}, "");
  REQUIRE_MESSAGE(dev.ok(), gpuplacement::testing::whyNot(dev));
  CHECK(dev->server == "https://dev.example.com:6443");
  CHECK(dev->caPem == "CA-PEM");
  CHECK(dev->clientCertPem == "CERT");
  CHECK(dev->clientKeyPem == "KEY");
  CHECK(dev->defaultNamespace == "ml");
  CHECK(dev->source.find("context dev") != std::string::npos);

  auto prod = loadKubeconfigFiles({path}, "prod");
  REQUIRE_MESSAGE(prod.ok(), gpuplacement::testing::whyNot(prod));
  CHECK(prod->caPem == "PROD-CA");
  CHECK(prod->tlsServerName == "api.prod.internal");
  CHECK(prod->tokenFile == dir.path() + "/token.txt");
  CHECK(prod->defaultNamespace == "default");
}

TEST_CASE("kubeconfig: with several files the first to set a name wins") {
  TempDir dir;
  const auto first = dir.write("a", R"(current-context: one
clusters:
- name: shared
  cluster: {server: "https://first:6443"}
contexts:
- name: one
  context: {cluster: shared, user: u}
users:
- name: u
  user: {token: first-token}
)");
  const auto second = dir.write("b", R"(current-context: two
clusters:
- name: shared
  cluster: {server: "https://second:6443"}
- name: other
  cluster: {server: "https://other:6443"}
contexts:
- name: two
  context: {cluster: other, user: u}
users:
- name: u
  user: {token: second-token}
)");
  auto merged = loadKubeconfigFiles({first, second}, "");
  REQUIRE_MESSAGE(merged.ok(), gpuplacement::testing::whyNot(merged));
  CHECK(merged->server == "https://first:6443");
  CHECK(merged->token == "first-token");

  auto other = loadKubeconfigFiles({first, second}, "two");
  REQUIRE(other.ok());
  CHECK(other->server == "https://other:6443");
  CHECK(other->token == "first-token");  // user "u" came from the first file

  // $KUBECONFIG joins files with ':' and skips missing ones.
  auto fromEnv = loadClientConfig(
      {}, fakeEnvironment({{"KUBECONFIG", dir.path() + "/missing:" + second + ":" + first}}));
  REQUIRE(fromEnv.ok());
  CHECK(fromEnv->server == "https://other:6443");
}

TEST_CASE("kubeconfig: exec plugin settings") {
  TempDir dir;
  const auto path = dir.write("config", R"(current-context: eks
clusters:
- name: c
  cluster: {server: "https://ABC.gr7.us-east-1.eks.amazonaws.com"}
contexts:
- name: eks
  context: {cluster: c, user: aws}
users:
- name: aws
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args: [--region, us-east-1, eks, get-token, --cluster-name, ml]
      env:
      - {name: AWS_PROFILE, value: platform}
      installHint: install the AWS CLI
      provideClusterInfo: true
)");
  auto config = loadKubeconfigFiles({path}, "");
  REQUIRE_MESSAGE(config.ok(), gpuplacement::testing::whyNot(config));
  REQUIRE(config->exec.has_value());
  CHECK(config->exec->command == "aws");
  CHECK(config->exec->args.size() == 6);
  CHECK(config->exec->env.at(0).first == "AWS_PROFILE");
  CHECK(config->exec->provideClusterInfo);
  CHECK(config->exec->installHint == "install the AWS CLI");
}

TEST_CASE("kubeconfig: errors name the field") {
  TempDir dir;
  struct Case {
    const char* content;
    const char* context;
    const char* field;
  };
  const Case cases[] = {
      {"current-context: x\n", "", "contexts"},
      {"clusters: {a: 1}\n", "", "clusters"},
      {"contexts:\n- name: x\n  context: {cluster: nope, user: u}\ncurrent-context: x\n", "",
       "contexts[x].cluster"},
      {"clusters:\n- name: c\n  cluster: {}\ncontexts:\n- name: x\n  context: {cluster: c}\n", "x",
       "clusters[c].cluster.server"},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority: /no/such}\n"
       "contexts:\n- name: x\n  context: {cluster: c}\n",
       "x", "clusters[c].cluster.certificate-authority"},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h', certificate-authority-data: '!!!'}\n"
       "contexts:\n- name: x\n  context: {cluster: c}\n",
       "x", "clusters[c].cluster.certificate-authority-data"},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h'}\ncontexts:\n- name: x\n"
       "  context: {cluster: c, user: u}\nusers:\n- name: u\n  user:\n    exec: {command: x, "
       "apiVersion: client.authentication.k8s.io/v1alpha1}\n",
       "x", "users[u].user.exec.apiVersion"},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h'}\ncontexts:\n- name: x\n"
       "  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {client-certificate-data: "
       "Q0VSVA==}\n",
       "x", "users[u].user"},
      {"clusters:\n- name: c\n  cluster: {server: 'https://h'}\ncontexts:\n- name: x\n"
       "  context: {cluster: c, user: u}\nusers:\n- name: u\n  user: {auth-provider: {name: "
       "gcp}}\n",
       "x", "users[u].user.auth-provider"},
      {"clusters: [\n", "", "kubeconfig"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.content);
    const auto path = dir.write("bad", c.content);
    auto config = loadKubeconfigFiles({path}, c.context);
    REQUIRE_FALSE(config.ok());
    CHECK(config.error().field == c.field);
  }
}

TEST_CASE("in-cluster configuration reads the service account") {
  TempDir dir;
  dir.write("sa/token", "tok\n");
  dir.write("sa/ca.crt", "CLUSTER-CA");
  dir.write("sa/namespace", "gpu-placement-system\n");
  auto env = fakeEnvironment(
      {{"KUBERNETES_SERVICE_HOST", "10.100.0.1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
      dir.path() + "/sa");
  auto config = loadClientConfig({}, env);
  REQUIRE_MESSAGE(config.ok(), gpuplacement::testing::whyNot(config));
  CHECK(config->server == "https://10.100.0.1:443");
  CHECK(config->caPem == "CLUSTER-CA");
  CHECK(config->tokenFile == dir.path() + "/sa/token");
  CHECK(config->defaultNamespace == "gpu-placement-system");

  auto ipv6 = loadInClusterConfig(
      fakeEnvironment({{"KUBERNETES_SERVICE_HOST", "fd00::1"}, {"KUBERNETES_SERVICE_PORT", "443"}},
                      dir.path() + "/sa"));
  REQUIRE(ipv6.ok());
  CHECK(ipv6->server == "https://[fd00::1]:443");

  auto outside = loadClientConfig({}, fakeEnvironment({{"HOME", "/nonexistent"}}));
  REQUIRE_FALSE(outside.ok());
  CHECK(outside.error().message.find("--kubeconfig") != std::string::npos);
}

TEST_CASE("server URLs") {
  auto plain = parseServerUrl("https://10.0.0.1:6443");
  REQUIRE(plain.ok());
  CHECK(plain->host == "10.0.0.1");
  CHECK(plain->port == "6443");
  CHECK(plain->tls);
  auto defaults = parseServerUrl("https://ABC.eks.amazonaws.com/");
  REQUIRE(defaults.ok());
  CHECK(defaults->port == "443");
  CHECK(defaults->pathPrefix.empty());
  auto prefixed = parseServerUrl("http://proxy:8080/k8s/clusters/c-1");
  REQUIRE(prefixed.ok());
  CHECK_FALSE(prefixed->tls);
  CHECK(prefixed->pathPrefix == "/k8s/clusters/c-1");
  auto ipv6 = parseServerUrl("https://[::1]:6443");
  REQUIRE(ipv6.ok());
  CHECK(ipv6->host == "::1");
  for (const char* bad : {"", "ftp://x", "https://", "https://h:0", "https://h:99999",
                          "https://h:abc", "https://[::1", "https://[::1]x"}) {
    CAPTURE(bad);
    CHECK_FALSE(parseServerUrl(bad).ok());
  }
}

TEST_CASE("base64 of kubeconfig data fields") {
  CHECK(*decodeBase64("aGVsbG8=") == "hello");
  CHECK(*decodeBase64("aGVsbG8h") == "hello!");
  CHECK(*decodeBase64("aGVs\nbG8=\n") == "hello");
  CHECK(*decodeBase64("") == "");
  CHECK_FALSE(decodeBase64("abc").ok());
  CHECK_FALSE(decodeBase64("a$c=").ok());
}

// Regression (fuzz/regressions/kubeconfig): a list entry that is not a map
// made yaml-cpp throw out of the loader and ended the process.
TEST_CASE("kubeconfig: entries of the wrong shape are errors, not exceptions") {
  TempDir dir;
  for (const char* text :
       {"clusters:\n- nfig\nclusters:\n- name: a\n  cluster: x\n", "users: [3]\n",
        "contexts: {a: b}\n", "clusters:\n- [name, a]\n", "current-context: [a]\n"}) {
    CAPTURE(text);
    const auto loaded = loadKubeconfigFiles({dir.write("config", text)}, "");
    CHECK_FALSE(loaded.ok());
  }
}

}  // namespace gpuplacement::kube
