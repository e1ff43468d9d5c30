// Backing the heap of a one-shot run over big inputs with transparent huge pages.
//
// Why: `doctor --from` on a big capture fills its bounded working set (the kept snapshots,
// ~10 MB at 8 GPUs) once, and each fresh 4 KiB page costs a fault. On the virtual machines
// measured that was ~8,000 faults and 60-70 ms of a 290 ms run (docs/perf/parse.md); with huge
// pages it is a few dozen. glibc only does this when told by an environment variable
// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), so the run asks for it itself.
#pragma once

#include <cstddef>

namespace gw {

// Grows the heap by `bytes` now and advises that range for huge pages (madvise
// MADV_HUGEPAGE), so that the allocations that follow are carved from it. Blocks up to 32 MiB
// are then taken from the heap rather than mapped one by one, and freed memory is not
// returned at once. Process-wide: only for a command that runs once and exits. False when
// nothing was advised: `bytes` under 4 MiB, an allocator that takes no such settings (the
// sanitizers'), a kernel without transparent huge pages.
bool prefer_huge_heap_pages(size_t bytes);

}  // namespace gw
