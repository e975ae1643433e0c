// Targets as index keys: the kind is part of a target's identity.
#include "app/target_key.h"

#include <doctest/doctest.h>

#include "runtime/key_index.h"

namespace gpuplacement::app {
namespace {

using Keys = std::vector<std::string>;

TEST_CASE("targets are keyed by kind and object: a Job and a Deployment may share a name") {
  runtime::KeyIndex<TargetKey, std::string> index;
  const TargetKey deployment{core::TargetKind::Deployment, {"ml", "train"}};
  const TargetKey job{core::TargetKind::Job, {"ml", "train"}};
  const TargetKey elsewhere{core::TargetKind::Job, {"other", "train"}};
  index.add(deployment, "ml/serve");
  index.add(job, "ml/train");
  CHECK(index.of(deployment) == Keys{"ml/serve"});
  CHECK(index.of(job) == Keys{"ml/train"});
  CHECK(index.of(elsewhere).empty());
  index.remove(job, "ml/train");
  CHECK(index.of(job).empty());
  CHECK(index.of(deployment) == Keys{"ml/serve"});
}

}  // namespace
}  // namespace gpuplacement::app
