// The many-to-many index behind "which GpuWorkloads target this
// Deployment" and "which Deployments record fields of this GpuWorkload".
#include "app/key_index.h"

#include <algorithm>

#include <doctest/doctest.h>

#include "app/target_key.h"

namespace gpuplacement::app {
namespace {

using Keys = std::vector<std::string>;

TEST_CASE("pairs are added once, removed one by one, and listed per key") {
  KeyIndex<std::string, std::string> index;
  CHECK(index.of("ns/web").empty());
  index.add("ns/web", "ns/a");
  index.add("ns/web", "ns/a");  // again: still one pair
  index.add("ns/web", "ns/b");
  index.add("ns/api", "ns/c");
  CHECK(index.size() == 3);
  auto partners = index.of("ns/web");
  std::sort(partners.begin(), partners.end());
  CHECK(partners == Keys{"ns/a", "ns/b"});
  CHECK(index.of("ns/api") == Keys{"ns/c"});

  index.remove("ns/web", "ns/a");
  index.remove("ns/web", "ns/missing");  // absent: nothing happens
  index.remove("ns/other", "ns/a");
  CHECK(index.of("ns/web") == Keys{"ns/b"});
  index.remove("ns/web", "ns/b");
  CHECK(index.of("ns/web").empty());
  CHECK(index.size() == 1);  // nothing left behind for a key with no partner
}

TEST_CASE("targets are keyed by kind and object: a Job and a Deployment may share a name") {
  KeyIndex<TargetKey, std::string> index;
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
