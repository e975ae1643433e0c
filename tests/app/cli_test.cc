// The gpu-placement command line, run as a person would: the real binary,
// its output and its exit codes (0 placed, 1 cannot place, 2 bad input).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "base/io/yaml_json.h"
#include "support/command.h"
#include "support/paths.h"

namespace gpuplacement::app {
namespace {

using base::parseYaml;
using json = nlohmann::json;
using testing::runCommand;
using testing::TempDir;

std::string binary() {
  return testing::operatorBinary();
}
std::string repo() {
  return testing::repoRoot();
}

json runJson(const std::string& arguments, int expectedExit = 0) {
  const auto result = runCommand(binary() + " " + arguments);
  CAPTURE(result.err);
  REQUIRE(result.exitCode == expectedExit);
  return json::parse(result.out);
}

}  // namespace

TEST_CASE("recommend -o json has the documented shape") {
  const auto result = runJson(
      "recommend --kind inference --params 13B --precision FP16 --latency-ms 50 "
      "--objective costoptimized --capacity on-demand -o json");
  const auto& placement = result.at("placement");
  for (const char* key : {"tier",
                          "accelerator",
                          "instanceType",
                          "acceleratorCount",
                          "capacityType",
                          "hourlyCost",
                          "monthlyCost",
                          "requiredMemoryGiB",
                          "availableMemoryGiB",
                          "costModel",
                          "nodeHourlyCost",
                          "nodes",
                          "idleAccelerators",
                          "costNote",
                          "memoryFillPercent",
                          "latencyMs",
                          "latencyPer",
                          "latencyBound",
                          "neededAccelerators",
                          "hostMemoryGiB"}) {
    CAPTURE(std::string(key));
    CHECK(placement.contains(key));
  }
  CHECK(placement.at("monthlyCost").get<double>() ==
        doctest::Approx(placement.at("hourlyCost").get<double>() * 730).epsilon(1e-4));
  const auto& scheduling = result.at("scheduling");
  CHECK(scheduling.at("nodeSelector").at("node.kubernetes.io/instance-type") ==
        placement.at("instanceType"));
  CHECK(scheduling.at("tolerations").is_array());
  // Devices are requested and limited alike; host memory is requested only.
  const auto& resources = scheduling.at("resources");
  for (const auto& [name, limit] : resources.at("limits").items()) {
    CAPTURE(name);
    CHECK(resources.at("requests").at(name) == limit);
  }
  CHECK(resources.at("requests").at("memory").is_string());
  CHECK_FALSE(resources.at("limits").contains("memory"));
  CHECK(result.at("rule").is_string());
  CHECK_FALSE(result.at("ruleSource").get<std::string>().empty());
  CHECK(result.at("placedReason") == "Placed");
  CHECK(placement.at("memoryFillPercent").get<double>() <=
        placement.at("memoryFillLimitPercent").get<double>());
  CHECK(result.at("reason").get<std::string>().find(
            placement.at("instanceType").get<std::string>()) != std::string::npos);
  REQUIRE(result.at("alternatives").is_array());
  REQUIRE_FALSE(result.at("alternatives").empty());
  for (const auto& alternative : result.at("alternatives")) {
    CHECK(alternative.contains("instanceType"));
    CHECK(alternative.contains("hourlyCost"));
    CHECK(alternative.at("rejected").is_string());
  }
}

TEST_CASE("cannot place exits 1 with placement null and the reason") {
  const auto result =
      runJson("recommend --kind Training --params 350B --precision bf16 -o json", 1);
  CHECK(result.at("placement").is_null());
  CHECK(result.at("cannotPlace")
            .get<std::string>()
            .find("cannot place on one node: needs 5,868 GiB") == 0);
  CHECK(result.at("placedReason") == "CannotPlace");
  const auto table =
      runCommand(binary() + " recommend --kind Training --params 350B --precision bf16");
  CHECK(table.exitCode == 1);
  CHECK(table.out.find("PLACEMENT    none: cannot place on one node: needs 5,868 GiB") !=
        std::string::npos);
}

TEST_CASE("a model no node holds: with --group-size, a group across nodes in the answer") {
  // 350B x 2 B x 9 = 5,868 GiB: five p6-b200.48xlarge hold it.
  const auto result = runJson(
      "recommend --kind Training --params 350B --precision bf16 --group-size 0 "
      "--instance-types p6-b200.48xlarge -o json");
  const auto& placement = result.at("placement");
  CHECK(placement.at("instanceType") == "p6-b200.48xlarge");
  CHECK(placement.at("acrossNodes").at("nodes") == 5);
  CHECK(placement.at("acrossNodes").at("efaInterfaces") == 8);
  // Training: the degrees that split it over the group's 40 devices.
  const auto& training = placement.at("acrossNodes").at("training");
  CHECK(training.at("tensorParallel").get<int>() * training.at("pipelineParallel").get<int>() *
            training.at("dataParallel").get<int>() ==
        40);
  CHECK(training.at("deviceMemoryGiB").get<double>() <= 0.9 * 180);  // a B200 has 179 GiB
  CHECK(placement.at("nodes") == 5);
  CHECK(placement.at("hourlyCost").get<double>() ==
        doctest::Approx(5 * placement.at("nodeHourlyCost").get<double>()));
  const auto table = runCommand(binary() +
                                " recommend --kind Training --params 350B --precision bf16 "
                                "--group-size 0 --instance-types p6-b200.48xlarge");
  CHECK(table.exitCode == 0);
  CHECK(table.out.find("on each of 5 nodes a replica, joined by EFA (8 interfaces, 3,200 Gbps a "
                       "node)") != std::string::npos);
  CHECK(table.out.find("GiB per pod (the runtime") != std::string::npos);
}

TEST_CASE("bad input exits 2 naming the field and the allowed values") {
  struct Case {
    const char* arguments;
    const char* message;
  };
  const Case cases[] = {
      {"recommend --kind Inference --params 7B --objective fast",
       "--objective: \"fast\" is not a valid objective (use CostOptimized, Balanced or "
       "MaxPerformance)"},
      {"recommend --kind Serving --params 7B", "--kind: \"Serving\" is not a valid workload kind"},
      {"recommend --kind Inference --params 7 billion", "The following argument was not expected"},
      {"recommend --kind Inference --params seven", "--params: \"seven\" is not a parameter count"},
      {"recommend --kind Inference --params -7B",
       "--params: \"-7B\" is not a parameter count: it must be positive"},
      {"recommend --kind Inference --params 900T", "larger than 100T"},
      {"recommend --kind Inference", "--params: required"},
      {"recommend --params 7B",
       "--kind: required (use Training, FineTuning, Inference or BatchInference)"},
      {"recommend --kind Inference --params 7B --precision fp12",
       "--precision: \"fp12\" is not a valid precision (use fp32, fp16, bf16, fp8, int8 or int4)"},
      {"recommend --kind Inference --params 7B --tiers GPU",
       "--tiers: \"GPU\" is not a valid tier (use NVIDIA, Trainium, Inferentia or CPU)"},
      {"recommend --kind Inference --params 7B --capacity reserved", "--capacity"},
      {"recommend --kind Inference --params 1B --sharing some",
       "--sharing: \"some\" is not a valid device sharing (use Auto, None, Isolated or Any)"},
      {"recommend --kind Inference --params 1B --mig p4d.24xlarge",
       "--mig: \"p4d.24xlarge\" is not TYPE=PROFILE:N[+PROFILE:N]"},
      {"recommend --kind Inference --params 1B --mig p4d.24xlarge=1g.20gb:7",
       "--mig: the A100-40GB has no MIG profile \"1g.20gb\"; it has 1g.5gb, 1g.10gb"},
      {"recommend --kind Inference --params 1B --time-sliced g6.12xlarge=4",
       "--time-sliced: g6.12xlarge has 4 GPUs; time-sliced replicas are placed on single-GPU "
       "nodes only"},
      {"recommend --kind Inference --params 7B --instance-types g9.xlarge",
       "--instance-types: \"g9.xlarge\" is not an instance type of the catalog"},
      {"recommend --kind Inference --params 7B --latency-ms -3",
       "--latency-ms: must be a positive"},
      {"recommend --kind Inference --params 7B --max-hourly-cost abc", "--max-hourly-cost"},
      {"recommend --kind Inference --params 7B -o xml", "-o: \"xml\" is not an output format"},
      {"recommend --kind Inference --params 7B --catalog /nonexistent.yaml",
       "/nonexistent.yaml: cannot read"},
      {"analyze --kind Inference --params 7B --current g9.xlarge", "current.instanceType"},
      {"analyze --kind Inference --params 7B", "--current: required"},
      {"recommend --kind Inference --params 7B --replicas 0", "--replicas: must be at least 1"},
      {"recommend --kind Inference --params 405B --group-size -1",
       "--group-size: must be from 0 (the placement says the size) to 32"},
      {"analyze --kind Inference --params 7B --current g4dn.xlarge --current-accelerators 8",
       "g4dn.xlarge has 1 accelerators; use --current-instances"},
      {"analyze --kind Inference --params 7B --current p5e.48xlarge --current-hourly-cost 0",
       "current.hourlyCost: must be a positive"},
      {"catalog --tier TPU", "--tier: \"TPU\" is not a valid tier"},
      {"catalog -o markdown", "-o: markdown is for recommend"},
      {"run --busy-status-qps 200", "--busy-status-qps: must be above 0 and at most --qps"},
      {"run --qps 4 --busy-status-qps 5", "--busy-status-qps: must be above 0 and at most --qps"},
      {"run --busy-status-qps 0", "--busy-status-qps: must be above 0 and at most --qps"},
      {"run --region eu-central", "--region: \"eu-central\" is not an AWS region name"},
      {"run --region EU-CENTRAL-1", "--region: \"EU-CENTRAL-1\" is not an AWS region name"},
      // Lowering --qps alone passes the flag checks (the status budget
      // defaults to a fifth of it) and stops at the next step.
      {"run --qps 4 --kubeconfig /nonexistent", "kubeconfig: cannot read /nonexistent"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.arguments));
    const auto result = runCommand(binary() + " " + c.arguments);
    CAPTURE(result.err);
    CHECK(result.exitCode == 2);
    CHECK(result.err.find(c.message) != std::string::npos);
    CHECK(result.out.empty());
  }
}

TEST_CASE("recommend --family --context --concurrency: the KV cache of a serving load") {
  const std::string chat = "recommend --kind Inference --family llama-2-13b --tiers NVIDIA ";
  const auto quiet = runJson(chat + "-o json");
  CHECK(quiet.at("memory").at("parameters") == "13B");  // the family's
  CHECK_FALSE(quiet.at("memory").contains("kvCacheGiB"));
  CHECK(quiet.at("memory").at("note").get<std::string>().find("no serving load stated") !=
        std::string::npos);
  const auto loaded = runJson(chat + "--context 4096 --concurrency 16 -o json");
  const auto& memory = loaded.at("memory");
  CAPTURE(memory.dump());
  CHECK(memory.at("kvCacheGiB") == 50.0);
  CHECK(memory.at("kvCacheBytesPerToken") == 819200);
  CHECK(memory.at("contextTokens") == 4096);
  CHECK(memory.at("concurrentSequences") == 16);
  CHECK(memory.at("requiredGiB").get<double>() == doctest::Approx(75.71).epsilon(0.001));
  CHECK(loaded.at("placement").at("requiredMemoryGiB").get<double>() >=
        memory.at("requiredGiB").get<double>());
  const auto table = runCommand(binary() + " " + chat + "--context 4096 --concurrency 16");
  CHECK(table.out.find("MEMORY       24.2 GiB weights + 50.0 GiB KV cache + 1.5 GiB reserve = "
                       "75.7 GiB needed on one device") != std::string::npos);
  CHECK(table.out.find("LOAD         16 sequences of 4,096 tokens") != std::string::npos);
  for (const auto& [arguments, message] :
       {std::pair{"--concurrency 4", "--concurrency: describes a serving load: give --context too"},
        std::pair{"--context 4096 --kv-precision int8",
                  "--kv-precision: serving stacks keep the KV cache at fp16, bf16 or fp8"}}) {
    CAPTURE(std::string(arguments));
    const auto refused = runCommand(binary() + " " + chat + arguments);
    CHECK(refused.exitCode == 2);
    CHECK(refused.err.find(message) != std::string::npos);
  }
  const auto unknown = runCommand(binary() + " recommend --kind Inference --family llama-9");
  CHECK(unknown.exitCode == 2);
  CHECK(unknown.err.find("--family: \"llama-9\" is not a model family") != std::string::npos);
  // A throughput target: the replicas that carry it, and their cost.
  const auto carried = runJson(
      "recommend --kind Inference --family llama-3-8b --framework vLLM --objective "
      "CostOptimized --tiers NVIDIA --context 4096 --concurrency 8 --tokens-per-second 2000 -o "
      "json");
  CHECK(carried.at("placement").at("replicasForThroughput") == 10);
  CHECK(
      carried.at("placement").at("hourlyCostForThroughput").get<double>() ==
      doctest::Approx(carried.at("placement").at("hourlyCost").get<double>() * 10).epsilon(0.001));
  const auto noContext = runCommand(binary() + " " + chat + "--tokens-per-second 200");
  CHECK(noContext.exitCode == 2);
  CHECK(noContext.err.find("--tokens-per-second: describes a serving load") != std::string::npos);
  const auto shapeless =
      runCommand(binary() + " recommend --kind Inference --params 7B --context 4096");
  CHECK(shapeless.exitCode == 2);
  CHECK(shapeless.err.find("--context: the KV cache needs the model's shape: give --family (one "
                           "of llama-2-7b") != std::string::npos);
}

TEST_CASE("recommend --requests-per-second: the prompts' prefill, the first token, bad lengths") {
  const std::string chat =
      "recommend --kind Inference --family llama-3-8b --framework vLLM --tiers NVIDIA "
      "--instance-types g6e.xlarge --context 4096 --concurrency 16 ";
  const auto requests =
      runJson(chat + "--requests-per-second 2 --prompt-tokens 3000 --output-tokens 200 -o json");
  const auto tokens = runJson(chat + "--tokens-per-second 400 -o json");
  const auto& served = requests.at("placement");
  CAPTURE(served.dump());
  // The same 400 output tokens a second; the 3,000-token prompts cost a
  // replica some of them.
  CHECK(served.at("tokensPerSecondPerReplica").get<double>() <
        tokens.at("placement").at("tokensPerSecondPerReplica").get<double>());
  CHECK(served.at("timeToFirstTokenMs").get<double>() > 100);
  CHECK_FALSE(tokens.at("placement").contains("timeToFirstTokenMs"));
  const auto table = runCommand(binary() + " " + chat +
                                "--requests-per-second 2 --prompt-tokens 3000 --output-tokens 200");
  CHECK(table.exitCode == 0);
  CHECK(table.out.find("FIRST TOKEN  about 333 ms for the mean prompt") != std::string::npos);
  CHECK(table.out.find("2 requests a second of 3,000 prompt and 200 output tokens (400 tokens a "
                       "second)") != std::string::npos);
  for (const auto& [arguments, message] :
       {std::pair{"--requests-per-second 2 --output-tokens 200",
                  "--prompt-tokens: required with --requests-per-second"},
        std::pair{"--tokens-per-second 400 --requests-per-second 2 --prompt-tokens 10 "
                  "--output-tokens 10",
                  "--requests-per-second: give the throughput target once"},
        std::pair{"--requests-per-second 2 --prompt-tokens 4000 --output-tokens 200",
                  "--prompt-tokens: 4000 prompt and 200 output tokens on average exceed "
                  "--context (4096)"}}) {
    CAPTURE(std::string(arguments));
    const auto refused = runCommand(binary() + " " + chat + arguments);
    CHECK(refused.exitCode == 2);
    CHECK_MESSAGE(refused.err.find(message) != std::string::npos, refused.err);
  }
}

TEST_CASE("recommend --mig and --time-sliced: the share a workload would take of shared nodes") {
  const std::string speech = "recommend --kind Inference --params 1.55B --architecture Speech ";
  // No shared nodes: a whole device.
  const auto whole = runJson(speech + "-o json");
  CHECK_FALSE(whole.at("placement").contains("migProfile"));
  CHECK_FALSE(whole.contains("assumedCluster"));

  const auto slice = runJson(speech + "--mig p4d.24xlarge=1g.5gb:7 -o json");
  const auto& placement = slice.at("placement");
  CAPTURE(placement.dump());
  CHECK(placement.at("instanceType") == "p4d.24xlarge");
  CHECK(placement.at("migProfile") == "1g.5gb");
  // A 1/56 share of the node, against the whole device it would take alone.
  CHECK(placement.at("hourlyCost").get<double>() ==
        doctest::Approx(placement.at("nodeHourlyCost").get<double>() / 56).epsilon(0.001));
  CHECK(placement.at("wholeDeviceHourlyCost").get<double>() ==
        whole.at("placement").at("hourlyCost").get<double>());
  CHECK(slice.at("scheduling").at("resources").at("limits").at("nvidia.com/mig-1g.5gb") == "1");
  CHECK(slice.at("reason").get<std::string>().find(
            "isolated from the other slices' memory and faults") != std::string::npos);
  CHECK(slice.at("assumedCluster")
            .get<std::string>()
            .find("one p4d.24xlarge, 8 A100-40GB each cut into 7 MIG 1g.5gb (1 instance taken)") !=
        std::string::npos);
  // Training is never shared unless asked.
  const auto training =
      runJson("recommend --kind FineTuning --params 350M --mig p4d.24xlarge=1g.5gb:7 -o json");
  CHECK_FALSE(training.at("placement").contains("migProfile"));

  // Time-slicing only where sharing without isolation is allowed.
  const auto isolated = runJson(speech + "--time-sliced g6.xlarge=4 -o json");
  CHECK_FALSE(isolated.at("placement").contains("timeSlices"));
  const auto sliced = runJson(speech + "--time-sliced g6.xlarge=4 --sharing Any -o json");
  CAPTURE(sliced.dump());
  CHECK(sliced.at("placement").at("timeSlices") == 4);
  CHECK(sliced.at("scheduling").at("resources").at("limits").at("nvidia.com/gpu.shared") == "1");
  CHECK(sliced.at("reason").get<std::string>().find(
            "time-slicing isolates neither memory nor faults") != std::string::npos);

  const auto table = runCommand(binary() + " " + speech + "--mig p4d.24xlarge=1g.5gb:7");
  CHECK(table.exitCode == 0);
  CHECK(table.out.find("PLACEMENT    p4d.24xlarge: a MIG 1g.5gb slice of 1 A100-40GB") !=
        std::string::npos);
  CHECK(table.out.find("WHOLE DEVICE ") != std::string::npos);
  CHECK(table.out.find("CLUSTER      what-if: Karpenter may launch any type on demand") !=
        std::string::npos);
}

TEST_CASE("recommend -f reads GpuWorkload manifests, several per file") {
  const auto results =
      runJson("recommend -f " + repo() + "/config/samples/gpuworkloads.yaml -o json");
  REQUIRE(results.is_array());
  CHECK(results.size() >= 3);
  for (const auto& result : results) {
    CAPTURE(result.dump());
    CHECK(result.at("workload").get<std::string>().find('/') != std::string::npos);
    CHECK(result.at("placement").is_object());
  }

  TempDir dir;
  const auto bad = dir.write("bad.yaml", R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: ok, namespace: ml}
spec:
  targetRef: {name: a}
  workload: {kind: Inference}
  model: {parameters: 7B}
---
apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: broken, namespace: ml}
spec:
  targetRef: {name: b}
  workload: {kind: Inference}
  model: {parameters: 7B, precision: fp12}
)");
  const auto result = runCommand(binary() + " recommend -f " + bad + " -o json");
  CHECK(result.exitCode == 2);
  CHECK(result.err.find("document 2 (ml/broken): spec.model.precision") != std::string::npos);
  CHECK(result.out.empty());  // nothing half-written
}

TEST_CASE("recommend -f reads the targets next to their GpuWorkloads, as the operator reads them") {
  // The samples: seed 002's training Job, a fine-tune Job, a StatefulSet.
  const auto samples = runJson("recommend -f " + repo() + "/config/samples/jobs.yaml -o json");
  REQUIRE(samples.size() == 3);
  CHECK(samples[0]["workload"] == "research/llama-training");
  CHECK(samples[0]["placement"]["instanceType"] == "trn1.32xlarge");
  CHECK(samples[0]["placement"]["acceleratorCount"] == 16);  // as the Job itself asks

  // A Job's parallelism is its replicas; its pod template's own cpu and
  // memory keep it off nodes that cannot hold them. The same GpuWorkload
  // without the Job in the file sizes for one pod and nothing of its own.
  TempDir dir;
  const std::string workload = R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: tune, namespace: ml}
spec:
  targetRef: {kind: Job, name: tune}
  workload: {kind: FineTuning}
  model: {parameters: 7B, precision: bf16}
  constraints: {tiers: [NVIDIA]}
)";
  const std::string job = R"(apiVersion: batch/v1
kind: Job
metadata: {name: tune, namespace: ml}
spec:
  parallelism: 3
  template:
    spec:
      containers:
      - name: tune
        resources:
          requests: {cpu: "30", memory: 200Gi}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: unrelated, namespace: ml}
)";
  // One workload answers with one object.
  const auto alone = runJson("recommend -f " + dir.write("alone.yaml", workload) + " -o json");
  const auto together =
      runJson("recommend -f " + dir.write("together.yaml", workload + "---\n" + job) + " -o json");
  CHECK(alone["placement"]["replicas"] == 1);
  CHECK(together["placement"]["replicas"] == 3);
  CHECK(together["placement"]["instanceType"] != alone["placement"]["instanceType"]);
  // A Job of another namespace is not this GpuWorkload's.
  std::string other = job;
  other.replace(other.find("namespace: ml"), 13, "namespace: other");
  const auto elsewhere = runJson(
      "recommend -f " + dir.write("elsewhere.yaml", workload + "---\n" + other) + " -o json");
  CHECK(elsewhere["placement"]["replicas"] == 1);
}

TEST_CASE("-o yaml reads back as the same document as -o json") {
  const std::string arguments = "recommend --kind FineTuning --params 7B --objective Balanced";
  const auto asJson = runJson(arguments + " -o json");
  const auto yamlRun = runCommand(binary() + " " + arguments + " -o yaml");
  REQUIRE(yamlRun.exitCode == 0);
  auto parsed = parseYaml(yamlRun.out, "output");
  REQUIRE(parsed.ok());
  CHECK(*parsed == asJson);
}

TEST_CASE("analyze: current cost, recommendation and savings; precision honoured") {
  // One H100 of a p5.48xlarge: the team pays for the whole node.
  const auto fp16 = runJson(
      "analyze --current p5.48xlarge --current-accelerators 1 --kind Inference --params 13B "
      "--precision fp16 --hours 720 -o json");
  CHECK(fp16.at("current").at("monthlyCost").get<double>() == doctest::Approx(55.04 * 720));
  CHECK(
      fp16.at("current").at("costNote").get<std::string>().find("1 of 8 H100 on one p5.48xlarge") ==
      0);
  CHECK(fp16.at("recommended").is_object());
  const double saving = fp16.at("monthlySavings");
  CHECK(saving == doctest::Approx(fp16.at("current").at("monthlyCost").get<double>() -
                                  fp16.at("recommended").at("monthlyCost").get<double>()));
  CHECK(fp16.at("savingsPercent").get<double>() ==
        doctest::Approx(saving / fp16.at("current").at("monthlyCost").get<double>() * 100)
            .epsilon(0.01));
  // On shared nodes (AcceleratorShare) it pays one eighth.
  TempDir dir;
  const auto shared = dir.write("shared.yaml", R"(apiVersion: gpuplacement.io/v1alpha1
kind: PlacementPolicy
metadata: {name: shared}
spec: {costModel: AcceleratorShare}
)");
  const auto share = runJson(
      "analyze --current p5.48xlarge --current-accelerators 1 --kind Inference --params 13B "
      "--hours 720 -o json --policy " +
      shared);
  CHECK(share.at("current").at("monthlyCost").get<double>() == doctest::Approx(55.04 / 8 * 720));

  // The analyzer in seed 004 ignores precision; here int8 halves the memory.
  const auto int8 = runJson(
      "analyze --current p5.48xlarge --current-accelerators 1 --kind Inference --params 13B "
      "--precision int8 --hours 720 -o json");
  CHECK(int8.at("memory").at("requiredGiB").get<double>() ==
        doctest::Approx(fp16.at("memory").at("requiredGiB").get<double>() / 2).epsilon(0.01));

  // Accelerators are counted with a ceiling: 29.1 GiB on 22.35 GiB A10Gs is
  // 2 (seed 004's floor + 1 also says 2 here, but 3 for 44.7 GiB, where the
  // ceiling says 2). A lone replica then uses all four it pays for.
  const auto a10g = runJson(
      "analyze --current g5.12xlarge --current-accelerators 4 --kind Inference --params 13B "
      "--precision fp16 --instance-types g5.12xlarge -o json");
  CHECK(a10g.at("recommended").at("neededAccelerators") == 2);
  CHECK(a10g.at("recommended").at("acceleratorCount") == 4);
  const auto l40s = runJson(
      "recommend --kind Inference --params 31B --precision int8 --instance-types g6e.12xlarge -o "
      "json");
  CHECK(l40s.at("memory").at("requiredGiB").get<double>() > 34.6);
  CHECK(l40s.at("placement").at("neededAccelerators") == 1);
}

TEST_CASE("analyze --scenarios runs seed 004's seven scenarios") {
  const std::string file = repo() + "/config/examples/seed004-scenarios.yaml";
  const auto results = runJson("analyze --scenarios " + file + " -o json");
  REQUIRE(results.size() == 7);
  for (const auto& result : results) {
    CAPTURE(result.at("id").get<std::string>());
    REQUIRE(result.at("recommended").is_object());
    CHECK(result.at("current").at("monthlyCost").get<double>() > 0);
    CHECK(result.contains("savingsPercent"));
  }
  // The one scenario whose current setup cannot hold the model.
  CHECK(results[2].at("id") == "training_large_p4d");
  CHECK(results[2].at("current").at("fitsModel") == false);
  CHECK(results[6].at("id") == "production_serving_g4dn");
  CHECK(results[6].at("recommended").at("acceleratorCount") == 1);
}

TEST_CASE("analyze --scenarios applies the global flags, or refuses them") {
  const std::string file = repo() + "/config/examples/seed004-scenarios.yaml";
  const auto plain = runJson("analyze --scenarios " + file + " -o json");
  const auto nvidia = runJson("analyze --scenarios " + file + " --tiers NVIDIA -o json");
  const auto hours = runJson("analyze --scenarios " + file + " --hours 100 -o json");
  const auto fastest =
      runJson("analyze --scenarios " + file + " --objective MaxPerformance -o json");
  bool tiersChanged = false;
  for (std::size_t i = 0; i < nvidia.size(); ++i) {
    CAPTURE(nvidia[i].at("id").get<std::string>());
    CHECK(nvidia[i].at("recommended").at("tier") == "NVIDIA");
    tiersChanged = tiersChanged || plain[i].at("recommended").at("tier") != "NVIDIA";
    CHECK(hours[i].at("hoursPerMonth") == 100);
    CHECK(
        hours[i].at("current").at("monthlyCost").get<double>() ==
        doctest::Approx(hours[i].at("current").at("hourlyCost").get<double>() * 100).epsilon(1e-3));
    CHECK(fastest[i].at("recommended").at("performance").get<double>() >=
          plain[i].at("recommended").at("performance").get<double>());
  }
  CHECK(tiersChanged);
  // A budget below every placement: nothing placed, exit 1.
  const auto broke =
      runCommand(binary() + " analyze --scenarios " + file + " --max-hourly-cost 0.01 -o json");
  CHECK(broke.exitCode == 1);
  CHECK(broke.out.find("above maxHourlyCost $0.01/h") != std::string::npos);
  // Flags that describe one model or one setup are refused.
  for (const char* flag : {"--params 7B", "--kind Inference", "--latency-ms 50",
                           "--current-accelerators 2", "--current-hourly-cost 3"}) {
    CAPTURE(std::string(flag));
    const auto refused = runCommand(binary() + " analyze --scenarios " + file + " " + flag);
    CHECK(refused.exitCode == 2);
    CHECK(refused.err.find("not allowed with --scenarios") != std::string::npos);
  }
}

TEST_CASE("analyze a setup without a catalog price: unknown, or what the team pays") {
  const std::string base =
      "analyze --current p5e.48xlarge --current-accelerators 2 --kind Inference --params 140B "
      "--precision int8 --hours 720 -o json";
  const auto unknown = runJson(base);
  CHECK(unknown.at("current").at("monthlyCost").is_null());
  CHECK(
      unknown.at("current").at("costNote").get<std::string>().find("give --current-hourly-cost") !=
      std::string::npos);
  CHECK(unknown.at("savingsPercent").is_null());
  CHECK(unknown.at("recommended").is_object());
  // A Capacity Block at $43.26/h for the node.
  const auto known = runJson(base + " --current-hourly-cost 43.26");
  CHECK(known.at("current").at("monthlyCost").get<double>() == doctest::Approx(43.26 * 720));
  CHECK(known.at("savingsPercent").get<double>() ==
        doctest::Approx((43.26 * 720 - known.at("recommended").at("monthlyCost").get<double>()) /
                        (43.26 * 720) * 100)
            .epsilon(0.01));
}

TEST_CASE("--policy overrides prices: the answer follows the catalog, not assumptions") {
  TempDir dir;
  const auto policy = dir.write("policy.yaml", R"(apiVersion: gpuplacement.io/v1alpha1
kind: PlacementPolicy
metadata: {name: default}
spec:
  prices:
  - {instanceType: inf2.xlarge, onDemand: "2.00"}
  - {instanceType: inf2.8xlarge, onDemand: "2.00"}
)");
  const auto before =
      runJson("recommend --kind Inference --params 7B --objective CostOptimized -o json");
  const auto after =
      runJson("recommend --kind Inference --params 7B --objective CostOptimized -o json --policy " +
              policy);
  CHECK(before.at("placement").at("instanceType") == "inf2.xlarge");
  CHECK(after.at("placement").at("instanceType") == "g6.xlarge");

  const auto invalid = dir.write("invalid.yaml", R"(apiVersion: gpuplacement.io/v1alpha1
kind: PlacementPolicy
metadata: {name: default}
spec:
  prices:
  - {instanceType: g4dn.xlarge, onDemand: "-2"}
)");
  const auto refused =
      runCommand(binary() + " recommend --kind Inference --params 7B --policy " + invalid);
  CHECK(refused.exitCode == 2);
  CHECK(refused.err.find("spec.prices[0].onDemand") != std::string::npos);
}

TEST_CASE("catalog lists instance types, filtered by tier") {
  const auto listed = runJson("catalog --tier inferentia -o json");
  CHECK(listed.at("prices").at("region") == "us-east-1");
  const auto& rows = listed.at("instances");
  REQUIRE(rows.size() == 8);  // inf1 and inf2, four sizes each
  for (const auto& row : rows) {
    CHECK(row.at("tier") == "Inferentia");
    CHECK(row.at("instanceType").get<std::string>().rfind("inf", 0) == 0);
  }
  const auto table = runCommand(binary() + " catalog");
  CHECK(table.exitCode == 0);
  CHECK(table.out.find("p6-b200.48xlarge") != std::string::npos);
}

TEST_CASE("every output with a price says its region and date, read from the catalog") {
  // What config/catalog.yaml says, not a string this test repeats.
  const auto catalogText = base::readTextFile(repo() + "/config/catalog.yaml");
  REQUIRE(catalogText.ok());
  const auto catalog = parseYaml(*catalogText, "catalog");
  REQUIRE(catalog.ok());
  const std::string region = catalog->at("region");
  const std::string asOf = catalog->at("pricesAsOf");
  CHECK(asOf == "2026-02-09");  // the date the README and the chart quote
  const std::string basis = region + " prices of " + asOf + " (the catalog's)";
  const std::string recommend = "recommend --kind Inference --params 7B --objective CostOptimized";
  const std::string analyze =
      "analyze --current p5.48xlarge --current-accelerators 1 --kind Inference --params 13B";
  const std::string scenarios =
      "analyze --scenarios " + repo() + "/config/examples/seed004-scenarios.yaml";

  for (const std::string& command : {recommend, analyze, scenarios, std::string("catalog")}) {
    CAPTURE(command);
    const auto text = runCommand(binary() + " " + command);
    CHECK(text.exitCode == 0);
    CHECK(text.out.find("\nPRICES       " + basis + "\n") != std::string::npos);
    const auto answer = runJson(command + " -o json");
    const auto& prices = answer.is_array() ? answer.at(0).at("prices") : answer.at("prices");
    CHECK(prices.at("region") == region);
    CHECK(prices.at("asOf") == asOf);
    CHECK(prices.at("source") == catalog->at("pricesSource"));
    CHECK(prices.at("policyPricedTypes") == json::array());
  }
  const auto markdown = runCommand(binary() + " " + recommend + " -o markdown");
  CHECK(markdown.out.find("\nPrices: " + basis + ": " +
                          catalog->at("pricesSource").get<std::string>() + ".\n") !=
        std::string::npos);

  // A PlacementPolicy's prices are named as its own.
  TempDir dir;
  const auto policy = dir.write("policy.yaml", R"(apiVersion: gpuplacement.io/v1alpha1
kind: PlacementPolicy
metadata: {name: default}
spec:
  prices:
  - {instanceType: inf2.xlarge, onDemand: "2.00"}
  - {instanceType: g6.xlarge, spot: "0.30"}
)");
  const auto overridden = runCommand(binary() + " " + recommend + " --policy " + policy);
  CHECK(overridden.out.find(basis + "; the PlacementPolicy's own for g6.xlarge, inf2.xlarge\n") !=
        std::string::npos);
  CHECK(runJson(recommend + " -o json --policy " + policy).at("prices").at("policyPricedTypes") ==
        json::array({"g6.xlarge", "inf2.xlarge"}));

  // Another catalog says its own region and date.
  std::string text = *catalogText;
  const auto at = text.find("\nregion: " + region + "\n");
  REQUIRE(at != std::string::npos);
  text.replace(at, region.size() + 10, "\nregion: eu-west-1\n");
  const auto own = dir.write("catalog.yaml", text);
  CHECK(runCommand(binary() + " catalog --catalog " + own)
            .out.find("\nPRICES       eu-west-1 prices of " + asOf + " (the catalog's)\n") !=
        std::string::npos);
}

TEST_CASE("docs/decisions.md is what the binary answers, thirty workloads with rationales") {
  const auto check =
      runCommand("bash " + repo() + "/docs/generate-decisions --check " + binary() + " 2>&1");
  CAPTURE(check.out);
  CHECK(check.exitCode == 0);

  const auto markdown = runCommand(binary() + " recommend -f " + repo() +
                                   "/config/examples/decisions.yaml -o markdown");
  CHECK(markdown.exitCode == 0);
  int rows = 0;
  std::size_t start = 0;
  while ((start = markdown.out.find("\n| ", start)) != std::string::npos) {
    ++start;
    ++rows;
  }
  CHECK(rows == 30);  // the header line starts the output, without a newline before it
  const auto results =
      runJson("recommend -f " + repo() + "/config/examples/decisions.yaml -o json");
  REQUIRE(results.size() == 30);
  for (const auto& result : results) {
    CAPTURE(result.at("workload").get<std::string>());
    CHECK(result.at("placement").is_object());
    // What the table shows is what the decision says.
    const auto& placement = result.at("placement");
    CHECK(markdown.out.find(placement.at("costNote").get<std::string>()) != std::string::npos);
  }

  TempDir dir;
  const auto bad = dir.write("replicas.yaml", R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: w, namespace: n, annotations: {gpuplacement.io/replicas: "zero"}}
spec:
  targetRef: {name: w}
  workload: {kind: Inference}
  model: {parameters: 7B}
)");
  const auto refused = runCommand(binary() + " recommend -f " + bad);
  CHECK(refused.exitCode == 2);
  CHECK(refused.err.find("gpuplacement.io/replicas: must be a whole number") != std::string::npos);
}

}  // namespace gpuplacement::app
