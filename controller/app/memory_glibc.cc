// glibc's malloc, where the operator is built without jemalloc
// (GPUPLACEMENT_JEMALLOC=OFF; sanitizer trees, whose allocator stands in
// for both).
#include <malloc.h>

#include "app/memory.h"

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

HeapUsage heapUsage() {
  const auto info = mallinfo2();
  return {info.uordblks, info.fordblks, info.hblkhd};
}

}  // namespace gpuplacement::app
