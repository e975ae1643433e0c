#include "app/cli.h"

#include <iostream>

#include <CLI/CLI.hpp>

#include "kube/connect.h"
#include "runtime/run_sync.h"

namespace gpuplacement::app {
namespace {

struct KubeFlags {
  std::string kubeconfig;
  std::string context;

  void addTo(CLI::App& command) {
    command.add_option("--kubeconfig", kubeconfig, "Path to a kubeconfig file");
    command.add_option("--context", context, "The kubeconfig context to use");
  }
};

int printVersion(bool server, const KubeFlags& flags) {
  std::cout << "gpu-placement " << GPUPLACEMENT_VERSION << "\n";
  if (!server) {
    return kExitOk;
  }
  auto config =
      kube::loadClientConfig({flags.kubeconfig, flags.context}, kube::Environment::process());
  if (!config) {
    std::cerr << "error: " << config.error().describe() << "\n";
    return kExitBadInput;
  }
  asio::io_context context;
  runtime::RealClock clock;
  auto client = kube::connect(context.get_executor(), *config, {}, clock);
  if (!client) {
    std::cerr << "error: " << client.error().describe() << "\n";
    return kExitBadInput;
  }
  auto version = runtime::runSync(context, (*client)->get("/version"));
  if (!version) {
    std::cerr << "error: " << config->server << ": " << version.error().describe() << "\n";
    return kExitFailure;
  }
  std::cout << "server " << config->server << ": Kubernetes "
            << version->value("gitVersion", "unknown") << "\n";
  return kExitOk;
}

}  // namespace

int runCli(int argc, char** argv) {
  CLI::App cli{"gpu-placement: places AI/ML workloads on the right accelerator"};
  cli.require_subcommand(1);

  auto* version = cli.add_subcommand("version", "Print the version (and the server's)");
  bool server = false;
  KubeFlags versionFlags;
  version->add_flag("--server", server, "Also ask the API server for its version");
  versionFlags.addTo(*version);

  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    cli.exit(e);
    return kExitBadInput;
  }
  if (version->parsed()) {
    return printVersion(server, versionFlags);
  }
  return kExitBadInput;
}

}  // namespace gpuplacement::app
