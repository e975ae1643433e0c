// What the informer caches cost: N GpuWorkloads and N Deployments, and the
// cluster's Nodes and Pods, as the API server lists them (bench/fixtures/,
// captured from a real run, with managedFields), parsed page by page and
// projected into stores the way the operator does. The pods are spread over
// the nodes, one in 20 holding a GPU. Prints time per object, heap bytes
// kept per object and the process's RSS. Prints figures; it passes or
// fails nothing.
//   build/bin/cache_bench [WORKLOADS [NODES [PODS]]]   (10000 5000 100000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <malloc.h>

#include "app/cached_objects.h"
#include "app/placement_config.h"
#include "core/cluster/cluster.h"
#include "core/decide/cluster_cost.h"
#include "core/kinds/target.h"
#include "runtime/informer.h"
#include "runtime/object_json.h"
#include "source_dir.h"

namespace {

using namespace gpuplacement;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

json readFixture(const std::string& name) {
  std::ifstream in(std::string(benchSourceDir()) + "/bench/fixtures/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

double heapMiB() {
  return static_cast<double>(mallinfo2().uordblks) / (1024.0 * 1024.0);
}

double rssMiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
    }
  }
  return 0;
}

// The list pages the API server would send: `pageSize` objects each, every
// object the fixture with its own name, uid and resourceVersion.
std::vector<std::string> listPages(const json& fixture, std::size_t count, std::size_t pageSize,
                                   const std::function<void(json&, std::size_t)>& vary = {}) {
  std::vector<std::string> pages;
  for (std::size_t first = 0; first < count; first += pageSize) {
    json page = {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", "1"}}}};
    json items = json::array();
    for (std::size_t i = first; i < std::min(count, first + pageSize); ++i) {
      json object = fixture;
      char name[32];
      std::snprintf(name, sizeof name, "w-%05zu", i);
      object["metadata"]["name"] = name;
      object["metadata"]["uid"] = "8c5f0f1e-6d0b-4a53-9a3e-" + std::to_string(100000000000 + i);
      object["metadata"]["resourceVersion"] = std::to_string(200000 + i);
      if (object.contains("spec") && object["spec"].contains("targetRef")) {
        object["spec"]["targetRef"]["name"] = name;
      }
      if (vary) {
        vary(object, i);
      }
      items.push_back(std::move(object));
    }
    page["items"] = std::move(items);
    pages.push_back(page.dump());
  }
  return pages;
}

template <typename T, typename Project>
void load(const char* what, const std::vector<std::string>& pages, std::size_t count,
          std::unordered_map<std::string, runtime::Cached<T>>& store, Project project) {
  const double heapBefore = heapMiB();
  double parseSeconds = 0;
  double projectSeconds = 0;
  std::size_t bytes = 0;
  for (const auto& text : pages) {
    bytes += text.size();
    const auto start = Clock::now();
    auto page = runtime::parseObject(text);
    const auto parsed = Clock::now();
    for (const auto& object : page["items"]) {
      store.emplace(runtime::objectKey(object),
                    runtime::Cached<T>{object["metadata"]["resourceVersion"], project(object)});
    }
    parseSeconds += std::chrono::duration<double>(parsed - start).count();
    projectSeconds += std::chrono::duration<double>(Clock::now() - parsed).count();
  }
  const double kept = heapMiB() - heapBefore;
  std::printf(
      "  %-12s %6zu objects, %5.1f MiB listed: parse %6.1f ms (%.1f us each), project %6.1f ms "
      "(%.1f us each), heap kept %5.1f MiB (%.0f bytes each)\n",
      what, count, static_cast<double>(bytes) / (1024.0 * 1024.0), parseSeconds * 1e3,
      parseSeconds * 1e6 / static_cast<double>(count), projectSeconds * 1e3,
      projectSeconds * 1e6 / static_cast<double>(count), kept,
      kept * 1024 * 1024 / static_cast<double>(count));
}

}  // namespace

std::string nodeName(std::size_t i) {
  char name[32];
  std::snprintf(name, sizeof name, "ip-10-%zu-%zu-%zu.ec2.internal", i / 65536 % 256, i / 256 % 256,
                i % 256);
  return name;
}

int main(int argc, char** argv) {
  const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 10'000;
  const std::size_t nodeCount = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 5'000;
  const std::size_t podCount = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 100'000;
  constexpr std::size_t kPageSize = 500;  // the informer's
  auto engine = app::loadEngine({});
  if (!engine) {
    std::fprintf(stderr, "error: %s\n", engine.error().describe().c_str());
    return 1;
  }
  const auto& catalog = (*engine)->catalog();
  const auto workloadPages = listPages(readFixture("gpuworkload.json"), count, kPageSize);
  const auto deploymentPages = listPages(readFixture("deployment.json"), count, kPageSize);
  const auto nodePages =
      listPages(readFixture("node.json"), nodeCount, kPageSize, [](json& node, std::size_t i) {
        node["metadata"]["name"] = nodeName(i);
        // EKS proportions: nine in ten CPU nodes, then GPU, then Neuron.
        static const char* const kTypes[] = {
            "m5.xlarge",  "m5.2xlarge", "c5.2xlarge", "r5.xlarge",   "m5.4xlarge",
            "c5.xlarge",  "m5.xlarge",  "m5.2xlarge", "c5.2xlarge",  "g5.xlarge",
            "g6.xlarge",  "m5.xlarge",  "m5.2xlarge", "c5.2xlarge",  "r5.xlarge",
            "m5.4xlarge", "c5.xlarge",  "m5.xlarge",  "inf2.xlarge", "m5.2xlarge"};
        const std::string type = kTypes[i % std::size(kTypes)];
        node["metadata"]["labels"]["node.kubernetes.io/instance-type"] = type;
        if (type.rfind("g", 0) != 0) {
          for (const char* list : {"capacity", "allocatable"}) {
            node["status"][list].erase("nvidia.com/gpu");
          }
          node["spec"].erase("taints");  // the GPU node group's
        }
      });
  const auto podPages = listPages(
      readFixture("pod.json"), podCount, kPageSize, [nodeCount](json& pod, std::size_t i) {
        pod["spec"]["nodeName"] = nodeName(i % std::max<std::size_t>(nodeCount, 1));
        if (i % 20 == 0) {  // 5% hold a device
          auto& resources = pod["spec"]["containers"][0]["resources"];
          resources["limits"]["nvidia.com/gpu"] = "1";
          resources["requests"]["nvidia.com/gpu"] = "1";
        }
      });
  malloc_trim(0);
  const double rssBefore = rssMiB();
  const double heapBefore = heapMiB();

  std::unordered_map<std::string, runtime::Cached<app::CachedWorkload>> workloads;
  std::unordered_map<std::string, runtime::Cached<app::CachedTarget>> deployments;
  const auto start = Clock::now();
  std::printf(
      "cache_bench: %zu GpuWorkloads and %zu Deployments, %zu Nodes and %zu Pods in pages of %zu\n",
      count, count, nodeCount, podCount, kPageSize);
  load("gpuworkloads", workloadPages, count, workloads,
       [&catalog](const json& object) { return app::packWorkload(object, catalog); });
  load("deployments", deploymentPages, count, deployments, [](const json& object) {
    return app::packTarget(core::targetFromJson(core::TargetKind::Deployment, object));
  });
  const double workloadSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double rssWorkloads = rssMiB();
  const double heapWorkloads = heapMiB();
  std::unordered_map<std::string, runtime::Cached<core::NodeView>> nodes;
  std::unordered_map<std::string, runtime::Cached<core::PodView>> pods;
  const auto clusterStart = Clock::now();
  load("nodes", nodePages, nodeCount, nodes, core::nodeFromJson);
  load("pods", podPages, podCount, pods, core::podFromJson);
  std::size_t holding = 0;
  for (const auto& [key, entry] : pods) {
    holding += entry.value.holdsDevices() && entry.value.devices.gpus > 0;
  }
  const double clusterSeconds = std::chrono::duration<double>(Clock::now() - clusterStart).count();
  std::printf(
      "  cluster      %zu nodes and %zu pods (%zu holding a GPU): %.0f ms, heap kept %.1f "
      "MiB, RSS grew %.1f MiB\n",
      nodeCount, podCount, holding, clusterSeconds * 1e3, heapMiB() - heapWorkloads,
      rssMiB() - rssWorkloads);
  const double seconds = workloadSeconds + clusterSeconds;

  // The cluster view a decision reads, computed from these caches: what a
  // pod event that changes some node's room costs the next decision.
  std::unordered_map<std::string, core::NodeUse> used;  // as the operator's caches sum it
  for (const auto& [key, entry] : pods) {
    if (entry.value.holdsDevices()) {
      used[entry.value.node].add(entry.value);
    }
  }
  // The cluster as the caches give it to the view.
  const auto clusterOf = [&] {
    core::ClusterState cluster;
    cluster.nodesKnown = true;
    cluster.nodes.reserve(nodes.size());
    for (const auto& [name, entry] : nodes) {
      const auto& use = used[name];
      cluster.nodes.push_back(
          {name, &entry.value, use.devices, use.milliCpu, use.memoryBytes, use.pods});
    }
    return cluster;
  };
  std::vector<double> viewMillis;
  std::size_t offered = 0;
  for (int run = 0; run < 21; ++run) {
    const auto viewStart = Clock::now();
    const auto cluster = clusterOf();
    const auto view = core::clusterViewOf(cluster, catalog, (*engine)->policy());
    viewMillis.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - viewStart).count());
    offered = 0;
    for (std::size_t i = 0; i < catalog.instances.size(); ++i) {
      offered += view.capacity.offered(static_cast<int>(i), core::CapacityType::OnDemand);
    }
  }
  std::sort(viewMillis.begin(), viewMillis.end());
  std::printf(
      "  cluster view %.2f ms p50, %.2f ms max over %zu runs, %zu nodes (%zu types offered)\n",
      viewMillis[viewMillis.size() / 2], viewMillis.back(), viewMillis.size(), nodes.size(),
      offered);

  // What the operator does instead when only pods changed: recount the
  // nodes they are on, once per change (a pod like one of the cluster's
  // lands on a node); and the copy a recount makes first when a reconcile
  // still holds the view.
  {
    auto cluster = clusterOf();
    auto view = core::clusterViewOf(cluster, catalog, (*engine)->policy());
    std::vector<const core::PodView*> churning;
    for (const auto& [key, entry] : pods) {
      if (entry.value.holdsDevices()) {
        churning.push_back(&entry.value);
      }
    }
    constexpr std::size_t kChanges = 200000;
    const auto recountStart = Clock::now();
    for (std::size_t change = 0; change < kChanges && !churning.empty(); ++change) {
      const core::PodView& pod = *churning[change * 7919 % churning.size()];
      auto& entry = cluster.nodes[change * 104729 % cluster.nodes.size()];
      entry.used += pod.devices;  // pods only arrive: the room runs out on busy nodes too
      entry.usedMilliCpu += pod.milliCpu;
      entry.usedMemoryBytes += pod.memoryBytes;
      ++entry.usedPods;
      view.capacity.recount(entry.name, core::shareOf(entry, catalog, (*engine)->policy()));
    }
    const double recountMicros =
        std::chrono::duration<double, std::micro>(Clock::now() - recountStart).count() /
        static_cast<double>(kChanges);
    std::vector<double> copyMillis;
    std::size_t offersCopied = 0;  // read, so that the copy is made
    for (int run = 0; run < 21; ++run) {
      const auto copyStart = Clock::now();
      const auto copy = view;
      copyMillis.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - copyStart).count());
      offersCopied += copy.capacity.offers.size();
    }
    std::sort(copyMillis.begin(), copyMillis.end());
    std::printf(
        "  recount      %.2f us per node whose pods changed (%zu changes); a copy of the view "
        "%.2f ms p50 (%zu offers)\n",
        recountMicros, kChanges, copyMillis[copyMillis.size() / 2],
        offersCopied / copyMillis.size());
  }
  const double rssLoaded = rssMiB();
  malloc_trim(0);
  std::printf(
      "  both         %.0f ms; heap kept %.1f MiB; RSS grew %.1f MiB (%.1f MiB after "
      "malloc_trim)\n",
      seconds * 1e3, heapMiB() - heapBefore, rssLoaded - rssBefore, rssMiB() - rssBefore);
  // What a reconcile pays to read an object back from the cache.
  const auto unpackStart = Clock::now();
  std::size_t valid = 0;
  for (const auto& [key, entry] : workloads) {
    valid += entry.value.unpack().spec.has_value();
  }
  const double unpackMicros =
      std::chrono::duration<double, std::micro>(Clock::now() - unpackStart).count() /
      static_cast<double>(count);
  std::printf("  unpack       %.1f us per GpuWorkload (%zu valid specs)\n", unpackMicros, valid);
  std::printf(
      "  sizeof       CachedWorkload %zu, CachedTarget %zu, NodeView %zu, PodView %zu bytes\n",
      sizeof(app::CachedWorkload), sizeof(app::CachedTarget), sizeof(core::NodeView),
      sizeof(core::PodView));
  return workloads.size() == count && deployments.size() == count && nodes.size() == nodeCount &&
                 pods.size() == podCount
             ? 0
             : 1;
}
