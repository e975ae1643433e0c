#pragma once

#include <cstddef>

namespace gpuplacement::app {

// glibc's allocator, tuned for a long-lived process whose large buffers
// (list pages, watch lines) come and go: they are mapped and unmapped
// directly instead of fragmenting the heap.
void tuneAllocator();

// Hands freed heap pages back to the system; after a full list, whose
// transient buffers would otherwise stay resident.
void returnFreedMemory();

// What malloc holds, in bytes (mallinfo2). `free` is free chunks inside the
// heap: M_TRIM_THRESHOLD returns only the heap's top, so what a burst frees
// in the middle stays resident until returnFreedMemory(); some of it never
// goes (chunks smaller than a page).
struct HeapUsage {
  std::size_t inUse = 0;   // allocated chunks in the heap
  std::size_t free = 0;    // free chunks in the heap
  std::size_t mapped = 0;  // large blocks mapped on their own
};
HeapUsage heapUsage();

}  // namespace gpuplacement::app
