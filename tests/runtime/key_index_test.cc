// The many-to-many index behind every cache index (which GpuWorkloads
// target this Deployment, which pods of a target wait).
#include "runtime/key_index.h"

#include <algorithm>

#include <doctest/doctest.h>

namespace gpuplacement::runtime {
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
}  // namespace
}  // namespace gpuplacement::runtime
