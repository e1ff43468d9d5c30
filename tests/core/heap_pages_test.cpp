#include "core/heap_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace gw {
namespace {

// The VmFlags of the mapping that holds `p` (/proc/self/smaps), "" when none does.
std::string flags_of_mapping_holding(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t from = 0, to = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> from >> dash >> to && dash == '-') {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kGlibcMalloc = false;  // the sanitizer's allocator takes no mallopt settings
#else
constexpr bool kGlibcMalloc = true;
#endif

// Run in a child: the settings are process-wide. 0: the block is advised, 1: it is not, 2:
// the call said it advised nothing.
int block_after_the_call_is_advised(bool call) {
  if (call && !prefer_huge_heap_pages(size_t{16} << 20)) return 2;
  auto* p = static_cast<char*>(std::malloc(size_t{4} << 20));  // above the default threshold
  // Its third MiB: the advised range starts at the first 2 MiB boundary.
  const std::string flags = flags_of_mapping_holding(p + (size_t{3} << 20));
  std::free(p);
  return flags.find(" hg") != std::string::npos ? 0 : 1;
}

TEST(HeapPages, AllocationsThatFollowComeFromTheRangeAdvisedForHugePages) {
  EXPECT_EXIT(std::exit(block_after_the_call_is_advised(true)),
              ::testing::ExitedWithCode(kGlibcMalloc ? 0 : 2), "");
  // Without the call the block is a mapping of its own, not advised: the check can fail.
  EXPECT_EXIT(std::exit(block_after_the_call_is_advised(false)), ::testing::ExitedWithCode(1), "");
}

// 0: the first block allocated after the call begins in the advised range, 1: below it (in the
// heap's first, partial 2 MiB, which faults in 4 KiB pages), 2: the call advised nothing.
int first_block_after_the_call_is_advised() {
  if (!prefer_huge_heap_pages(size_t{16} << 20)) return 2;
  // Larger than any free chunk the process could hold from before: it comes from the top.
  auto* p = static_cast<char*>(std::malloc(size_t{512} << 10));
  const bool advised = flags_of_mapping_holding(p).find(" hg") != std::string::npos;
  std::free(p);
  return advised ? 0 : 1;
}

TEST(HeapPages, TheFirstBlockAfterTheCallIsInTheAdvisedRange) {
  EXPECT_EXIT(std::exit(first_block_after_the_call_is_advised()),
              ::testing::ExitedWithCode(kGlibcMalloc ? 0 : 2), "");
}

TEST(HeapPages, SmallRequestsChangeNothing) {
  EXPECT_EXIT(
      {
        if (prefer_huge_heap_pages(4096)) std::exit(2);
        auto* p = static_cast<char*>(std::malloc(size_t{4} << 20));
        const bool advised =
            flags_of_mapping_holding(p + (size_t{3} << 20)).find(" hg") != std::string::npos;
        std::free(p);
        std::exit(advised ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace gw
