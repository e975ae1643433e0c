#include "support/control_plane.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <stdexcept>

#include <unistd.h>

#include "base/io/yaml_json.h"
#include "kube/connect.h"

namespace gpuplacement::testing {

std::string readFile(const std::string& path) {
  auto text = base::readTextFile(path);
  return text ? *text : std::string();
}

int ControlPlane::script(const std::string& arguments) {
  const std::string command = repoRoot() + "/scripts/controlplane " + arguments;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

ControlPlane::ControlPlane() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/gpu-placement-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a directory for the control plane");
  }
  dir_ = pattern;
  // --owner-pid: should this process die without running destructors, the
  // script's watchdog stops etcd and kube-apiserver within a second. A
  // control plane kept for a person to look at (scripts/test --keep) has no
  // owner: it runs until scripts/controlplane stop.
  std::string arguments = "start " + dir_;
  if (!keep()) {
    arguments += " --owner-pid " + std::to_string(getpid());
  }
  if (options().audit) {
    arguments += " --audit";
  }
  if (!options().kubernetes.empty()) {
    arguments += " --kubernetes " + options().kubernetes;
  }
  if (!options().pools.empty()) {
    arguments += " --cluster --pools " + repoRoot() + "/" + options().pools;
    if (options().karpenter) {
      arguments += " --karpenter";
      if (!options().prices.empty()) {
        arguments += " --prices " + repoRoot() + "/" + options().prices;
      }
    }
    if (!options().kinds.empty()) {
      std::string list;
      for (const auto& kind : options().kinds) {
        list += (list.empty() ? "" : ",") + kind;
      }
      arguments += " --kinds " + list;
    }
  }
  if (!options().apiServerFlags.empty()) {
    arguments += " --";
    for (const auto& flag : options().apiServerFlags) {
      arguments += " '" + flag + "'";
    }
  }
  const int status = script(arguments);
  if (status != 0) {
    throw std::runtime_error("scripts/controlplane start failed (exit " + std::to_string(status) +
                             "); logs in " + dir_ + "/logs. Run scripts/setup first.");
  }
}

bool ControlPlane::keep() {
  const char* value = std::getenv("GPUPLACEMENT_KEEP_CONTROL_PLANE");
  return value != nullptr && std::string(value) == "1";
}

ControlPlane::~ControlPlane() {
  if (keep()) {
    std::fprintf(stderr,
                 "the control plane keeps running (GPUPLACEMENT_KEEP_CONTROL_PLANE=1):\n"
                 "  eval \"$(%s/scripts/controlplane env %s)\"\n"
                 "  %s/scripts/controlplane stop %s   # when done\n",
                 repoRoot().c_str(), dir_.c_str(), repoRoot().c_str(), dir_.c_str());
    return;
  }
  script("stop " + dir_ + " >/dev/null 2>&1");
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

ControlPlaneOptions& ControlPlane::options() {
  static ControlPlaneOptions instance;
  return instance;
}

void ControlPlane::configure(ControlPlaneOptions options) {
  ControlPlane::options() = std::move(options);
}

ControlPlane& ControlPlane::shared() {
  static ControlPlane instance;
  return instance;
}

std::string ControlPlane::pinnedVersion(const std::string& line) {
  const std::string path =
      "tests/controlplane/" + (line.empty() ? std::string() : "k8s-" + line + "/") + "go.mod";
  const std::string goMod = readFile(repoRoot() + "/" + path);
  std::smatch match;
  if (!std::regex_search(goMod, match, std::regex(R"(k8s\.io/kubernetes (v[0-9.]+))"))) {
    throw std::runtime_error(path + " pins no k8s.io/kubernetes version");
  }
  return match[1];
}

kube::ClientConfig ControlPlane::adminConfig() const {
  auto config = kube::loadKubeconfigFiles({kubeconfigPath()}, "");
  if (!config) {
    throw std::runtime_error("cannot load " + kubeconfigPath() + ": " + config.error().describe());
  }
  return *config;
}

std::unique_ptr<kube::KubeClient> ControlPlane::adminClient(asio::any_io_executor executor,
                                                            kube::ClientOptions options) const {
  auto client = kube::connect(executor, adminConfig(), options, clock_);
  if (!client) {
    throw std::runtime_error(client.error().describe());
  }
  return std::move(client).value();
}

CommandResult ControlPlane::withTools(const std::string& command) const {
  return runCommand("eval \"$(" + repoRoot() + "/scripts/controlplane env " + dir_ + ")\" && " +
                    command);
}

void ControlPlane::restartApiServer() {
  if (script("restart-apiserver " + dir_) != 0) {
    throw std::runtime_error("scripts/controlplane restart-apiserver failed; logs in " + dir_ +
                             "/logs");
  }
}

}  // namespace gpuplacement::testing
