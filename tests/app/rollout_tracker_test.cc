// Rollout slots of moves, per policy: counted while held, freed once, and
// who waited for one is woken when one frees.
#include "app/rollout_tracker.h"

#include <algorithm>

#include <doctest/doctest.h>

namespace gpuplacement::app {
namespace {

using Keys = std::vector<std::string>;

const TargetKey kServe{core::TargetKind::Deployment, {"ml", "serve"}};
const TargetKey kChat{core::TargetKind::Deployment, {"ml", "chat"}};
const TargetKey kChatSet{core::TargetKind::StatefulSet, {"ml", "chat"}};
const TargetKey kBatch{core::TargetKind::Deployment, {"batch", "embed"}};

TEST_CASE("slots are counted per policy and held per target") {
  RolloutTracker rollouts;
  CHECK(rollouts.inFlight("gpu") == 0);
  rollouts.start("gpu", kServe);
  rollouts.start("gpu", kChat);
  rollouts.start("cpu", kBatch);
  rollouts.start("gpu", kServe);  // again: still one slot
  CHECK(rollouts.inFlight("gpu") == 2);
  CHECK(rollouts.inFlight("cpu") == 1);
  CHECK(rollouts.holds(kChat));
  CHECK_FALSE(rollouts.holds(kChatSet));  // same name, other kind
}

TEST_CASE("a freed slot wakes every workload of its policy that waited, once") {
  RolloutTracker rollouts;
  rollouts.start("gpu", kServe);
  rollouts.start("cpu", kBatch);
  rollouts.wait("gpu", "ml/b");
  rollouts.wait("gpu", "ml/a");
  rollouts.wait("gpu", "ml/a");  // waits once
  rollouts.wait("cpu", "batch/x");
  auto woken = rollouts.finish(kServe);
  std::sort(woken.begin(), woken.end());
  CHECK(woken == Keys{"ml/a", "ml/b"});
  CHECK_FALSE(rollouts.holds(kServe));
  CHECK(rollouts.inFlight("gpu") == 0);
  CHECK(rollouts.finish(kServe).empty());  // freed already: nothing to wake
  CHECK(rollouts.finish(kChat).empty());   // never held one
  CHECK(rollouts.finish(kBatch) == Keys{"batch/x"});
}

}  // namespace
}  // namespace gpuplacement::app
