#include "app/cli.h"

#include <iostream>
#include <map>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/prices_command.h"
#include "app/run_command.h"
#include "base/json_access.h"
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

struct EngineFlags {
  EngineFiles files;
  std::string output = "table";

  void addTo(CLI::App& command) {
    command.add_option("--catalog", files.catalog,
                       "Instance catalog YAML (default: the built-in config/catalog.yaml)");
    command.add_option("--price-list", files.priceList,
                       "A region's on-demand prices, as `gpu-placement prices import` writes "
                       "them (default: the catalog's us-east-1 prices)");
    command.add_option("--rules", files.rules,
                       "Placement rules YAML (default: the built-in config/rules.yaml)");
    command.add_option("--policy", files.policy,
                       "A PlacementPolicy manifest overriding prices and rules");
    command.add_option("-o,--output", output,
                       "Output format: table, json, yaml, or markdown (recommend)");
  }
};

// Flags shared by recommend and analyze; the optional numbers are read
// through their CLI11 options to tell "not given" from a value.
struct WorkloadOptions {
  WorkloadFlags flags;
  double latencyMs = 0;
  double maxHourlyCost = 0;
  int groupSize = 0;
  std::map<std::string, CLI::Option*> options;  // by flag name, to ask which were given

  // `sizing`: --capacity and --replicas, which analyze sets its own way.
  void addTo(CLI::App& command, bool sizing) {
    const auto add = [&](const std::string& name, auto& target, const char* help) {
      return options[name] = command.add_option(name, target, help);
    };
    add("--kind", flags.kind, "Training, FineTuning, Inference or BatchInference");
    add("--params", flags.parameters, "Model parameters: 7B, 1.3B, 350M, 7e9");
    add("--precision", flags.precision, "fp32, fp16, bf16, fp8, int8 or int4")
        ->capture_default_str();
    add("--framework", flags.framework,
        "PyTorch, TensorFlow, JAX, ONNX, Other, vLLM or Triton (sets the runtime's host memory)")
        ->capture_default_str();
    add("--architecture", flags.architecture,
        "Transformer, Diffusion, CNN, Speech, Other (default: the --family's, else Transformer)");
    add("--family", flags.family,
        "A model family of the catalog (llama-2-13b, llama-3-8b, mixtral-8x7b, whisper-large-v3, "
        "sdxl-base-1.0, ...): its shape for the KV cache, its parameters unless --params says "
        "otherwise, and its architecture unless --architecture does");
    add("--context", flags.contextTokens,
        "A serving load: the longest sequence a replica serves, prompt and output, in tokens "
        "(sizes the KV cache; needs --family)");
    add("--concurrency", flags.concurrentSequences,
        "A serving load: sequences in flight in one replica")
        ->capture_default_str();
    add("--kv-precision", flags.kvPrecision, "A serving load: the KV cache's fp16, bf16 or fp8")
        ->capture_default_str();
    add("--tokens-per-second", flags.tokensPerSecond,
        "A serving load: output tokens a second the whole service carries; the answer says how "
        "many replicas that takes, and CostOptimized weighs what they cost together");
    add("--requests-per-second", flags.requestsPerSecond,
        "A serving load: the throughput target as requests a second, of --prompt-tokens in and "
        "--output-tokens out on average (instead of --tokens-per-second)");
    add("--prompt-tokens", flags.meanPromptTokens,
        "A serving load: a request's mean prompt, in tokens; its prefill counts against a "
        "replica's tokens a second");
    add("--output-tokens", flags.meanOutputTokens,
        "A serving load: a request's mean output, in tokens");
    add("--latency-ms", latencyMs,
        "Latency target in ms per output token (Transformer), per denoising step (Diffusion) "
        "or per request (CNN: one image; Speech: one 30-second window; Other: one pass)");
    add("--objective", flags.objective, "CostOptimized, Balanced or MaxPerformance")
        ->capture_default_str();
    add("--tiers", flags.tiers, "Allowed tiers: NVIDIA,Trainium,Inferentia,CPU")->delimiter(',');
    add("--max-hourly-cost", maxHourlyCost, "Maximum USD per replica-hour");
    add("--sharing", flags.sharing,
        "Auto (the policy's), None, Isolated (MIG slices) or Any (time-sliced GPUs too)")
        ->capture_default_str();
    add("--instance-types", flags.instanceTypes, "Allowed instance types")->delimiter(',');
    add("--exclude-instance-types", flags.excludedInstanceTypes, "Excluded instance types")
        ->delimiter(',');
    if (sizing) {
      add("--capacity", flags.capacity, "OnDemand, Spot, Any or Mixed (half spot, half on-demand)")
          ->capture_default_str();
      add("--replicas", flags.replicas, "Replicas, for total cost")->capture_default_str();
      add("--group-size", groupSize,
          "The target's pods form groups of N that run one replica together, across nodes "
          "where no node holds the model (a LeaderWorkerSet's size, a JobSet's pods, a Ray "
          "worker group's replicas); 0: the placement says the size. Without it each pod is a "
          "replica (a Deployment, StatefulSet or Job); --replicas counts groups");
    }
  }

  bool given(const std::string& name) const {
    const auto it = options.find(name);
    return it != options.end() && it->second->count() > 0;
  }

  WorkloadFlags resolved() const {
    WorkloadFlags result = flags;
    if (given("--latency-ms")) {
      result.latencyMs = latencyMs;
    }
    if (given("--max-hourly-cost")) {
      result.maxHourlyCost = maxHourlyCost;
    }
    if (given("--group-size")) {
      result.groupSize = groupSize;
    }
    return result;
  }

  // The flags that apply to every scenario of a file.
  ScenarioOverrides overrides(std::optional<double> hours, bool spot) const {
    ScenarioOverrides result;
    result.tiers = flags.tiers;
    if (given("--objective")) {
      result.objective = flags.objective;
    }
    if (given("--max-hourly-cost")) {
      result.maxHourlyCost = maxHourlyCost;
    }
    result.hoursPerMonth = hours;
    result.spot = spot;
    result.instanceTypes = flags.instanceTypes;
    result.excludedInstanceTypes = flags.excludedInstanceTypes;
    return result;
  }
};

int printVersion(bool server, const KubeFlags& flags) {
  std::cout << "gpu-placement " << GPUPLACEMENT_VERSION << " (" << GPUPLACEMENT_LICENSE << ")\n";
  if (!server) {
    return kExitOk;
  }
  auto config =
      kube::loadClientConfig({flags.kubeconfig, flags.context}, kube::Environment::process());
  if (!config) {
    return badInput(config.error());
  }
  asio::io_context context;
  runtime::RealClock clock;
  auto client = kube::connect(context.get_executor(), *config, {}, clock);
  if (!client) {
    return badInput(client.error());
  }
  auto version = runtime::runSync(context, (*client)->get("/version"));
  if (!version) {
    std::cerr << "error: " << config->server << ": " << version.error().describe() << "\n";
    return kExitFailure;
  }
  std::cout << "server " << config->server << ": Kubernetes "
            << base::stringOf(base::memberOf(*version, "gitVersion"), "unknown") << "\n";
  return kExitOk;
}

using LoadedEngine = std::pair<std::shared_ptr<const core::PlacementEngine>, OutputFormat>;

base::Result<LoadedEngine> loadEngineFor(const EngineFlags& flags, bool markdownAllowed) {
  auto format = parseOutputFormat(flags.output);
  if (!format) {
    return format.error();
  }
  if (*format == OutputFormat::Markdown && !markdownAllowed) {
    return base::Error{"-o", "markdown is for recommend (a table of decisions)"};
  }
  auto engine = loadEngine(flags.files);
  if (!engine) {
    return engine.error();
  }
  return LoadedEngine{*engine, *format};
}

struct RecommendCommand {
  CLI::App* app = nullptr;
  WorkloadOptions workload;
  EngineFlags engine;
  std::string manifests;
  std::vector<std::string> mig;
  std::vector<std::string> timeSliced;

  void addTo(CLI::App& cli) {
    app = cli.add_subcommand(
        "recommend", "Recommend hardware for a workload, from flags or GpuWorkload manifests");
    workload.addTo(*app, true);
    engine.addTo(*app);
    app->add_option("-f,--filename", manifests,
                    "GpuWorkload manifests (YAML, several documents allowed)");
    app->add_option("--mig", mig,
                    "What if a node of this type stood, other work keeping it up, its GPUs cut "
                    "into MIG instances: TYPE=PROFILE:N[+PROFILE:N] per GPU, e.g. "
                    "p4d.24xlarge=1g.5gb:7 (Karpenter then launches any other type)");
    app->add_option("--time-sliced", timeSliced,
                    "What if a single-GPU node of this type stood, other work keeping it up, its "
                    "GPU time-sliced: TYPE=WAYS, e.g. g6.xlarge=4 (placed with --sharing Any)");
  }

  int run() const {
    auto loaded = loadEngineFor(engine, true);
    if (!loaded) {
      return badInput(loaded.error());
    }
    const auto& [placement, format] = *loaded;
    std::vector<NamedIntent> intents;
    if (!manifests.empty()) {
      auto fromFile = intentsFromManifests(manifests, placement->catalog(),
                                           workload.given("--replicas")
                                               ? std::optional<int>(workload.flags.replicas)
                                               : std::nullopt);
      if (!fromFile) {
        return badInput(fromFile.error());
      }
      intents = std::move(fromFile).value();
    } else {
      auto intent = workload.resolved().toIntent(placement->catalog());
      if (!intent) {
        return badInput(intent.error());
      }
      intents.push_back(NamedIntent{"", std::move(intent).value(), ""});
    }
    auto shared = sharedNodesFromFlags(mig, timeSliced);
    if (!shared) {
      return badInput(shared.error());
    }
    std::unique_ptr<const core::WhatIfCluster> cluster;
    if (!shared->empty()) {
      auto built = core::WhatIfCluster::build(placement->catalog(), *shared);
      if (!built) {
        return badInput(built.error());
      }
      cluster = std::move(built).value();
    }
    return runRecommend(*placement, intents, cluster.get(), format, std::cout);
  }
};

struct AnalyzeCommand {
  CLI::App* app = nullptr;
  WorkloadOptions workload;
  EngineFlags engine;
  core::CurrentSetup current;
  double currentHourlyCost = 0;
  double hours = 0;
  bool spot = false;
  std::string scenarios;
  CLI::Option* acceleratorsOption = nullptr;
  CLI::Option* instancesOption = nullptr;
  CLI::Option* currentCostOption = nullptr;
  CLI::Option* hoursOption = nullptr;

  void addTo(CLI::App& cli) {
    app = cli.add_subcommand(
        "analyze", "Compare what a workload runs on today with the recommended placement");
    workload.flags.objective = "CostOptimized";
    workload.addTo(*app, false);
    engine.addTo(*app);
    auto* currentOption =
        app->add_option("--current", current.instanceType, "Instance type in use today");
    app->add_option("--scenarios", scenarios,
                    "Run the what-if scenarios of a file (config/examples/*.yaml)")
        ->excludes(currentOption);
    acceleratorsOption = app->add_option("--current-accelerators", current.accelerators,
                                         "Accelerators in use today");
    instancesOption =
        app->add_option("--current-instances", current.instances, "Whole instances in use today")
            ->excludes(acceleratorsOption);
    currentCostOption = app->add_option("--current-hourly-cost", currentHourlyCost,
                                        "What the current setup costs an hour (USD), e.g. a "
                                        "Capacity Block without a catalog price");
    hoursOption = app->add_option("--hours", hours, "Hours a month (default 730)");
    app->add_flag("--spot", spot, "Price both setups at spot prices");
  }

  std::optional<double> givenHours() const {
    return hoursOption->count() > 0 ? std::optional<double>(hours) : std::nullopt;
  }

  int run() const {
    auto loaded = loadEngineFor(engine, false);
    if (!loaded) {
      return badInput(loaded.error());
    }
    const auto& [placement, format] = *loaded;
    if (!scenarios.empty()) {
      return runFile(*placement, format);
    }
    if (current.instanceType.empty()) {
      return badInput(base::Error{"--current",
                                  "required: the instance type in use today (or "
                                  "--scenarios FILE)"});
    }
    auto flags = workload.resolved();
    flags.capacity = spot ? "Spot" : "OnDemand";
    auto intent = flags.toIntent(placement->catalog());
    if (!intent) {
      return badInput(intent.error());
    }
    auto setup = current;
    if (currentCostOption->count() > 0) {
      setup.hourlyCost = currentHourlyCost;
    }
    const double monthHours = givenHours().value_or(placement->policy().hoursPerMonth);
    return runAnalyze(*placement, *intent, setup, monthHours, format, std::cout, std::cerr);
  }

  // Flags that describe one model or one setup cannot apply to a file of
  // scenarios that each name their own; the others apply to every scenario.
  int runFile(const core::PlacementEngine& placement, OutputFormat format) const {
    for (const char* flag :
         {"--kind", "--params", "--precision", "--framework", "--architecture", "--latency-ms"}) {
      if (workload.given(flag)) {
        return badInput(
            base::Error{flag, "not allowed with --scenarios: each scenario names its own model"});
      }
    }
    for (const CLI::Option* option : {acceleratorsOption, instancesOption, currentCostOption}) {
      if (option->count() > 0) {
        return badInput(
            base::Error{option->get_name(),
                        "not allowed with --scenarios: each scenario names its current setup"});
      }
    }
    auto list = scenariosFromFile(scenarios, placement.catalog(), placement.policy().hoursPerMonth);
    if (!list) {
      return badInput(list.error());
    }
    if (auto ok =
            applyOverrides(workload.overrides(givenHours(), spot), placement.catalog(), *list);
        !ok) {
      return badInput(ok.error());
    }
    return runScenarios(placement, *list, format, std::cout, std::cerr);
  }
};

struct CatalogCommand {
  CLI::App* app = nullptr;
  EngineFlags engine;
  std::string tierFilter;

  void addTo(CLI::App& cli) {
    app = cli.add_subcommand("catalog", "List the instance catalog with effective prices");
    engine.addTo(*app);
    app->add_option("--tier", tierFilter, "Only this tier: NVIDIA, Trainium, Inferentia, CPU");
  }

  int run() const {
    auto loaded = loadEngineFor(engine, false);
    if (!loaded) {
      return badInput(loaded.error());
    }
    std::optional<core::Tier> tier;
    if (!tierFilter.empty()) {
      auto parsed = core::parseEnum<core::Tier>(tierFilter);
      if (!parsed) {
        return badInput(base::Error{"--tier", parsed.error().message});
      }
      tier = *parsed;
    }
    return runCatalog(*loaded->first, tier, loaded->second, std::cout);
  }
};

CLI::App* addRunCommand(CLI::App& cli, RunFlags& flags) {
  auto* run = cli.add_subcommand("run", "Run the operator against a cluster");
  run->add_option("--kubeconfig", flags.kubeconfig, "Path to a kubeconfig file");
  run->add_option("--context", flags.context, "The kubeconfig context to use");
  run->add_option("--namespaces", flags.namespaces,
                  "Namespaces to watch, comma-separated (default: all)")
      ->delimiter(',');
  run->add_option("--workers", flags.workers, "Concurrent reconciles")->capture_default_str();
  run->add_flag("--finalizer", flags.finalizer,
                "Hold each placed GpuWorkload with a finalizer until its target is given "
                "back (off: the ownership record on the target does that, and a deletion "
                "never waits for the operator)");
  run->add_option("--per-workload-metrics", flags.perWorkloadMetrics,
                  "Export a cost and an idle-devices series per placed GpuWorkload (false: only "
                  "the totals by namespace and by instance type, for clusters with very many "
                  "GpuWorkloads)")
      ->capture_default_str();
  run->add_option("--qps", flags.qps, "Client-side requests per second to the API server")
      ->capture_default_str();
  run->add_option("--burst", flags.burst, "Client-side request burst")->capture_default_str();
  run->add_option("--busy-status-qps", flags.busyStatusQps,
                  "GpuWorkload status writes per second when placements start; from there "
                  "the rate yields to the placements' patches (cut while they answer slower "
                  "than the server's baseline, measured with the statuses held back for a "
                  "burst's first second; grown while not; doubled while none are sent), "
                  "between 1 and --qps (default: a fifth of --qps)");
  run->add_option("--resync", flags.resync, "Re-check every workload this often")
      ->capture_default_str();
  run->add_option("--watch-timeout", flags.watchTimeout,
                  "Shortest server-side watch duration (each watch lasts this to twice this)")
      ->capture_default_str();
  run->add_option("--metrics-addr", flags.metricsAddress, "Serve /metrics here (\"0\" disables)")
      ->capture_default_str();
  run->add_flag("--metrics-secure", flags.metricsSecure,
                "Serve /metrics over HTTPS to callers the API server authenticates and "
                "authorizes (TokenReview, SubjectAccessReview for get /metrics), the default; "
                "--metrics-secure=false serves plain HTTP to anyone");
  run->add_option("--metrics-cert-dir", flags.metricsCertDir,
                  "Directory with tls.crt and tls.key for /metrics, re-read when they change "
                  "(default: a self-signed certificate made at start)");
  run->add_option("--health-addr", flags.healthAddress,
                  "Serve /healthz and /readyz here (\"0\" disables)")
      ->capture_default_str();
  run->add_option("--log-level", flags.logLevel, "debug, info, warn or error")
      ->capture_default_str();
  run->add_option("--log-format", flags.logFormat, "json or text")->capture_default_str();
  run->add_option("--catalog", flags.catalog, "Instance catalog YAML (default: built-in)");
  run->add_option("--rules", flags.rules, "Placement rules YAML (default: built-in)");
  run->add_option("--price-list", flags.priceList,
                  "A region's on-demand prices, as `gpu-placement prices import` writes them "
                  "(default: the catalog's)");
  run->add_option("--region", flags.region,
                  "The cluster's AWS region, e.g. eu-central-1 (default: what its nodes' "
                  "topology.kubernetes.io/region says); the status says whether the prices "
                  "shown are this region's");
  run->add_option("--karpenter-service", flags.karpenterService,
                  "Read Karpenter's offering prices from its metrics through the API server's "
                  "service proxy: NAMESPACE/NAME:PORT, like karpenter/karpenter:8080 (default: "
                  "the catalog's prices)");
  run->add_option("--karpenter-metrics-url", flags.karpenterMetricsUrl,
                  "Read them from this URL instead (Karpenter running beside the operator)");
  run->add_option("--karpenter-prices-interval", flags.karpenterPricesInterval,
                  "How often Karpenter's prices are read again")
      ->capture_default_str();
  run->add_flag("--leader-elect", flags.leaderElect,
                "Elect a leader among replicas; only the leader reconciles");
  run->add_option("--leader-election-namespace", flags.leaderElectionNamespace,
                  "Namespace of the Lease (default: the pod's own)");
  run->add_option("--leader-election-id", flags.leaderElectionId, "Name of the Lease")
      ->capture_default_str();
  run->add_option("--lease-duration", flags.leaseDuration,
                  "How long a leader holds the lease without renewing")
      ->capture_default_str();
  run->add_option("--renew-deadline", flags.renewDeadline,
                  "How long the leader keeps trying to renew before giving up")
      ->capture_default_str();
  run->add_option("--retry-period", flags.retryPeriod, "Time between attempts")
      ->capture_default_str();
  return run;
}

}  // namespace

int badInput(const base::Error& error) {
  std::cerr << "error: " << error.describe() << "\n";
  return kExitBadInput;
}

int runCli(int argc, char** argv) {
  CLI::App cli{"gpu-placement: places AI/ML workloads on the right accelerator"};
  cli.require_subcommand(1);

  auto* version = cli.add_subcommand("version", "Print the version (and the server's)");
  bool server = false;
  KubeFlags versionFlags;
  version->add_flag("--server", server, "Also ask the API server for its version");
  versionFlags.addTo(*version);
  RecommendCommand recommend;
  recommend.addTo(cli);
  AnalyzeCommand analyze;
  analyze.addTo(cli);
  CatalogCommand catalog;
  catalog.addTo(cli);
  PricesCommand prices;
  prices.addTo(cli);
  RunFlags runFlags;
  auto* run = addRunCommand(cli, runFlags);

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
  if (run->parsed()) {
    return runOperator(runFlags);
  }
  if (recommend.app->parsed()) {
    return recommend.run();
  }
  if (analyze.app->parsed()) {
    return analyze.run();
  }
  if (catalog.app->parsed()) {
    return catalog.run();
  }
  if (prices.import->parsed()) {
    return prices.run();
  }
  return kExitBadInput;
}

}  // namespace gpuplacement::app
