#include "kube/credentials.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/json_access.h"
#include "base/time_format.h"
#include "runtime/signal.h"

extern char** environ;

namespace gpuplacement::kube {
namespace {

using base::Error;
using base::Result;
using json = nlohmann::json;

constexpr std::size_t kMaxPluginOutput = 1024 * 1024;
constexpr auto kPluginTimeout = std::chrono::seconds(60);
// Refresh a little before expiry so a request never carries a token that
// expires in flight.
constexpr auto kExpiryMargin = std::chrono::seconds(30);
constexpr auto kTokenFileRereadPeriod = std::chrono::seconds(60);

std::string bearer(const std::string& token) {
  return "Bearer " + token;
}

class NoCredentials final : public CredentialSource {
 public:
  asio::awaitable<Result<std::string>> authorization() override { co_return std::string(); }
};

class StaticToken final : public CredentialSource {
 public:
  explicit StaticToken(std::string token) : header_(bearer(token)) {}
  asio::awaitable<Result<std::string>> authorization() override { co_return header_; }

 private:
  std::string header_;
};

// The kubelet rotates projected service-account tokens in place; re-reading
// once a minute (as client-go does) picks up the new one well before the old
// one expires.
class TokenFile final : public CredentialSource {
 public:
  TokenFile(std::string path, const runtime::Clock& clock)
      : path_(std::move(path)), clock_(clock) {}

  asio::awaitable<Result<std::string>> authorization() override {
    const auto now = clock_.monotonicNow();
    if (header_.empty() || now - readAt_ >= kTokenFileRereadPeriod) {
      std::ifstream in(path_);
      std::ostringstream text;
      text << in.rdbuf();
      std::string token = text.str();
      while (!token.empty() &&
             (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) {
        token.pop_back();
      }
      if (!in || token.empty()) {
        if (header_.empty()) {
          co_return Error{"tokenFile", "cannot read a token from " + path_};
        }
        co_return header_;  // keep the last good token; the file may be mid-rotation
      }
      header_ = bearer(token);
      readAt_ = now;
    }
    co_return header_;
  }

  void invalidate() override { readAt_ = {}; }

 private:
  std::string path_;
  const runtime::Clock& clock_;
  std::string header_;
  runtime::MonotonicTime readAt_{};
};

struct PluginOutput {
  int exitCode = -1;
  std::string stdoutText;
};

// Runs the plugin with posix_spawn and reads its stdout on the event loop,
// so a slow `aws eks get-token` never blocks other requests.
asio::awaitable<Result<PluginOutput>> runPlugin(const ExecPlugin& plugin,
                                                const std::string& execInfo) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    co_return Error{"exec", std::string("cannot create a pipe: ") + std::strerror(errno)};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);

  std::vector<std::string> argStorage{plugin.command};
  argStorage.insert(argStorage.end(), plugin.args.begin(), plugin.args.end());
  std::vector<std::string> envStorage;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    envStorage.emplace_back(*entry);
  }
  for (const auto& [name, value] : plugin.env) {
    envStorage.push_back(name + "=" + value);
  }
  envStorage.push_back("KUBERNETES_EXEC_INFO=" + execInfo);
  std::vector<char*> argv, envp;
  for (auto& arg : argStorage) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  for (auto& variable : envStorage) {
    envp.push_back(variable.data());
  }
  envp.push_back(nullptr);

  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, plugin.command.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    std::string message = "cannot run \"" + plugin.command + "\": " + std::strerror(spawned);
    if (!plugin.installHint.empty()) {
      message += ". " + plugin.installHint;
    }
    co_return Error{"exec.command", message};
  }

  auto executor = co_await asio::this_coro::executor;
  // Shared with the deadline handler, which may run after this frame is gone.
  struct Child {
    Child(asio::any_io_executor executor, int fd) : reader(executor, fd) {}
    asio::posix::stream_descriptor reader;
    pid_t pid = 0;
    bool timedOut = false;
  };
  auto child = std::make_shared<Child>(executor, fds[0]);
  child->pid = pid;
  asio::steady_timer deadline(executor);
  deadline.expires_after(kPluginTimeout);
  deadline.async_wait([child](const boost::system::error_code& ec) {
    if (!ec) {
      child->timedOut = true;
      kill(child->pid, SIGKILL);
      boost::system::error_code ignored;
      child->reader.close(ignored);
    }
  });
  PluginOutput output;
  std::vector<char> chunk(16 * 1024);
  for (;;) {
    boost::system::error_code ec;
    const std::size_t n = co_await child->reader.async_read_some(
        asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
    output.stdoutText.append(chunk.data(), n);
    if (ec || output.stdoutText.size() > kMaxPluginOutput) {
      break;
    }
  }
  // Reap the child; it has closed stdout, so it is exiting.
  int status = 0;
  asio::steady_timer poll(executor);
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid || done < 0) {
      break;
    }
    if (child->timedOut || output.stdoutText.size() > kMaxPluginOutput) {
      kill(pid, SIGKILL);
    }
    poll.expires_after(std::chrono::milliseconds(10));
    boost::system::error_code ignored;
    co_await poll.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  deadline.cancel();
  if (child->timedOut) {
    co_return Error{"exec.command", "\"" + plugin.command + "\" did not finish within " +
                                        std::to_string(kPluginTimeout.count()) + " s"};
  }
  output.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  co_return output;
}

class ExecPluginSource final : public CredentialSource {
 public:
  ExecPluginSource(ExecPlugin plugin, std::string server, const runtime::Clock& clock)
      : plugin_(std::move(plugin)), server_(std::move(server)), clock_(clock) {}

  asio::awaitable<Result<std::string>> authorization() override {
    if (fresh()) {
      co_return header_;
    }
    if (refreshing_) {
      // Single flight: wait for the refresh already running.
      co_await refreshed_.wait();
      if (fresh()) {
        co_return header_;
      }
      co_return Error{"exec", lastError_};
    }
    refreshing_ = true;
    auto result = co_await refresh();
    refreshing_ = false;
    refreshed_.notifyAll();
    if (!result) {
      lastError_ = result.error().describe();
      co_return result.error();
    }
    co_return header_;
  }

  void invalidate() override { header_.clear(); }

 private:
  bool fresh() const {
    return !header_.empty() && (!expiresAt_ || clock_.systemNow() + kExpiryMargin < *expiresAt_);
  }

  asio::awaitable<Result<base::Ok>> refresh() {
    json info = {{"apiVersion", plugin_.apiVersion},
                 {"kind", "ExecCredential"},
                 {"spec", {{"interactive", false}}}};
    if (plugin_.provideClusterInfo) {
      info["spec"]["cluster"] = {{"server", server_}};
    }
    auto output = co_await runPlugin(plugin_, info.dump());
    if (!output) {
      co_return output.error();
    }
    if (output->exitCode != 0) {
      co_return Error{"exec.command", "\"" + plugin_.command + "\" exited with status " +
                                          std::to_string(output->exitCode)};
    }
    auto credential = parseExecCredential(output->stdoutText, plugin_.apiVersion);
    if (!credential) {
      co_return credential.error();
    }
    header_ = bearer(credential->token);
    expiresAt_ = credential->expiresAt;
    co_return base::Ok{};
  }

  ExecPlugin plugin_;
  std::string server_;
  const runtime::Clock& clock_;
  std::string header_;
  std::optional<runtime::SystemTime> expiresAt_;
  bool refreshing_ = false;
  runtime::Signal refreshed_;
  std::string lastError_;
};

}  // namespace

Result<ExecCredential> parseExecCredential(const std::string& output,
                                           const std::string& expectedApiVersion) {
  const json document = json::parse(output, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    return Error{"exec", "the plugin did not print an ExecCredential JSON object"};
  }
  if (base::stringMember(document, "kind") != "ExecCredential") {
    return Error{"exec.kind", "expected ExecCredential"};
  }
  if (const auto version = base::stringMember(document, "apiVersion");
      version != expectedApiVersion) {
    return Error{"exec.apiVersion", "the plugin answered \"" + version + "\", expected \"" +
                                        expectedApiVersion + "\""};
  }
  const auto status = document.find("status");
  if (status == document.end() || !status->is_object()) {
    return Error{"exec.status", "missing"};
  }
  ExecCredential credential;
  if (const auto token = status->find("token"); token != status->end() && token->is_string()) {
    credential.token = token->get<std::string>();
  }
  if (credential.token.empty()) {
    if (status->contains("clientCertificateData")) {
      return Error{"exec.status.clientCertificateData",
                   "client certificates from exec plugins are not supported; use a token"};
    }
    return Error{"exec.status.token", "missing"};
  }
  if (const auto expiry = status->find("expirationTimestamp");
      expiry != status->end() && expiry->is_string()) {
    auto parsed = base::parseRfc3339(expiry->get<std::string>());
    if (!parsed) {
      return Error{"exec.status.expirationTimestamp", parsed.error().message};
    }
    credential.expiresAt = *parsed;
  }
  return credential;
}

std::unique_ptr<CredentialSource> makeCredentialSource(const ClientConfig& config,
                                                       const runtime::Clock& clock) {
  if (config.exec) {
    return std::make_unique<ExecPluginSource>(*config.exec, config.server, clock);
  }
  if (!config.tokenFile.empty()) {
    return std::make_unique<TokenFile>(config.tokenFile, clock);
  }
  if (!config.token.empty()) {
    return std::make_unique<StaticToken>(config.token);
  }
  return std::make_unique<NoCredentials>();
}

}  // namespace gpuplacement::kube
