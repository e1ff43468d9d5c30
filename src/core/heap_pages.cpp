#include "core/heap_pages.h"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

namespace gw {

namespace {

// Takes the heap's top up to 16 bytes short of the next `huge` boundary with one block that is
// held for the run and never written, so that the next block's header lies below the boundary
// and its bytes begin on it. No huge page can back that stretch: its 2 MiB begins below the
// heap or holds pages touched already. Left free, it was where the kept snapshots went first,
// 4 KiB a fault: ~400 faults, some 4 ms of a 256 MB CSV's run on the VMs measured. The header
// must stay below the boundary too: one 4 KiB page touched in a 2 MiB range before it is
// advised keeps the whole range in 4 KiB pages (512 faults).
void skip_to_huge_boundary(uintptr_t huge) {
  constexpr uintptr_t kHeader = 2 * sizeof(size_t);  // a chunk's header before its bytes
  const auto end = reinterpret_cast<uintptr_t>(::sbrk(0));
  const uintptr_t top = end - mallinfo2().keepcost;  // the top chunk runs to the break
  uintptr_t chunk = ((top + kHeader + huge - 1) & ~(huge - 1)) - kHeader - top;
  if (chunk == 0) return;
  if (chunk < 64) chunk += huge;  // too small to be a chunk of its own
  // A chunk is its request plus one size word (rounded to 16): this request makes it `chunk`.
  void* held = std::malloc(chunk - sizeof(size_t));  // address space only, never freed
  // Seen as used, or the compiler may drop an allocation nothing reads.
  asm volatile("" : : "r"(held) : "memory");
}

}  // namespace

bool prefer_huge_heap_pages(size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  constexpr int kMostFromHeap = 32 << 20;  // glibc's ceiling for the mmap threshold on 64-bit
  if (bytes < 2 * kHuge) return false;
  if (bytes > static_cast<size_t>(kMostFromHeap) - kHuge) bytes = kMostFromHeap - kHuge;
  // The block below must come from the heap (below the mmap threshold), and stay the heap's
  // top once freed (above the trim threshold).
  if (mallopt(M_MMAP_THRESHOLD, kMostFromHeap) == 0) return false;
  if (mallopt(M_TRIM_THRESHOLD, static_cast<int>(bytes) * 2) == 0) return false;
  skip_to_huge_boundary(kHuge);
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
