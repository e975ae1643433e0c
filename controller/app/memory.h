#pragma once

#include <cstddef>

namespace gpuplacement::app {

// The allocator, tuned for a long-lived process whose large buffers (list
// pages, watch lines) come and go: one implementation per allocator,
// memory_jemalloc.cc (the operator's) and memory_glibc.cc.
void tuneAllocator();

// Hands freed heap pages back to the system; after a full list, whose
// transient buffers would otherwise stay resident.
void returnFreedMemory();

// What the allocator holds, in bytes.
struct HeapUsage {
  std::size_t inUse = 0;  // allocated
  // Resident but not allocated: freed pages not yet returned (and, with
  // jemalloc, its own bookkeeping). glibc's M_TRIM_THRESHOLD returns only
  // the heap's top, so what a burst frees in the middle stays until
  // returnFreedMemory(); jemalloc returns pages free for 10 s by itself.
  std::size_t free = 0;
  // glibc: the large blocks mapped on their own; jemalloc: all it has mapped.
  std::size_t mapped = 0;
};
HeapUsage heapUsage();

}  // namespace gpuplacement::app
