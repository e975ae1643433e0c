// The operator's allocator is jemalloc (GPUPLACEMENT_JEMALLOC): its size
// classes and thread caches spend about a quarter less CPU per placement
// than glibc's malloc (docs/benchmarks.md, "jemalloc against glibc's
// malloc"), and it returns pages that stay free by itself.
#include <cstdint>
#include <string>

#include <jemalloc/jemalloc.h>

#include "app/memory.h"

namespace gpuplacement::app {
namespace {

std::size_t statistic(const char* name) {
  std::size_t value = 0;
  std::size_t length = sizeof value;
  return mallctl(name, &value, &length, nullptr, 0) == 0 ? value : 0;
}

}  // namespace

void tuneAllocator() {
  // Nothing to tune: large blocks get extents of their own, and pages free
  // for 10 s (its dirty decay) go back to the system as the heap is used.
}

void returnFreedMemory() {
  // Every arena's free pages, now rather than after their decay.
  static const std::string purgeAll = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  mallctl(purgeAll.c_str(), nullptr, nullptr, nullptr, 0);
}

HeapUsage heapUsage() {
  // The statistics are a snapshot taken when the epoch advances.
  std::uint64_t epoch = 1;
  mallctl("epoch", nullptr, nullptr, &epoch, sizeof epoch);
  const auto allocated = statistic("stats.allocated");
  const auto resident = statistic("stats.resident");
  return {allocated, resident > allocated ? resident - allocated : 0, statistic("stats.mapped")};
}

}  // namespace gpuplacement::app
