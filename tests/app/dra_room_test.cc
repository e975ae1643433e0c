// The devices DRA drivers publish per node and those claims hold, counted
// one change at a time: what a claim moves, in whatever order the watches
// tell of slices and claims.
#include "app/dra_room.h"

#include <doctest/doctest.h>

namespace gpuplacement::app {
namespace {

using Moved = std::vector<std::string>;

core::Devices gpus(int count) {
  core::Devices devices;
  devices.gpus = count;
  return devices;
}

core::Devices mig(const std::string& profile, int count) {
  core::Devices devices;
  devices.mig = {{profile, count}};
  return devices;
}

core::DeviceRef gpu(const std::string& node, int index) {
  return {"gpu.nvidia.com", node, "gpu-" + std::to_string(index)};
}

// A node's slice of `count` whole GPUs.
core::ResourceSliceView slice(const std::string& node, int count) {
  core::ResourceSliceView view;
  view.node = node;
  view.devices = gpus(count);
  for (int i = 0; i < count; ++i) {
    view.each.emplace_back(gpu(node, i), gpus(1));
  }
  return view;
}

core::ClaimAllocation claim(std::vector<core::DeviceRef> devices) {
  return {std::move(devices)};
}

Moved nodesOf(const DraRoom::Moves& moves) {
  Moved nodes;
  for (const auto& [node, before] : moves) {
    nodes.push_back(node);
  }
  return nodes;
}

TEST_CASE("a claim moves only its devices' node, and a device two claims hold is taken once") {
  DraRoom room;
  const auto a = slice("a", 4);
  const auto b = slice("b", 4);
  CHECK(nodesOf(room.sliceChanged(nullptr, &a)) == Moved{"a"});
  CHECK(nodesOf(room.sliceChanged(nullptr, &b)) == Moved{"b"});
  REQUIRE(room.on("a"));
  CHECK(room.on("a")->offered == gpus(4));
  CHECK(room.on("a")->held == core::Devices{});
  CHECK_FALSE(room.on("c"));

  const auto one = claim({gpu("a", 0)});
  const auto moves = room.claimChanged(nullptr, &one);
  REQUIRE(nodesOf(moves) == Moved{"a"});
  CHECK(moves[0].second.held == core::Devices{});  // what it was before
  CHECK(room.on("a")->held == gpus(1));
  CHECK(room.on("b")->held == core::Devices{});

  // Another claim on the same device (shared, or an admin's): no move.
  const auto again = claim({gpu("a", 0)});
  CHECK(room.claimChanged(nullptr, &again).empty());
  CHECK(room.on("a")->held == gpus(1));
  CHECK(room.claimChanged(&again, nullptr).empty());
  CHECK(room.on("a")->held == gpus(1));

  // Re-allocated across nodes: both move, once each.
  const auto across = claim({gpu("a", 1), gpu("b", 0), gpu("b", 1)});
  CHECK(nodesOf(room.claimChanged(&one, &across)) == Moved{"a", "b"});
  CHECK(room.on("a")->held == gpus(1));
  CHECK(room.on("b")->held == gpus(2));
  // The same allocation told again: nothing moves.
  CHECK(room.claimChanged(&across, &across).empty());
  room.claimChanged(&across, nullptr);
  CHECK(room.on("a")->held == core::Devices{});
  CHECK(room.on("b")->held == core::Devices{});
}

TEST_CASE("a claim seen before its slice counts once the slice is; a slice gone takes its held") {
  DraRoom room;
  const auto early = claim({gpu("a", 2)});
  CHECK(room.claimChanged(nullptr, &early).empty());  // no node knows the device yet
  const auto a = slice("a", 4);
  room.sliceChanged(nullptr, &a);
  CHECK(room.on("a")->held == gpus(1));

  // The driver republishes the node cut into MIG devices.
  core::ResourceSliceView cut;
  cut.node = "a";
  cut.devices = mig("1g.5gb", 2);
  cut.each = {{{"gpu.nvidia.com", "a", "gpu-0-mig-0"}, mig("1g.5gb", 1)},
              {{"gpu.nvidia.com", "a", "gpu-0-mig-1"}, mig("1g.5gb", 1)}};
  const auto moves = room.sliceChanged(&a, &cut);
  REQUIRE(nodesOf(moves) == Moved{"a"});
  CHECK(moves[0].second.offered == gpus(4));
  CHECK(room.on("a")->offered == mig("1g.5gb", 2));
  CHECK(room.on("a")->held == core::Devices{});  // the claim's GPU is no longer published

  const auto slice0 = claim({{"gpu.nvidia.com", "a", "gpu-0-mig-1"}});
  room.claimChanged(nullptr, &slice0);
  CHECK(room.on("a")->held == mig("1g.5gb", 1));
  // The node goes: nothing of it is left, and the claims let go later
  // move nothing.
  CHECK(nodesOf(room.sliceChanged(&cut, nullptr)) == Moved{"a"});
  CHECK_FALSE(room.on("a"));
  CHECK(room.claimChanged(&slice0, nullptr).empty());
  CHECK(room.claimChanged(&early, nullptr).empty());
  // Published again later: nothing held.
  room.sliceChanged(nullptr, &a);
  CHECK(room.on("a")->held == core::Devices{});
}

}  // namespace
}  // namespace gpuplacement::app
