// The packed cache entries give back exactly what projecting the object
// gives, for every shape a GpuWorkload or Deployment can take.
#include "app/cached_objects.h"

#include <fstream>
#include <sstream>

#include <doctest/doctest.h>

#include "app/packing.h"
#include "app/placement_config.h"
#include "base/json_access.h"
#include "support/paths.h"

namespace gpuplacement::app {
namespace {

using json = nlohmann::json;

json fixture(const std::string& name) {
  std::ifstream in(testing::repoRoot() + "/bench/fixtures/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

// The reference: the object projected straight from its JSON, field by
// field, with no packing in between.
core::WorkloadObject projectWorkload(const json& object, const core::Catalog& catalog) {
  core::WorkloadObject workload;
  const auto& metadata = base::memberOf(object, "metadata");
  workload.uid = base::stringMember(metadata, "uid");
  workload.generation = base::integerMember(metadata, "generation");
  workload.deleting = base::memberOf(metadata, "deletionTimestamp").is_string();
  if (const auto& finalizers = base::memberOf(metadata, "finalizers"); finalizers.is_array()) {
    for (const auto& finalizer : finalizers) {
      if (finalizer.is_string()) {
        workload.finalizers.push_back(finalizer.get<std::string>());
      }
    }
  }
  const auto& spec = base::memberOf(object, "spec");
  if (const auto& name = base::memberOf(base::memberOf(spec, "targetRef"), "name");
      name.is_string()) {
    workload.targetName = name.get<std::string>();
  }
  if (const auto& policy = base::memberOf(base::memberOf(spec, "policyRef"), "name");
      policy.is_string()) {
    workload.policyName = policy.get<std::string>();
  }
  auto parsed = core::parseGpuWorkloadSpec(spec, catalog);
  if (parsed) {
    workload.spec = std::move(parsed).value();
  } else {
    workload.specError = parsed.error();
  }
  const auto& status = base::memberOf(object, "status");
  workload.status = core::workloadStatusFromJson(status);
  workload.statusHash = core::statusDigest(status);
  return workload;
}

void checkSame(const core::WorkloadObject& a, const core::WorkloadObject& b) {
  CHECK(a.uid == b.uid);
  CHECK(a.generation == b.generation);
  CHECK(a.deleting == b.deleting);
  CHECK(a.finalizers == b.finalizers);
  CHECK(a.spec == b.spec);
  CHECK(a.specError.describe() == b.specError.describe());
  CHECK(a.targetName == b.targetName);
  CHECK(a.policyName == b.policyName);
  CHECK(a.status == b.status);
  CHECK(a.statusHash == b.statusHash);
}

}  // namespace

TEST_CASE("Packer and Unpacker: integers of every size and sign, strings, past the end") {
  Packer out;
  const std::int64_t numbers[] = {0,   1,   -1,   63,        -64,       64,       127,
                                  128, 300, -300, 1LL << 40, INT64_MAX, INT64_MIN};
  for (auto n : numbers) {
    out.integer(n);
  }
  out.string("");
  out.string(std::string(200, 'x'));
  out.string("nvidia.com/gpu");
  out.boolean(true);
  const auto bytes = out.take();
  Unpacker in(bytes);
  for (auto n : numbers) {
    CHECK(in.integer() == n);
  }
  CHECK(in.string().empty());
  CHECK(in.string() == std::string(200, 'x'));
  CHECK(in.string() == "nvidia.com/gpu");
  CHECK(in.boolean());
  CHECK(in.integer() == 0);  // past the end: zeros and empty strings
  CHECK(in.string().empty());
  Unpacker truncated(std::string_view(bytes).substr(0, bytes.size() - 5));
  for (int i = 0; i < 20; ++i) {
    truncated.string();  // never reads out of bounds
  }
}

TEST_CASE("Packer and Unpacker: short forms give back exactly the text, or keep the text") {
  const Vocabulary vocabulary{"Ready", "nvidia.com/gpu"};
  struct Case {
    void (Packer::*pack)(std::string_view);
    std::string (Unpacker::*unpack)();
    const char* text;
    std::size_t packedSize;  // what the short form saves, when there is one
  };
  const Case cases[] = {
      // words: an index when the vocabulary has it, the text otherwise
      {&Packer::word, &Unpacker::word, "Ready", 1},
      {&Packer::word, &Unpacker::word, "nvidia.com/gpu", 1},
      {&Packer::word, &Unpacker::word, "ready", 6},
      {&Packer::word, &Unpacker::word, "", 1},
      // timestamps: seconds when the text reads back the same, the text otherwise
      {&Packer::timestamp, &Unpacker::timestamp, "2026-11-22T06:08:52Z", 5},
      {&Packer::timestamp, &Unpacker::timestamp, "1970-01-01T00:00:00Z", 1},
      {&Packer::timestamp, &Unpacker::timestamp, "2026-11-22T06:08:52.5Z", 23},
      {&Packer::timestamp, &Unpacker::timestamp, "2026-11-22T07:08:52+01:00", 26},
      {&Packer::timestamp, &Unpacker::timestamp, "1969-12-31T23:59:59Z", 21},  // before 1970
      {&Packer::timestamp, &Unpacker::timestamp, "yesterday", 10},
      {&Packer::timestamp, &Unpacker::timestamp, "", 1},
      // UIDs: 16 bytes in the canonical form, the text otherwise
      {&Packer::uid, &Unpacker::uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", 17},
      {&Packer::uid, &Unpacker::uid, "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0", 37},
      {&Packer::uid, &Unpacker::uid, "0f1e2d3c4b5a69788796a5b4c3d2e1f0", 33},
      {&Packer::uid, &Unpacker::uid, "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg", 37},
      {&Packer::uid, &Unpacker::uid, "", 1},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.text));
    Packer out(vocabulary);
    (out.*c.pack)(c.text);
    const auto bytes = out.take();
    CHECK(bytes.size() == c.packedSize);
    Unpacker in(bytes, vocabulary);
    CHECK((in.*c.unpack)() == c.text);
  }
}

TEST_CASE("a packed GpuWorkload unpacks to its projection") {
  auto engine = loadEngine({});
  REQUIRE(engine.ok());
  const auto& catalog = (*engine)->catalog();
  const json placed = fixture("gpuworkload.json");

  json fresh = placed;  // just created: no status, no finalizer
  fresh.erase("status");
  fresh["metadata"].erase("finalizers");
  json invalid = placed;
  invalid["spec"]["model"]["parameters"] = "a lot";
  json deleting = placed;
  deleting["metadata"]["deletionTimestamp"] = "2026-11-22T03:00:00Z";
  deleting["metadata"]["finalizers"] = {"example.com/other", "gpuplacement.io/finalizer"};
  json otherPolicy = placed;
  otherPolicy["spec"]["policyRef"] = {{"name", "research"}};
  otherPolicy["spec"]["scaling"] = {{"groupSize", "Set"}};
  otherPolicy["spec"]["containers"] = {"server", "sidecar"};
  otherPolicy["spec"]["constraints"] = {
      {"tiers", {"NVIDIA", "Inferentia"}}, {"maxHourlyCost", "3.50"}, {"capacityType", "Spot"}};
  json served = placed;  // a family, a stated shape and a serving load
  served["spec"]["model"] = {{"family", "llama-2-13b"},
                             {"shape", {{"layers", 41}, {"kvHeads", 8}, {"headDim", 128}}}};
  served["spec"]["workload"]["serving"] = {{"maxContextTokens", 4096},
                                           {"concurrentSequences", 16},
                                           {"kvCachePrecision", "fp8"},
                                           {"tokensPerSecond", 200}};
  json moved = placed;
  moved["status"]["lastReplacement"] = {{"from", "g4dn.xlarge"},
                                        {"to", "g4dn.2xlarge"},
                                        {"monthlySaving", "-12.5"},
                                        {"time", "2026-11-22T03:00:00Z"},
                                        {"reason", "the price went up"}};
  moved["status"]["applied"]["replacement"] = true;
  json fellBack = moved;  // the fallback's memory lives in the status
  fellBack["status"]["unavailable"] = {{{"instanceType", "g6.xlarge"},
                                        {"capacityType", "OnDemand"},
                                        {"since", "2026-11-22T03:00:00Z"},
                                        {"until", "2026-11-22T03:30:00Z"},
                                        {"message", "0/4 nodes are available"}},
                                       {{"instanceType", "p5.48xlarge"},
                                        {"capacityType", "Spot"},
                                        {"since", "2026-11-22T03:01:00Z"},
                                        {"until", "2026-11-22T03:31:00Z"},
                                        {"message", ""}}};

  json handWritten = placed;  // forms the short encodings do not cover, kept as they are
  handWritten["metadata"]["uid"] = "NOT-A-CANONICAL-UID";
  handWritten["status"]["conditions"][0]["lastTransitionTime"] = "2026-11-22T03:00:00.25Z";
  handWritten["status"]["conditions"][0]["reason"] = "SomeoneElsesReason";
  handWritten["status"]["applied"]["time"] = "2026-11-22T04:00:00+01:00";
  handWritten["spec"]["extension"] = {{"ratio", 0.75},
                                      {"big", 18446744073709551615ULL},
                                      {"none", nullptr},
                                      {"list", {1, "two", false}}};

  const std::pair<const char*, json> cases[] = {
      {"placed", placed},   {"fresh", fresh},        {"hand-written", handWritten},
      {"invalid", invalid}, {"deleting", deleting},  {"other policy", otherPolicy},
      {"moved", moved},     {"fell back", fellBack}, {"served", served}};
  for (const auto& [name, object] : cases) {
    CAPTURE(std::string(name));
    const auto packed = packWorkload(object, catalog);
    const auto projected = projectWorkload(object, catalog);
    checkSame(packed.unpack(), projected);
    CHECK(packed.generation == projected.generation);
    CHECK(packed.deleting == projected.deleting);
    CHECK(packed.targetName == projected.targetName);
    CHECK(packed.policyName == projected.policyName);
    CHECK(packed.movedByReplacement ==
          (projected.status.applied && projected.status.applied->replacement));
    CHECK(packed.packed.size() < 700);
  }
  CHECK(packWorkload(fellBack, catalog).unpack().status.unavailable.size() == 2);
  CHECK_FALSE(packWorkload(invalid, catalog).unpack().spec.has_value());
  CHECK(packWorkload(placed, catalog).finalizersDigest !=
        packWorkload(fresh, catalog).finalizersDigest);
  CHECK(packWorkload(placed, catalog).finalizersDigest ==
        packWorkload(invalid, catalog).finalizersDigest);
}

TEST_CASE("a packed custom kind unpacks whole: its pod sets, their templates, its record") {
  // A LeaderWorkerSet the operator placed: the record lists the pod sets
  // it placed, which the next plan reads to know what is its own, and the
  // group size it wrote in place of the team's.
  const auto object = json::parse(R"({
    "metadata": {"uid": "u1", "generation": 2, "annotations": {"gpuplacement.io/owned-fields":
      "{\"nodeSelector\":{\"karpenter.k8s.aws/instance-gpu-name\":\"a10g\"},\"podSets\":[\"leader\",\"worker\"],\"groupSize\":{\"pointer\":\"/spec/leaderWorkerTemplate/size\",\"set\":2,\"was\":1},\"resources\":{\"vllm\":{\"nvidia.com/gpu\":\"2\"}},\"workload\":\"w\"}"}},
    "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2,
      "leaderTemplate": {"metadata": {"labels": {"role": "leader"}}, "spec": {
        "nodeSelector": {"karpenter.k8s.aws/instance-gpu-name": "a10g"},
        "containers": [{"name": "vllm", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}},
      "workerTemplate": {"spec": {
        "nodeSelector": {"karpenter.k8s.aws/instance-gpu-name": "a10g"},
        "containers": [{"name": "vllm", "resources": {"limits": {"nvidia.com/gpu": "2"}}}]}}}},
    "status": {"replicas": 1, "readyReplicas": 1, "updatedReplicas": 1}})");
  const auto state = core::targetFromJson(core::TargetKind::LeaderWorkerSet, object);
  REQUIRE(state.ownership.fields.podSets == std::vector<std::string>{"leader", "worker"});
  REQUIRE(state.ownership.fields.groupSize.has_value());
  CHECK(state.groups.sizePointer == "/spec/leaderWorkerTemplate/size");
  const auto unpacked = packTarget(state).unpack();
  CHECK(unpacked.ownership == state.ownership);
  CHECK(unpacked.podSets == state.podSets);
  REQUIRE(unpacked.podSetTemplates.size() == 2);
  CHECK(unpacked.podSetTemplates[1].raw == state.podSetTemplates[1].raw);
  CHECK(unpacked == state);
}

TEST_CASE("a packed RayJob keeps the cluster its run is on, and why it is placed elsewhere") {
  // Running: its pods are found through status.rayClusterName.
  const auto running = json::parse(R"({
    "metadata": {"uid": "u2", "name": "tune", "generation": 2},
    "spec": {"entrypoint": "python tune.py", "shutdownAfterJobFinishes": true,
      "rayClusterSpec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "h"}]}}},
        "enableInTreeAutoscaling": true,
        "workerGroupSpecs": [{"groupName": "gpu", "replicas": 2, "minReplicas": 1,
          "maxReplicas": 4, "template": {"spec": {"containers": [{"name": "w"}]}}}]}},
    "status": {"jobDeploymentStatus": "Running", "startTime": "2026-12-07T10:05:00Z",
      "rayClusterName": "tune-x2b9k"}})");
  // Selecting a running RayCluster: placed through it.
  const auto selecting = json::parse(R"({
    "metadata": {"uid": "u3", "name": "query", "generation": 1},
    "spec": {"entrypoint": "python q.py", "clusterSelector": {"ray.io/cluster": "shared"}}})");
  for (const auto& object : {running, selecting}) {
    const auto state = core::targetFromJson(core::TargetKind::RayJob, object);
    const auto unpacked = packTarget(state).unpack();
    CHECK(unpacked.job.runsOn == state.job.runsOn);
    CHECK(unpacked.placedThrough == state.placedThrough);
    CHECK(unpacked == state);
  }
  CHECK(packTarget(core::targetFromJson(core::TargetKind::RayJob, running)).unpack().job.runsOn ==
        "tune-x2b9k");
  // Its worker group's bounds, and that the autoscaler sizes it.
  const auto groups =
      packTarget(core::targetFromJson(core::TargetKind::RayJob, running)).unpack().groups;
  CHECK(groups.bounds.max == 4);
  CHECK(groups.bounds.minPointer == "/spec/rayClusterSpec/workerGroupSpecs/0/minReplicas");
  CHECK_FALSE(groups.sizeKeptBy.empty());
  CHECK_FALSE(packTarget(core::targetFromJson(core::TargetKind::RayJob, selecting))
                  .unpack()
                  .placedThrough.empty());
}

TEST_CASE("a packed TrainJob keeps its JobSet's name and what its write needs of the object") {
  const auto object = json::parse(R"({
    "metadata": {"uid": "u4", "name": "llama-finetune", "generation": 2},
    "spec": {"runtimeRef": {"name": "torch-distributed"}, "suspend": true,
      "trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 1}}},
      "podSpecOverrides": [{"targetJobs": [{"name": "dataset-initializer"}]},
        {"targetJobs": [{"name": "node"}], "nodeSelector": {"team": "ml"}}]}})");
  const auto state = core::targetFromJson(core::TargetKind::TrainJob, object);
  const auto unpacked = packTarget(state).unpack();
  CHECK(unpacked == state);
  // Its pods are found under the JobSet of its name.
  CHECK(unpacked.job.runsOn == "llama-finetune");
  // The override entry its write goes to, as the adapter read it.
  REQUIRE(unpacked.podSetTemplates.size() == 1);
  CHECK(unpacked.podSetTemplates[0].raw.at("trainJob").at("override") == 1);
  CHECK(unpacked.podSets[0].templatePointer == "/spec/podSpecOverrides/1");
}

TEST_CASE("a packed Deployment unpacks to its projection, and compares as it does") {
  const json placed = fixture("deployment.json");
  json plain = placed;
  plain["metadata"].erase("annotations");
  plain["spec"]["template"]["spec"].erase("nodeSelector");
  plain["spec"]["template"]["spec"].erase("tolerations");
  json twoContainers = placed;
  twoContainers["spec"]["template"]["spec"]["containers"].push_back(
      {{"name", "sidecar"},
       {"image", "busybox"},
       {"resources", {{"limits", {{"aws.amazon.com/neuron", "2"}}}}}});
  json rolling = placed;
  rolling["status"] = {
      {"observedGeneration", 7},
      {"replicas", 3},
      {"updatedReplicas", 1},
      {"availableReplicas", 2},
      {"conditions",
       {{{"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}}}}};
  json reformatted = placed;  // an ownership record edited by hand: kept as written
  reformatted["metadata"]["annotations"]["gpuplacement.io/owned-fields"] =
      "{ \"workload\": \"llama\" }";
  json unreadable = placed;
  unreadable["metadata"]["annotations"]["gpuplacement.io/owned-fields"] = "{not json";
  json odd = placed;  // a UID in another form, a word not in the vocabulary
  odd["metadata"]["uid"] = "uid-0001";
  odd["spec"]["template"]["spec"]["nodeSelector"]["example.com/zone"] = "b";
  json mixed = placed;  // spread over capacity types, as a Mixed placement writes it
  mixed["metadata"]["annotations"]["gpuplacement.io/owned-fields"] =
      R"({"workload":"llama","spreadKey":"karpenter.sh/capacity-type"})";
  mixed["spec"]["selector"] = {{"matchLabels", {{"app", "llama"}}}};
  mixed["spec"]["template"]["spec"]["topologySpreadConstraints"] = {
      {{"topologyKey", "topology.kubernetes.io/zone"}, {"maxSkew", 1}},
      {{"topologyKey", "karpenter.sh/capacity-type"}, {"maxSkew", 1}}};
  const std::pair<const char*, json> cases[] = {
      {"placed", placed},         {"plain", plain}, {"reformatted", reformatted},
      {"unreadable", unreadable}, {"odd", odd},     {"two containers", twoContainers},
      {"rolling", rolling},       {"mixed", mixed}};
  for (const auto& [name, object] : cases) {
    CAPTURE(std::string(name));
    const auto state = core::targetFromJson(core::TargetKind::Deployment, object);
    const auto packed = packTarget(state);
    CHECK(packed.unpack() == state);
    CHECK(packed == packTarget(core::targetFromJson(core::TargetKind::Deployment, object)));
  }
  CHECK_FALSE(packTarget(core::targetFromJson(core::TargetKind::Deployment, placed)) ==
              packTarget(core::targetFromJson(core::TargetKind::Deployment, plain)));
  CHECK_FALSE(packTarget(core::targetFromJson(core::TargetKind::Deployment, placed)) ==
              packTarget(core::targetFromJson(core::TargetKind::Deployment, rolling)));
  const auto spread =
      packTarget(core::targetFromJson(core::TargetKind::Deployment, mixed)).unpack();
  CHECK(spread.spreadKeys ==
        std::vector<std::string>{"topology.kubernetes.io/zone", "karpenter.sh/capacity-type"});
  CHECK(spread.podLabels == std::map<std::string, std::string>{{"app", "llama"}});
  CHECK(spread.ownership.fields.spreadKey == "karpenter.sh/capacity-type");
}

}  // namespace gpuplacement::app
