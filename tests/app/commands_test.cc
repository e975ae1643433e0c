// The command line decides from the intent the operator would decide from:
// a manifest's GpuWorkload and its target read by core::intentOf, with
// only --replicas and the replicas annotation over it.
#include "app/commands.h"

#include <doctest/doctest.h>

#include "base/io/yaml_json.h"
#include "core/intent/workload.h"
#include "support/engine_fixture.h"
#include "support/temp_dir.h"

namespace gpuplacement::app {
namespace {

constexpr const char* kChatWorkload = R"(apiVersion: gpuplacement.io/v1alpha1
kind: GpuWorkload
metadata: {name: chat, namespace: ml}
spec:
  targetRef: {name: chat}
  workload: {kind: Inference}
  model: {parameters: 7B}
)";

constexpr const char* kChatDeployment = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: chat, namespace: ml}
spec:
  replicas: %REPLICAS%
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 2}}
  template:
    spec:
      containers:
      - name: server
        resources: {requests: {cpu: "3", memory: 20Gi}}
)";

std::string deployment(int replicas) {
  std::string text = kChatDeployment;
  text.replace(text.find("%REPLICAS%"), 10, std::to_string(replicas));
  return text;
}

// What the operator reconciles from: the same two documents, read by core.
core::WorkloadIntent operatorIntent(const std::string& workload, const std::string& target) {
  const auto& catalog = *testing::shippedCatalog();
  auto spec = core::parseGpuWorkloadSpec((*base::parseYaml(workload, "w"))["spec"], catalog);
  REQUIRE(spec.ok());
  const auto state =
      core::targetFromJson(core::TargetKind::Deployment, *base::parseYaml(target, "t"));
  return core::intentOf(*spec, &state);
}

TEST_CASE("a manifest's intent is the operator's, its target read the same way") {
  testing::TempDir dir;
  const auto& catalog = *testing::shippedCatalog();
  for (int replicas : {0, 1, 3}) {
    CAPTURE(replicas);
    const auto file = dir.write("bundle-" + std::to_string(replicas) + ".yaml",
                                std::string(kChatWorkload) + "---\n" + deployment(replicas));
    const auto intents = intentsFromManifests(file, catalog, std::nullopt);
    REQUIRE(intents.ok());
    REQUIRE(intents->size() == 1);
    const auto& cli = (*intents)[0].intent;
    const auto expected = operatorIntent(kChatWorkload, deployment(replicas));
    CHECK(cli == expected);
    CHECK(cli.replicas == replicas);            // a Deployment scaled to zero runs none
    CHECK(cli.surge == std::min(2, replicas));  // maxSurge, at most the replicas
    CHECK(cli.podCpu == doctest::Approx(3));
    CHECK(cli.podMemoryGiB == doctest::Approx(20));
  }
}

TEST_CASE("--replicas is the one thing the command line sets over the target") {
  testing::TempDir dir;
  const auto file = dir.write("bundle.yaml", std::string(kChatWorkload) + "---\n" + deployment(3));
  const auto intents = intentsFromManifests(file, *testing::shippedCatalog(), 5);
  REQUIRE(intents.ok());
  auto expected = operatorIntent(kChatWorkload, deployment(3));
  expected.replicas = 5;
  CHECK((*intents)[0].intent == expected);
}

TEST_CASE("without its target in the file, a GpuWorkload is sized for one pod of its own") {
  testing::TempDir dir;
  const auto file = dir.write("alone.yaml", kChatWorkload);
  const auto intents = intentsFromManifests(file, *testing::shippedCatalog(), std::nullopt);
  REQUIRE(intents.ok());
  const auto& catalog = *testing::shippedCatalog();
  auto spec = core::parseGpuWorkloadSpec((*base::parseYaml(kChatWorkload, "w"))["spec"], catalog);
  REQUIRE(spec.ok());
  CHECK((*intents)[0].intent == core::intentOf(*spec, nullptr));
}

}  // namespace
}  // namespace gpuplacement::app
