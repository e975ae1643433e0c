// What a ResourceClaim allocated or let go costs the operator on a large
// DRA cluster: NODES p5.48xlarge whose 8 H100 NVIDIA's DRA driver
// publishes, CLAIMS of them allocated one GPU each, then EVENTS claims
// re-allocated one at a time. Side by side in one run:
//   - a recount from every slice and claim, and the whole cluster view
//     built again (what each claim event cost before the counts were kept
//     one change at a time);
//   - DraRoom::claimChanged and the cluster view recounting the nodes it
//     moved (what it costs now).
// Prints figures; it passes or fails nothing.
//   build/bin/dra_bench [NODES [CLAIMS [EVENTS]]]   (5000 20000 20000)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/dra_room.h"
#include "app/placement_config.h"
#include "core/decide/cluster_cost.h"

namespace {

using namespace gpuplacement;
using Clock = std::chrono::steady_clock;

double microsecondsSince(Clock::time_point start, std::size_t count) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
         static_cast<double>(count);
}

core::DeviceRef gpu(std::size_t node, std::size_t index) {
  return {"gpu.nvidia.com", "node-" + std::to_string(node), "gpu-" + std::to_string(index)};
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t nodes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5000;
  const std::size_t claims = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 20000;
  const std::size_t events = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 20000;
  constexpr std::size_t kGpus = 8;
  if (nodes == 0 || claims == 0 || claims > nodes * kGpus) {
    std::fprintf(stderr, "error: CLAIMS must be 1 to NODES x 8\n");
    return 2;
  }
  auto engine = app::loadEngine({});
  if (!engine) {
    std::fprintf(stderr, "error: %s\n", engine.error().describe().c_str());
    return 1;
  }
  const auto& catalog = (*engine)->catalog();
  const auto& policy = (*engine)->policy();

  std::vector<core::ResourceSliceView> slices(nodes);
  std::vector<core::NodeView> views(nodes);
  for (std::size_t n = 0; n < nodes; ++n) {
    auto& slice = slices[n];
    slice.node = "node-" + std::to_string(n);
    for (std::size_t g = 0; g < kGpus; ++g) {
      core::Devices one;
      one.gpus = 1;
      slice.devices += one;
      slice.each.emplace_back(gpu(n, g), one);
    }
    auto& view = views[n];
    view.instanceType = "p5.48xlarge";
    view.labels = core::kInstanceTypeLabel;
    view.milliCpu = 191'450;
    view.memoryBytes = 1'900'000LL << 20;
  }
  // Claim c holds GPU c % 8 of node c / 8, packed as the scheduler does.
  std::vector<core::ClaimAllocation> allocations(claims);
  for (std::size_t c = 0; c < claims; ++c) {
    allocations[c].devices = {gpu(c / kGpus, c % kGpus)};
  }

  app::DraRoom room;
  auto start = Clock::now();
  for (const auto& slice : slices) {
    room.sliceChanged(nullptr, &slice);
  }
  for (const auto& claim : allocations) {
    room.claimChanged(nullptr, &claim);
  }
  const double startPerObject = microsecondsSince(start, nodes + claims);

  const auto stateOf = [&](const app::DraRoom& counted) {
    core::ClusterState state;
    state.nodesKnown = true;
    state.nodes.reserve(nodes);
    for (std::size_t n = 0; n < nodes; ++n) {
      core::ClusterState::Node entry;
      entry.name = slices[n].node;
      entry.node = &views[n];
      if (const auto* on = counted.on(entry.name)) {
        entry.dra = on->offered;
        entry.draUsed = on->held;
      }
      state.nodes.push_back(std::move(entry));
    }
    return state;
  };
  auto view = core::clusterViewOf(stateOf(room), catalog, policy);

  // Before: each event counted every slice and claim again, and the next
  // decision after it built the whole view. Fewer of them: each is slow.
  const std::size_t wholeEvents = std::max<std::size_t>(1, std::min<std::size_t>(events, 50));
  start = Clock::now();
  for (std::size_t e = 0; e < wholeEvents; ++e) {
    app::DraRoom recounted;
    for (const auto& slice : slices) {
      recounted.sliceChanged(nullptr, &slice);
    }
    for (const auto& claim : allocations) {
      recounted.claimChanged(nullptr, &claim);
    }
  }
  const double recountPerEvent = microsecondsSince(start, wholeEvents);
  start = Clock::now();
  for (std::size_t e = 0; e < wholeEvents; ++e) {
    view = core::clusterViewOf(stateOf(room), catalog, policy);
  }
  const double viewPerEvent = microsecondsSince(start, wholeEvents);

  // Now: the claim moves its devices; the view recounts their nodes. Claim
  // c moves to the GPU left free past the last claim, and back.
  core::ClaimAllocation spare;
  const std::size_t free = claims < nodes * kGpus ? claims : 0;
  spare.devices = {gpu(free / kGpus, free % kGpus)};
  std::size_t moved = 0;
  start = Clock::now();
  for (std::size_t e = 0; e < events; ++e) {
    auto& claim = allocations[e % claims];
    const auto moves = room.claimChanged(&claim, &spare);
    std::swap(claim, spare);
    for (const auto& [node, before] : moves) {
      core::ClusterState::Node entry;
      entry.name = node;
      const std::size_t index = std::strtoull(node.c_str() + 5, nullptr, 10);
      entry.node = &views[index];
      if (const auto* on = room.on(node)) {
        entry.dra = on->offered;
        entry.draUsed = on->held;
      }
      view.capacity.recount(node, core::shareOf(entry, catalog, policy));
      ++moved;
    }
  }
  const double incrementalPerEvent = microsecondsSince(start, events);

  std::printf("DRA cluster: %zu p5.48xlarge (8 H100 each, by DRA), %zu claims of one GPU\n", nodes,
              claims);
  std::printf("  counting slices and claims on start:              %9.2f us per object\n",
              startPerObject);
  std::printf("  before, %zu events: every slice and claim counted again: %9.1f us per event\n",
              wholeEvents, recountPerEvent);
  std::printf("    and the whole cluster view built at the next decision:   %9.1f us\n",
              viewPerEvent);
  std::printf(
      "  now, %zu events: its devices' nodes moved, and recounted in the view: %.2f us per "
      "event (%.2f nodes moved each)\n",
      events, incrementalPerEvent, static_cast<double>(moved) / static_cast<double>(events));
  std::printf("  ratio, before (count and view) to now: %.0fx\n",
              (recountPerEvent + viewPerEvent) / incrementalPerEvent);
  return 0;
}
