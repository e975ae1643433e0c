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

// The same, only when more than `freeBytes` lie free inside the heap (a
// burst of placements, its queued Events and response bodies, has ended).
// Returns whether it trimmed.
bool returnFreedMemoryAbove(std::size_t freeBytes);

}  // namespace gpuplacement::app
