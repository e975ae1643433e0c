// A PlacementPolicy as the API server sends it, checked against the
// catalog and rules, as the policy cache does, and as a manifest file
// (`--policy`) does.
#include "app/cached_objects.h"
#include "core/intent/policy.h"
#include "fuzz_support.h"
#include "runtime/object_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const auto object = runtime::parseObject(fuzz::text(data, size));
  if (!object.is_object()) {
    return 0;
  }
  if (const auto spec = object.find("spec"); spec != object.end()) {
    (void)core::parsePolicySpec(*spec, fuzz::catalog(), fuzz::rules());
  }
  (void)app::projectPolicy(object, fuzz::catalog(), fuzz::rules());
  (void)app::policyFromManifest(object, fuzz::catalog(), fuzz::rules());
  return 0;
}
