#include "kube/kubeconfig.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <openssl/evp.h>
#include <yaml-cpp/yaml.h>

namespace gpuplacement::kube {
namespace {

namespace fs = std::filesystem;
using base::Error;
using base::Result;

Result<std::string> readFile(const std::string& path, const std::string& field) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{field, "cannot read " + path};
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string resolvePath(const std::string& path, const fs::path& baseDir) {
  if (path.empty() || fs::path(path).is_absolute()) {
    return path;
  }
  return (baseDir / path).lexically_normal().string();
}

// One named entry of a kubeconfig list (clusters, users, contexts), with the
// directory of the file it came from, for relative paths.
struct Entry {
  YAML::Node body;
  fs::path baseDir;
  std::string file;
};

struct MergedKubeconfig {
  std::map<std::string, Entry> clusters;
  std::map<std::string, Entry> users;
  std::map<std::string, Entry> contexts;
  std::string currentContext;
};

std::string scalar(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) {
    return std::string();  // indexing a scalar or a list throws
  }
  const auto value = node[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

Result<base::Ok> mergeFile(const std::string& path, MergedKubeconfig& merged) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile&) {
    return Error{"kubeconfig", "cannot read " + path};
  } catch (const YAML::Exception& e) {
    return Error{"kubeconfig", path + ": not valid YAML: " + e.what()};
  }
  if (!root || root.IsNull()) {
    return base::Ok{};  // an empty file contributes nothing, as in kubectl
  }
  if (!root.IsMap()) {
    return Error{"kubeconfig", path + ": expected a Config object"};
  }
  const fs::path baseDir = fs::absolute(path).parent_path();
  struct Section {
    const char* list;
    const char* item;
    std::map<std::string, Entry>* target;
  };
  for (const Section& section :
       {Section{"clusters", "cluster", &merged.clusters}, Section{"users", "user", &merged.users},
        Section{"contexts", "context", &merged.contexts}}) {
    const auto list = root[section.list];
    if (!list || list.IsNull()) {
      continue;
    }
    if (!list.IsSequence()) {
      return Error{section.list, path + ": expected a list"};
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto name = scalar(list[i], "name");
      if (name.empty()) {
        return Error{std::string(section.list) + "[" + std::to_string(i) + "].name",
                     path + ": missing"};
      }
      // The first file to define a name wins.
      section.target->try_emplace(name, Entry{list[i][section.item], baseDir, path});
    }
  }
  if (merged.currentContext.empty()) {
    merged.currentContext = scalar(root, "current-context");
  }
  return base::Ok{};
}

// A PEM value given either inline (base64 in *-data) or as a file path.
Result<std::string> pemField(const Entry& entry, const std::string& prefix, const char* dataKey,
                             const char* fileKey) {
  const auto data = scalar(entry.body, dataKey);
  if (!data.empty()) {
    auto decoded = decodeBase64(data);
    if (!decoded) {
      return Error{prefix + "." + dataKey, decoded.error().message};
    }
    return decoded;
  }
  const auto file = scalar(entry.body, fileKey);
  if (!file.empty()) {
    return readFile(resolvePath(file, entry.baseDir), prefix + "." + fileKey);
  }
  return std::string();
}

Result<ExecPlugin> parseExec(const YAML::Node& node, const Entry& entry,
                             const std::string& prefix) {
  ExecPlugin exec;
  exec.command = scalar(node, "command");
  if (exec.command.empty()) {
    return Error{prefix + ".command", "missing"};
  }
  // A relative path with a directory is relative to the kubeconfig file;
  // a bare name is looked up on PATH when run.
  if (exec.command.find('/') != std::string::npos) {
    exec.command = resolvePath(exec.command, entry.baseDir);
  }
  exec.apiVersion = scalar(node, "apiVersion");
  if (exec.apiVersion != "client.authentication.k8s.io/v1" &&
      exec.apiVersion != "client.authentication.k8s.io/v1beta1") {
    return Error{prefix + ".apiVersion",
                 "\"" + exec.apiVersion +
                     "\" is not supported (use client.authentication.k8s.io/v1 or v1beta1)"};
  }
  if (const auto args = node["args"]; args && args.IsSequence()) {
    for (const auto& arg : args) {
      exec.args.push_back(arg.as<std::string>());
    }
  }
  if (const auto env = node["env"]; env && env.IsSequence()) {
    for (const auto& variable : env) {
      exec.env.emplace_back(scalar(variable, "name"), scalar(variable, "value"));
    }
  }
  exec.installHint = scalar(node, "installHint");
  exec.provideClusterInfo = node["provideClusterInfo"] && node["provideClusterInfo"].as<bool>();
  return exec;
}

Result<ClientConfig> resolveContext(const MergedKubeconfig& merged, const std::string& source,
                                    const std::string& contextOverride) {
  const std::string contextName = contextOverride.empty() ? merged.currentContext : contextOverride;
  if (contextName.empty()) {
    return Error{"current-context", source + ": no current context; pass --context"};
  }
  const auto context = merged.contexts.find(contextName);
  if (context == merged.contexts.end()) {
    return Error{"contexts", source + ": context \"" + contextName + "\" does not exist"};
  }
  const auto clusterName = scalar(context->second.body, "cluster");
  const auto userName = scalar(context->second.body, "user");
  const auto cluster = merged.clusters.find(clusterName);
  if (cluster == merged.clusters.end()) {
    return Error{"contexts[" + contextName + "].cluster",
                 source + ": cluster \"" + clusterName + "\" does not exist"};
  }

  ClientConfig config;
  config.source = source + " (context " + contextName + ")";
  const auto ns = scalar(context->second.body, "namespace");
  if (!ns.empty()) {
    config.defaultNamespace = ns;
  }

  const std::string clusterPrefix = "clusters[" + clusterName + "].cluster";
  config.server = scalar(cluster->second.body, "server");
  if (config.server.empty()) {
    return Error{clusterPrefix + ".server", "missing"};
  }
  config.insecureSkipVerify = cluster->second.body["insecure-skip-tls-verify"] &&
                              cluster->second.body["insecure-skip-tls-verify"].as<bool>();
  config.tlsServerName = scalar(cluster->second.body, "tls-server-name");
  if (!scalar(cluster->second.body, "proxy-url").empty()) {
    return Error{clusterPrefix + ".proxy-url", "proxies are not supported"};
  }
  auto ca = pemField(cluster->second, clusterPrefix, "certificate-authority-data",
                     "certificate-authority");
  if (!ca) {
    return ca.error();
  }
  config.caPem = std::move(ca).value();

  if (userName.empty()) {
    return config;  // anonymous
  }
  const auto user = merged.users.find(userName);
  if (user == merged.users.end()) {
    return Error{"contexts[" + contextName + "].user",
                 source + ": user \"" + userName + "\" does not exist"};
  }
  const std::string userPrefix = "users[" + userName + "].user";
  const auto& body = user->second.body;
  auto cert = pemField(user->second, userPrefix, "client-certificate-data", "client-certificate");
  if (!cert) {
    return cert.error();
  }
  auto key = pemField(user->second, userPrefix, "client-key-data", "client-key");
  if (!key) {
    return key.error();
  }
  config.clientCertPem = std::move(cert).value();
  config.clientKeyPem = std::move(key).value();
  if (config.clientCertPem.empty() != config.clientKeyPem.empty()) {
    return Error{userPrefix, "a client certificate needs both the certificate and the key"};
  }
  config.token = scalar(body, "token");
  const auto tokenFile = scalar(body, "tokenFile");
  if (!tokenFile.empty()) {
    config.tokenFile = resolvePath(tokenFile, user->second.baseDir);
  }
  if (body["exec"] && body["exec"].IsMap()) {
    auto exec = parseExec(body["exec"], user->second, userPrefix + ".exec");
    if (!exec) {
      return exec.error();
    }
    config.exec = std::move(exec).value();
  }
  if (body["auth-provider"]) {
    return Error{userPrefix + ".auth-provider",
                 "auth-provider plugins were removed from Kubernetes; use an exec plugin"};
  }
  if (!scalar(body, "username").empty() || !scalar(body, "password").empty()) {
    return Error{userPrefix + ".username", "basic authentication is not supported"};
  }
  return config;
}

std::vector<std::string> splitPathList(const std::string& list) {
  std::vector<std::string> paths;
  std::string::size_type start = 0;
  while (start <= list.size()) {
    const auto end = list.find(':', start);
    auto item = list.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) {
      paths.push_back(std::move(item));
    }
    if (end == std::string::npos) {
      break;
    }
    start = end + 1;
  }
  return paths;
}

}  // namespace

Environment Environment::process() {
  Environment environment;
  environment.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
  };
  return environment;
}

Result<std::string> decodeBase64(const std::string& text) {
  std::string compact;
  compact.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') {
      compact.push_back(c);
    }
  }
  if (compact.size() % 4 != 0) {
    return Error{"", "not valid base64 (length is not a multiple of 4)"};
  }
  std::string decoded(compact.size() / 4 * 3, '\0');
  const int length = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(decoded.data()),
                                     reinterpret_cast<const unsigned char*>(compact.data()),
                                     static_cast<int>(compact.size()));
  if (length < 0) {
    return Error{"", "not valid base64"};
  }
  // EVP_DecodeBlock counts padding as zero bytes.
  std::size_t padding = 0;
  for (auto it = compact.rbegin(); it != compact.rend() && *it == '=' && padding < 2; ++it) {
    ++padding;
  }
  decoded.resize(static_cast<std::size_t>(length) - padding);
  return decoded;
}

Result<ClientConfig> loadKubeconfigFiles(const std::vector<std::string>& paths,
                                         const std::string& contextOverride) {
  MergedKubeconfig merged;
  std::string source;
  try {
    for (const auto& path : paths) {
      auto added = mergeFile(path, merged);
      if (!added) {
        return added.error();
      }
      source += (source.empty() ? "kubeconfig " : ":") + path;
    }
    return resolveContext(merged, source, contextOverride);
  } catch (const YAML::Exception& e) {
    // A value of the wrong type (insecure-skip-tls-verify: "maybe"), or an
    // entry of the wrong shape (a list item that is not a map: found by
    // fuzz/targets/kubeconfig.cc, it used to end the process).
    return Error{"kubeconfig", (source.empty() ? paths.front() : source) + ": " + e.what()};
  }
}

Result<ClientConfig> loadInClusterConfig(const Environment& environment) {
  const auto host = environment.getenv("KUBERNETES_SERVICE_HOST");
  const auto port = environment.getenv("KUBERNETES_SERVICE_PORT");
  if (!host || host->empty() || !port || port->empty()) {
    return Error{"KUBERNETES_SERVICE_HOST",
                 "not running in a cluster (KUBERNETES_SERVICE_HOST/PORT are not set)"};
  }
  ClientConfig config;
  config.source = "in-cluster service account";
  const bool ipv6 = host->find(':') != std::string::npos;
  config.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  const fs::path dir = environment.serviceAccountDir;
  config.tokenFile = (dir / "token").string();
  auto ca = readFile((dir / "ca.crt").string(), "serviceaccount/ca.crt");
  if (!ca) {
    return ca.error();
  }
  config.caPem = std::move(ca).value();
  if (auto ns = readFile((dir / "namespace").string(), "serviceaccount/namespace"); ns) {
    auto value = std::move(ns).value();
    while (!value.empty() && (value.back() == '\n' || value.back() == ' ')) {
      value.pop_back();
    }
    if (!value.empty()) {
      config.defaultNamespace = value;
    }
  }
  return config;
}

Result<ClientConfig> loadClientConfig(const KubeconfigOptions& options,
                                      const Environment& environment) {
  if (!options.path.empty()) {
    return loadKubeconfigFiles({options.path}, options.context);
  }
  if (const auto list = environment.getenv("KUBECONFIG"); list && !list->empty()) {
    auto paths = splitPathList(*list);
    // kubectl skips files in $KUBECONFIG that do not exist.
    std::erase_if(paths, [](const std::string& path) { return !fs::exists(path); });
    if (paths.empty()) {
      return Error{"KUBECONFIG", "none of the files in \"" + *list + "\" exists"};
    }
    return loadKubeconfigFiles(paths, options.context);
  }
  if (environment.getenv("KUBERNETES_SERVICE_HOST")) {
    return loadInClusterConfig(environment);
  }
  if (const auto home = environment.getenv("HOME"); home) {
    const auto path = *home + "/.kube/config";
    if (fs::exists(path)) {
      return loadKubeconfigFiles({path}, options.context);
    }
  }
  return Error{"kubeconfig",
               "no configuration found: pass --kubeconfig, set KUBECONFIG, or run in a cluster"};
}

}  // namespace gpuplacement::kube
