#include "core/heap_pages.h"

#include <malloc.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace gw {

bool prefer_huge_heap_pages(size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  constexpr int kMostFromHeap = 32 << 20;  // glibc's ceiling for the mmap threshold on 64-bit
  if (bytes < 2 * kHuge) return false;
  if (bytes > static_cast<size_t>(kMostFromHeap) - kHuge) bytes = kMostFromHeap - kHuge;
  // The block below must come from the heap (below the mmap threshold), and stay the heap's
  // top once freed (above the trim threshold).
  if (mallopt(M_MMAP_THRESHOLD, kMostFromHeap) == 0) return false;
  if (mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes) * 2) == 0) return false;
  void* block = std::malloc(bytes);  // extends the heap; only its ends are touched
  if (block == nullptr) return false;
  const auto from = (reinterpret_cast<uintptr_t>(block) + kHuge - 1) & ~(kHuge - 1);
  const auto to = (reinterpret_cast<uintptr_t>(block) + bytes) & ~(kHuge - 1);
  const bool advised =
      to > from && ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
  std::free(block);  // back to the top of the heap, where the next allocations come from
  return advised;
}

}  // namespace gw
