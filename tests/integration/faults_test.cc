// The operator binary against the real control plane through a fault proxy
// (tests/support/fault_proxy.h): connections reset before and after the
// server acted, watch streams reset, truncated and stalled, answers delayed,
// 429 and 503 with Retry-After. What must hold: no update is lost, nothing
// is written twice, Retry-After and the QPS limit are honoured, a stalled
// watch is abandoned within its bound, and /healthz fails only when the
// event loop really stops. Figures go to docs/reliability.md.
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <doctest/doctest.h>
#include <signal.h>

#include "base/json_access.h"
#include "support/cluster.h"
#include "support/command.h"
#include "support/fault_proxy.h"
#include "support/objects.h"
#include "support/paths.h"
#include "support/suite.h"

namespace gpuplacement {
namespace {

using namespace testing;
using Clock = std::chrono::steady_clock;

const bool kConfigured = [] {
  testing::ControlPlaneOptions options;
  options.audit = true;
  ControlPlane::configure(options);
  return true;
}();

std::unique_ptr<FaultProxy> startProxy() {
  auto& plane = ControlPlane::shared();
  return std::make_unique<FaultProxy>(plane.adminConfig().server, plane.dir() + "/pki");
}

std::string proxiedKubeconfig(const FaultProxy& proxy, const std::string& name) {
  return proxy.kubeconfigThrough(cluster().operatorKubeconfig(),
                                 ControlPlane::shared().dir() + "/" + name + ".kubeconfig");
}

// What the engine places `spec` on, asked of the command line.
std::string expectedInstanceType(const json& spec) {
  const std::string file = ControlPlane::shared().dir() + "/expected.json";
  std::ofstream(file) << workloadObject("x", "x", spec).dump();
  const auto answer = runCommand(testing::operatorBinary() + " recommend -f " + file + " -o json");
  REQUIRE_MESSAGE(answer.exitCode == 0, answer.err);
  auto parsed = json::parse(answer.out, nullptr, false);
  if (parsed.is_array()) {
    parsed = parsed.at(0);
  }
  const std::string type = base::stringMember(base::memberOf(parsed, "placement"), "instanceType");
  REQUIRE_MESSAGE(!type.empty(), answer.out);
  return type;
}

// Placed as the latest spec says: status describes the current generation
// and the Deployment carries that placement.
bool placedAsLatest(Cluster& c, const std::string& ns, const std::string& name,
                    const std::string& instanceType) {
  auto workload = c.get(workloadsPath(ns, name));
  auto deployment = c.get(deploymentsPath(ns, name));
  if (!workload || !deployment) {
    return false;
  }
  const auto& status = (*workload)["status"];
  return base::integerMember(status, "observedGeneration") ==
             base::integerMember((*workload)["metadata"], "generation") &&
         conditionIs(*workload, "Applied", "True") &&
         base::stringMember(base::memberOf(status, "placement"), "instanceType") == instanceType &&
         base::stringMember(
             base::memberOf((*deployment)["spec"]["template"]["spec"], "nodeSelector"),
             "node.kubernetes.io/instance-type") == instanceType;
}

int healthz(const OperatorProcess& op) {
  return OperatorProcess::httpGet(op.healthPort(), "/healthz").first;
}

}  // namespace

TEST_CASE("every fault at once: no update lost, nothing written twice") {
  auto& c = cluster();
  const std::string ns = "faults";
  constexpr int kWorkloads = 6;
  createNamespace(c, ns);
  for (int i = 0; i < kWorkloads; ++i) {
    createDeployment(c, ns, "w-" + std::to_string(i));
  }
  // Three versions of each spec, each placed elsewhere, so a placement's
  // Event can only appear twice if it was written twice.
  const std::vector<json> versions = {inferenceSpec("", "1B"), inferenceSpec("", "13B"),
                                      inferenceSpec("", "30B")};
  std::set<std::string> types;
  for (const auto& version : versions) {
    types.insert(expectedInstanceType(version));
  }
  REQUIRE(types.size() == versions.size());
  const std::string finalType = expectedInstanceType(versions.back());

  auto proxy = startProxy();
  OperatorProcess op(proxiedKubeconfig(*proxy, "faults"), {"--watch-timeout", "5s"});
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  const std::vector<FaultRule> rules = {
      {"PATCH", "/deployments/", Fault::ResetAfterForward, 0, -1, {}, 3},
      {"PATCH", "/deployments/", Fault::ResetBeforeForward, 0, -1, {}, 2},
      {"PATCH", "/deployments/", Fault::Respond, 503, 1, {}, 2},
      {"PATCH", "/deployments/", Fault::Delay, 0, -1, std::chrono::milliseconds(1500), 2},
      {"PATCH", "/gpuworkloads/", Fault::ResetAfterForward, 0, -1, {}, 3},
      {"PATCH", "/gpuworkloads/", Fault::Respond, 503, 1, {}, 2},
      {"POST", "/events", Fault::ResetAfterForward, 0, -1, {}, 2},
      {"GET", "/deployments/", Fault::Respond, 503, 1, {}, 1},
      {"WATCH", "", Fault::TruncateStream, 0, -1, {}, 2},
      {"WATCH", "", Fault::ResetMidStream, 0, -1, {}, 2},
  };
  for (const auto& rule : rules) {
    proxy->addRule(rule);
  }

  std::vector<int> health;
  const auto started = Clock::now();
  for (std::size_t version = 0; version < versions.size(); ++version) {
    for (int i = 0; i < kWorkloads; ++i) {
      const std::string name = "w-" + std::to_string(i);
      json spec = versions[version];
      spec["targetRef"]["name"] = name;
      if (version == 0) {
        REQUIRE(c.create(workloadsPath(ns), workloadObject(ns, name, spec)).ok());
      } else {
        REQUIRE(c.patch(workloadsPath(ns, name), json{{"spec", spec}}).ok());
      }
    }
    proxy->resetOpenStreams();
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    health.push_back(healthz(op));
  }
  const bool settled = c.waitFor(
      [&] {
        health.push_back(healthz(op));
        for (int i = 0; i < kWorkloads; ++i) {
          if (!placedAsLatest(c, ns, "w-" + std::to_string(i), finalType)) {
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(90), std::chrono::milliseconds(500));
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  CHECK_MESSAGE(settled, op.log());
  MESSAGE("every workload placed as its latest spec " << seconds << " s after the first change");

  const auto requests = proxy->requests();
  std::map<std::string, int> faults;
  std::map<std::string, int> acceptedPatches;  // per Deployment, as the server answered
  for (const auto& request : requests) {
    if (!request.fault.empty()) {
      ++faults[request.fault];
    }
    if (request.method == "PATCH" && request.target.find("/deployments/") != std::string::npos &&
        request.status == 200) {
      const auto path = request.target.substr(0, request.target.find('?'));
      ++acceptedPatches[path.substr(path.rfind('/') + 1)];
    }
  }
  for (const char* kind : {"reset-after-forward", "reset-before-forward", "respond", "delay",
                           "truncate-stream", "reset-mid-stream"}) {
    CAPTURE(std::string(kind));
    CHECK(faults[kind] >= 1);
  }
  MESSAGE("requests: " << requests.size() << ", faults injected: " << [&] {
    std::string text;
    for (const auto& [kind, count] : faults) {
      text += kind + " " + std::to_string(count) + ", ";
    }
    return text;
  }());

  for (int i = 0; i < kWorkloads; ++i) {
    const std::string name = "w-" + std::to_string(i);
    CAPTURE(name);
    // Ours once, next to the team's, however many times a patch was retried.
    const auto tolerations =
        c.mustGet(deploymentsPath(ns, name))["spec"]["template"]["spec"]["tolerations"];
    REQUIRE(tolerations.size() == 2);
    CHECK(tolerations[0]["key"] == "dedicated");
    CHECK(tolerations[1]["key"] == "nvidia.com/gpu");
    // At most one accepted patch per spec version (a lost answer is never
    // followed by a second write of the same decision).
    CHECK(acceptedPatches[name] >= 1);
    CHECK(acceptedPatches[name] <= static_cast<int>(versions.size()));
    std::map<std::pair<std::string, std::string>, int> events;
    for (const auto& event : eventsAbout(c, ns, name)) {
      ++events[event];
    }
    for (const auto& [event, count] : events) {
      CAPTURE(event.first + ": " + event.second);
      CHECK(count == 1);
    }
  }
  for (int status : health) {
    CHECK(status == 200);
  }
  CHECK(op.running());
  CHECK(op.stop() == 0);
}

TEST_CASE("a stalled watch is abandoned and re-opened within timeoutSeconds + 30 s") {
  auto& c = cluster();
  const std::string ns = "stall";
  createNamespace(c, ns);
  createDeployment(c, ns, "quiet");
  auto proxy = startProxy();
  // Server-side watches of 2 to 4 s: the client gives a silent stream
  // that long plus 30 s (kube/list_watch_client.cc).
  OperatorProcess op(proxiedKubeconfig(*proxy, "stall"), {"--watch-timeout", "2s"});
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  REQUIRE(c.waitFor([&] { return proxy->openStreams() >= 3; }));
  const int stalled = proxy->stallOpenStreams();
  CHECK(stalled >= 3);  // policies, workloads, deployments
  const auto start = Clock::now();
  json spec = inferenceSpec("quiet", "7B");
  REQUIRE(c.create(workloadsPath(ns), workloadObject(ns, "quiet", spec)).ok());
  std::vector<int> health;
  const bool placed = c.waitFor(
      [&] {
        health.push_back(healthz(op));
        auto workload = c.get(workloadsPath(ns, "quiet"));
        return workload && conditionIs(*workload, "Applied", "True");
      },
      std::chrono::seconds(60), std::chrono::milliseconds(250));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  REQUIRE_MESSAGE(placed, op.log());
  MESSAGE("a change made while every watch was stalled was placed after " << seconds << " s");
  CHECK(seconds >= 20);  // the stall did blind it: nothing came through the old streams
  CHECK(seconds <= 4 + 30 + 3);
  // A stalled watch is not a stuck loop.
  for (int status : health) {
    CHECK(status == 200);
  }

  // A stuck loop is: stopped, the process answers nothing (the liveness
  // probe's timeout fails it); going on, it answers again.
  op.pause();
  CHECK(healthz(op) == 0);
  op.resume();
  CHECK(c.waitFor([&] { return healthz(op) == 200; }, std::chrono::seconds(10)));
  CHECK(op.stop() == 0);
}

TEST_CASE("429 and 503 answers: Retry-After is honoured and the QPS limit never exceeded") {
  auto& c = cluster();
  const std::string ns = "throttled";
  constexpr int kWorkloads = 5;
  createNamespace(c, ns);
  for (int i = 0; i < kWorkloads; ++i) {
    createDeployment(c, ns, "t-" + std::to_string(i));
  }
  auto proxy = startProxy();
  constexpr double kQps = 4;
  constexpr int kBurst = 4;
  OperatorProcess op(
      proxiedKubeconfig(*proxy, "throttled"),
      {"--qps", std::to_string(static_cast<int>(kQps)), "--burst", std::to_string(kBurst)});
  REQUIRE_MESSAGE(op.waitReady(), op.log());
  proxy->addRule({"PATCH", "/deployments/", Fault::Respond, 429, 2, {}, 3});
  proxy->addRule({"PATCH", "/status", Fault::Respond, 503, 1, {}, 2});
  for (int i = 0; i < kWorkloads; ++i) {
    const std::string name = "t-" + std::to_string(i);
    REQUIRE(c.create(workloadsPath(ns), workloadObject(ns, name, inferenceSpec(name, "7B"))).ok());
  }
  const bool placed = c.waitFor(
      [&] {
        for (int i = 0; i < kWorkloads; ++i) {
          auto workload = c.get(workloadsPath(ns, "t-" + std::to_string(i)));
          if (!workload || !conditionIs(*workload, "Applied", "True")) {
            return false;
          }
        }
        return true;
      },
      std::chrono::seconds(60));
  REQUIRE_MESSAGE(placed, op.log());
  CHECK(proxy->rulesLeft() == 0);

  const auto requests = proxy->requests();
  int throttled = 0;
  double shortest = 1e9;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].fault != "respond") {
      continue;
    }
    ++throttled;
    const double retryAfter = requests[i].target.find("/status") != std::string::npos ? 1.0 : 2.0;
    for (std::size_t j = i + 1; j < requests.size(); ++j) {
      if (requests[j].method == requests[i].method && requests[j].target == requests[i].target) {
        const double gap = std::chrono::duration<double>(requests[j].at - requests[i].at).count();
        CAPTURE(requests[i].target);
        CHECK(gap >= retryAfter - 0.05);
        shortest = std::min(shortest, gap - retryAfter);
        break;
      }
    }
  }
  CHECK(throttled == 5);
  MESSAGE("throttled answers: " << throttled << "; the quickest retry came " << shortest
                                << " s after Retry-After allowed");
  // Every request the operator made, the 429s' retries included, within
  // the token bucket (one request of slack: the proxy timestamps arrival).
  const auto excess = exceedsRate(requests, kQps, kBurst, 1);
  CHECK_MESSAGE(excess.empty(), excess);
  MESSAGE(requests.size() << " requests checked against qps " << kQps << ", burst " << kBurst);
  CHECK(op.stop() == 0);
}

}  // namespace gpuplacement
