#include "app/memory.h"

#include <malloc.h>

namespace gpuplacement::app {

void tuneAllocator() {
  // A fixed threshold also turns off glibc's dynamic one, which after the
  // first big free would serve every later page from the heap.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
}

void returnFreedMemory() {
  malloc_trim(0);
}

bool returnFreedMemoryAbove(std::size_t freeBytes) {
  // fordblks counts free chunks inside the heap, which M_TRIM_THRESHOLD
  // never returns: only its top is trimmed on free.
  if (mallinfo2().fordblks <= freeBytes) {
    return false;
  }
  malloc_trim(0);
  return true;
}

}  // namespace gpuplacement::app
