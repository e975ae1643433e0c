// What the pods bound to each node hold, and the log of which nodes' room
// moved: what lets a cluster view be recounted node by node.
#include "app/cluster_room.h"

#include <algorithm>

#include <doctest/doctest.h>

namespace gpuplacement::app {
namespace {

using Nodes = std::vector<std::string>;

core::PodView pod(const std::string& node, int gpus, std::int64_t milliCpu = 1000) {
  core::PodView view;
  view.node = node;
  view.devices.gpus = gpus;
  view.milliCpu = milliCpu;
  view.memoryBytes = 1 << 30;
  return view;
}

TEST_CASE("the room the pods hold follows them on, between and off their nodes") {
  ClusterRoom room;
  const auto a1 = pod("a", 1);
  const auto a2 = pod("a", 2);
  const auto pending = pod("", 1);
  room.podChanged(nullptr, &pending);  // not bound: holds nothing
  CHECK(room.generation() == 0);
  room.podChanged(&pending, &a1);  // scheduled to a
  room.podChanged(nullptr, &a2);
  CHECK(room.usedOn("a").devices.gpus == 3);
  CHECK(room.usedOn("a").milliCpu == 2000);
  CHECK(room.usedOn("a").pods == 2);
  CHECK(room.usedOn("b") == core::NodeUse{});
  CHECK(room.generation() == 2);

  auto relabelled = a1;
  relabelled.owner = "web";  // nothing a decision reads of the room
  room.podChanged(&a1, &relabelled);
  CHECK(room.generation() == 2);

  const auto b1 = pod("b", 1);
  room.podChanged(&a1, &b1);  // the same pod, another node: both move
  CHECK(room.usedOn("a").devices.gpus == 2);
  CHECK(room.usedOn("b").devices.gpus == 1);
  auto finished = b1;
  finished.finished = true;
  room.podChanged(&b1, &finished);  // Succeeded: holds nothing
  room.podChanged(&a2, nullptr);    // deleted
  CHECK(room.usedOn("a") == core::NodeUse{});
  CHECK(room.usedOn("b") == core::NodeUse{});
}

TEST_CASE("the nodes whose room moved since a generation, each once, until the log forgets") {
  ClusterRoom room;
  CHECK(room.nodesMovedSince(0) == std::optional<Nodes>(Nodes{}));
  const auto a = pod("a", 1);
  const auto b = pod("b", 1);
  room.podChanged(nullptr, &a);
  const auto since = room.generation();
  room.podChanged(nullptr, &b);
  room.podChanged(&a, nullptr);
  room.podChanged(nullptr, &a);
  auto moved = room.nodesMovedSince(since);
  REQUIRE(moved);
  std::sort(moved->begin(), moved->end());
  CHECK(*moved == Nodes{"a", "b"});
  CHECK(room.nodesMovedSince(room.generation()) == std::optional<Nodes>(Nodes{}));

  // More moves than are kept: a view that old is computed whole instead.
  const auto old = room.generation();
  for (std::size_t i = 0; i <= ClusterRoom::kMovesKept; ++i) {
    const auto node = pod("n" + std::to_string(i), 1);
    room.podChanged(nullptr, &node);
  }
  CHECK_FALSE(room.nodesMovedSince(old).has_value());
  const auto recent = room.nodesMovedSince(room.generation() - 1);
  REQUIRE(recent);
  CHECK(*recent == Nodes{"n" + std::to_string(ClusterRoom::kMovesKept)});
}

}  // namespace
}  // namespace gpuplacement::app
