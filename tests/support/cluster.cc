#include "support/cluster.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <thread>

#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/io/yaml_json.h"
#include "base/json_access.h"
#include "kube/kubeconfig.h"
#include "runtime/run_sync.h"
#include "support/command.h"
#include "support/paths.h"
#include "support/why_not.h"

namespace gpuplacement::testing {

namespace {

std::string plural(const std::string& kind) {
  std::string lower;
  for (char c : kind) {
    lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  // policy -> policies, but nodeoverlay -> nodeoverlays.
  if (lower.size() > 1 && lower.back() == 'y' &&
      std::string_view("aeiou").find(lower[lower.size() - 2]) == std::string_view::npos) {
    return lower.substr(0, lower.size() - 1) + "ies";
  }
  return lower + "s";
}

}  // namespace

unsigned short freePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const unsigned short port = ntohs(address.sin_port);
  close(fd);
  return port;
}

Cluster::Cluster(ControlPlane& plane) : plane_(plane) {
  kube::ClientOptions options;
  options.qps = 0;  // the test's own requests are never throttled
  client_ = plane.adminClient(context_.get_executor(), options);
}

Cluster::~Cluster() = default;

kube::ApiResult<json> Cluster::get(const std::string& path) {
  return runtime::runSync(context_, client_->get(path));
}
kube::ApiResult<json> Cluster::create(const std::string& path, const json& body) {
  return runtime::runSync(context_, client_->create(path, body));
}
kube::ApiResult<json> Cluster::patch(const std::string& path, const json& body,
                                     kube::PatchType type) {
  return runtime::runSync(context_, client_->patch(path, body, type));
}
kube::ApiResult<json> Cluster::remove(const std::string& path) {
  return runtime::runSync(context_, client_->remove(path));
}

json Cluster::mustGet(const std::string& path) {
  auto result = get(path);
  REQUIRE_MESSAGE(result.ok(), (path + ": " + gpuplacement::testing::whyNot(result)));
  return std::move(result).value();
}

std::string Cluster::pathOf(const std::string& apiVersion, const std::string& kind,
                            const std::string& ns, const std::string& name) {
  std::string path = apiVersion == "v1" ? "/api/v1" : "/apis/" + apiVersion;
  if (!ns.empty()) {
    path += "/namespaces/" + ns;
  }
  path += "/" + plural(kind);
  if (!name.empty()) {
    path += "/" + name;
  }
  return path;
}

void Cluster::apply(const std::string& yaml) {
  auto documents = base::parseYamlDocuments(yaml, "manifest");
  REQUIRE_MESSAGE(documents.ok(), gpuplacement::testing::whyNot(documents));
  for (const auto& document : *documents) {
    const auto& metadata = base::memberOf(document, "metadata");
    const std::string path =
        pathOf(base::stringMember(document, "apiVersion"), base::stringMember(document, "kind"),
               base::stringMember(metadata, "namespace"));
    auto created = create(path, document);
    if (!created && created.error().alreadyExists()) {
      continue;
    }
    REQUIRE_MESSAGE(created.ok(), (path + ": " + gpuplacement::testing::whyNot(created)));
  }
}

Cluster& Cluster::withCrds() {
  static Cluster instance(ControlPlane::shared());
  static const bool ready = [] {
    instance.installCrds();
    return true;
  }();
  (void)ready;
  return instance;
}

void Cluster::installCrds() {
  for (const char* file :
       {"gpuplacement.io_gpuworkloads.yaml", "gpuplacement.io_placementpolicies.yaml"}) {
    apply(readFile(repoRoot() + "/crds/" + file));
  }
  const bool established = waitFor([this] {
    for (const char* name : {"gpuworkloads.gpuplacement.io", "placementpolicies.gpuplacement.io"}) {
      auto crd =
          get(std::string("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/") + name);
      if (!crd) {
        return false;
      }
      bool ok = false;
      for (const auto& condition : base::memberOf(base::memberOf(*crd, "status"), "conditions")) {
        ok = ok || (base::stringMember(condition, "type") == "Established" &&
                    base::stringMember(condition, "status") == "True");
      }
      if (!ok) {
        return false;
      }
    }
    // Served: a list answers.
    return get("/apis/gpuplacement.io/v1alpha1/gpuworkloads").ok();
  });
  REQUIRE_MESSAGE(established, "the CRDs were not established");
}

std::string Cluster::operatorKubeconfig() {
  const std::string path = plane_.dir() + "/gpu-placement-system-gpu-placement-operator.kubeconfig";
  if (std::ifstream(path).good()) {
    return path;
  }
  for (const char* file :
       {"namespace.yaml", "service_account.yaml", "role.yaml", "role_leader_election.yaml"}) {
    apply(readFile(repoRoot() + "/config/rbac/" + file));
  }
  return serviceAccountKubeconfig("gpu-placement-system", "gpu-placement-operator");
}

std::string Cluster::serviceAccountKubeconfig(const std::string& ns, const std::string& account) {
  const std::string path = plane_.dir() + "/" + ns + "-" + account + ".kubeconfig";
  auto token = create("/api/v1/namespaces/" + ns + "/serviceaccounts/" + account + "/token",
                      json{{"apiVersion", "authentication.k8s.io/v1"},
                           {"kind", "TokenRequest"},
                           {"spec", {{"expirationSeconds", 86400}}}});
  REQUIRE_MESSAGE(token.ok(), gpuplacement::testing::whyNot(token));
  const auto admin = plane_.adminConfig();
  std::string caData;
  {
    const auto kubeconfig = readFile(plane_.kubeconfigPath());
    const auto start = kubeconfig.find("certificate-authority-data: ");
    const auto end = kubeconfig.find('\n', start);
    caData = kubeconfig.substr(start + 28, end - start - 28);
  }
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: operator\n"
                      << "clusters:\n- name: local\n  cluster:\n    server: " << admin.server
                      << "\n    certificate-authority-data: " << caData
                      << "\nusers:\n- name: operator\n  user:\n    token: "
                      << base::stringMember(base::memberOf(*token, "status"), "token")
                      << "\ncontexts:\n- name: operator\n  context: {cluster: local, user: "
                         "operator}\n";
  return path;
}

bool Cluster::waitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout,
                      std::chrono::milliseconds every) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) {
      return true;
    }
    std::this_thread::sleep_for(every);
  }
  return condition();
}

namespace {

const json* conditionIn(const json& object, const std::string& type) {
  for (const auto& item : base::memberOf(base::memberOf(object, "status"), "conditions")) {
    if (base::stringMember(item, "type") == type) {
      return &item;
    }
  }
  return nullptr;
}

}  // namespace

std::string Cluster::conditionOf(const std::string& path, const std::string& type) {
  const auto object = get(path);
  const json* found = object ? conditionIn(*object, type) : nullptr;
  return found ? base::stringMember(*found, "status") + "/" + base::stringMember(*found, "reason")
               : "";
}

std::string Cluster::conditionMessageOf(const std::string& path, const std::string& type) {
  const auto object = get(path);
  const json* found = object ? conditionIn(*object, type) : nullptr;
  return found ? base::stringMember(*found, "message") : "";
}

std::size_t Cluster::writesBy(const std::string& user, const std::string& verb,
                              const std::string& resource, const std::string& ns,
                              const std::string& name) {
  std::size_t count = 0;
  for (const auto& entry : readAudit(plane_, user)) {
    if (entry.verb == verb && entry.resource == resource && entry.ns == ns && entry.name == name &&
        entry.subresource.empty() && entry.stage == "ResponseComplete" && entry.code < 300) {
      ++count;
    }
  }
  return count;
}

void Cluster::completeRollout(const std::string& ns, const std::string& name,
                              const std::string& kind) {
  const std::string path = pathOf("apps/v1", kind, ns, name);
  const auto object = mustGet(path);
  const auto generation = base::integerMember(base::memberOf(object, "metadata"), "generation");
  const auto replicas =
      base::integerOf(base::memberOf(base::memberOf(object, "spec"), "replicas"), 1);
  json status = {{"observedGeneration", generation},
                 {"replicas", replicas},
                 {"updatedReplicas", replicas},
                 {"readyReplicas", replicas},
                 {"availableReplicas", replicas}};
  if (kind == "StatefulSet") {
    const std::string revision = name + "-" + std::to_string(generation);
    status["currentRevision"] = revision;
    status["updateRevision"] = revision;
    status["currentReplicas"] = replicas;
  }
  auto written = patch(path + "/status", json{{"status", status}});
  REQUIRE_MESSAGE(written.ok(), gpuplacement::testing::whyNot(written));
}

std::vector<AuditEntry> readAudit(ControlPlane& plane, const std::string& user) {
  std::vector<AuditEntry> entries;
  std::ifstream in(plane.dir() + "/logs/audit.log");
  std::string line;
  while (std::getline(in, line)) {
    const auto event = json::parse(line, nullptr, false);
    if (base::stringMember(base::memberOf(event, "user"), "username") != user) {
      continue;
    }
    const auto& object = base::memberOf(event, "objectRef");
    entries.push_back(AuditEntry{
        base::stringMember(event, "verb"), base::stringMember(object, "resource"),
        base::stringMember(object, "subresource"), base::stringMember(object, "name"),
        base::stringMember(object, "namespace"),
        static_cast<int>(base::integerMember(base::memberOf(event, "responseStatus"), "code")),
        base::stringMember(event, "stage"), base::stringMember(object, "apiGroup")});
  }
  return entries;
}

OperatorProcess::OperatorProcess(const std::string& kubeconfig, std::vector<std::string> extraArgs,
                                 const std::string& binary) {
  metricsPort_ = freePort();
  healthPort_ = freePort();
  char logTemplate[] = "/tmp/gpu-placement-operator-XXXXXX";
  const int logFd = mkstemp(logTemplate);
  REQUIRE(logFd >= 0);
  logPath_ = logTemplate;
  std::vector<std::string> args = {binary,           "run",
                                   "--kubeconfig",   kubeconfig,
                                   "--metrics-addr", "127.0.0.1:" + std::to_string(metricsPort_),
                                   "--health-addr",  "127.0.0.1:" + std::to_string(healthPort_),
                                   "--log-format",   "text",
                                   "--log-level",    "debug"};
  // Plain HTTP, for metric(), unless the test is about how /metrics is served.
  if (std::none_of(extraArgs.begin(), extraArgs.end(), [](const std::string& arg) {
        return arg.rfind("--metrics-secure", 0) == 0 || arg.rfind("--metrics-cert-dir", 0) == 0;
      })) {
    args.push_back("--metrics-secure=false");
  }
  args.insert(args.end(), extraArgs.begin(), extraArgs.end());
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    dup2(logFd, STDOUT_FILENO);
    dup2(logFd, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& arg : args) {
      argv.push_back(arg.data());
    }
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(logFd);
}

OperatorProcess::~OperatorProcess() {
  if (running()) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  std::remove(logPath_.c_str());
}

bool OperatorProcess::running() {
  if (pid_ <= 0) {
    return false;
  }
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    pid_ = -1;
    return false;
  }
  return true;
}

int OperatorProcess::stop(int signal) {
  if (pid_ <= 0) {
    return -1;
  }
  kill(pid_, signal);
  int status = 0;
  for (int i = 0; i < 300; ++i) {
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

void OperatorProcess::pause() {
  kill(pid_, SIGSTOP);
}
void OperatorProcess::resume() {
  kill(pid_, SIGCONT);
}

std::string OperatorProcess::log() const {
  return readFile(logPath_);
}

std::pair<int, std::string> OperatorProcess::httpGet(unsigned short port, const std::string& path) {
  const auto result = runCommand(
      "curl -s --max-time 5 -w '\\n%{http_code}' http://127.0.0.1:" + std::to_string(port) + path);
  const auto newline = result.out.rfind('\n');
  if (newline == std::string::npos) {
    return {0, ""};
  }
  return {std::atoi(result.out.c_str() + newline + 1), result.out.substr(0, newline)};
}

double OperatorProcess::metric(const std::string& name, const std::string& labels) {
  const auto [status, body] = httpGet(metricsPort_, "/metrics");
  double total = 0;
  std::istringstream lines(body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(name, 0) != 0 || line.size() <= name.size() ||
        (line[name.size()] != '{' && line[name.size()] != ' ')) {
      continue;
    }
    if (!labels.empty() && line.find(labels) == std::string::npos) {
      continue;
    }
    total += std::atof(line.c_str() + line.rfind(' ') + 1);
  }
  return total;
}

bool OperatorProcess::waitReady(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (httpGet(healthPort_, "/readyz").first == 200) {
      return true;
    }
    if (!running()) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace gpuplacement::testing
