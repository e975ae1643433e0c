// A GpuWorkload as the API server sends it (JSON): the spec validated
// against the catalog, and the whole object as the cache packs it. Packing
// must read back exactly what it was given.
#include "app/cached_objects.h"
#include "core/intent/workload.h"
#include "fuzz_support.h"
#include "runtime/object_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplacement;
  const auto object = runtime::parseObject(fuzz::text(data, size));
  if (!object.is_object()) {
    return 0;
  }
  if (const auto spec = object.find("spec"); spec != object.end()) {
    (void)core::parseGpuWorkloadSpec(*spec, fuzz::catalog());
  }
  const auto packed = app::packWorkload(object, fuzz::catalog());
  const auto unpacked = packed.unpack();
  fuzz::require(unpacked.generation == packed.generation);
  fuzz::require(unpacked.targetName == packed.targetName);
  fuzz::require(unpacked.policyName == packed.policyName);
  return 0;
}
