// What it costs this machine to bring bytes into a process, the yardstick behind
// core/read_ahead_mapping.h and core/heap_pages.h: CPU time (user + system) of touching every
// page of FILE through a plain mapping, through a mapping whose page-table entries one
// madvise(MADV_POPULATE_READ) makes per MiB, through read() into one reused 1 MiB buffer (grep's
// way) and through ReadAheadMapping (copying, and choosing the cheaper way as doctor does); and
// of the first touch of 32 MiB of fresh heap, in 4 KiB pages and advised for huge pages. Best
// of REPS (default 5), in that order each round.
//
//   build/release/bench/parse/page_cost FILE [REPS]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/read_ahead_mapping.h"

namespace {

double cpu_ms() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  const auto ms = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
  };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

constexpr size_t kPage = 4096;
constexpr size_t kStep = size_t{1} << 20;  // the reader says how far it is every MiB
volatile uint64_t sink = 0;                // keeps the reads

uint64_t touch(const char* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i < n; i += kPage) s += static_cast<unsigned char>(p[i]);
  return s;
}

void through_mapping(int fd, size_t size) {
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) std::exit(1);
  (void)::madvise(m, size, MADV_SEQUENTIAL);
  const auto* p = static_cast<const char*>(m);
  for (size_t off = 0; off < size; off += kStep) {
    const size_t n = std::min(kStep, size - off);
    sink = sink + touch(p + off, n);
    (void)::madvise(const_cast<char*>(p) + off / kPage * kPage, n / kPage * kPage, MADV_DONTNEED);
  }
  ::munmap(m, size);
}

// As through_mapping, each MiB's page-table entries made in one call before it is read.
void through_populated_mapping(int fd, size_t size) {
  void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (m == MAP_FAILED) std::exit(1);
  auto* p = static_cast<char*>(m);
  for (size_t off = 0; off < size; off += kStep) {
    const size_t n = std::min(kStep, size - off);
    (void)::madvise(p + off, (n + kPage - 1) / kPage * kPage, MADV_POPULATE_READ);
    sink = sink + touch(p + off, n);
    (void)::madvise(p + off / kPage * kPage, n / kPage * kPage, MADV_DONTNEED);
  }
  ::munmap(m, size);
}

void through_read(int fd, size_t) {
  std::vector<char> buf(kStep);
  ssize_t n = 0;
  off_t off = 0;
  while ((n = ::pread(fd, buf.data(), buf.size(), off)) > 0) {
    sink = sink + touch(buf.data(), static_cast<size_t>(n));
    off += n;
  }
}

void through_read_ahead(int fd, size_t size, gw::ReadAheadMapping::Choice choice) {
  auto m = gw::ReadAheadMapping::open(fd, size, choice);
  if (!m) std::exit(1);
  for (size_t off = 0; off < size; off += kStep) {
    sink = sink + touch(m->data() + off, std::min(kStep, size - off));
    m->advance(off + std::min(kStep, size - off));
  }
}

void fresh_heap(bool huge) {
  constexpr size_t kBytes = size_t{32} << 20, kHuge = size_t{2} << 20;
  void* m =
      ::mmap(nullptr, kBytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) std::exit(1);
  auto* p = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(m) + kHuge - 1) & ~(kHuge - 1));
  if (huge) (void)::madvise(p, kBytes, MADV_HUGEPAGE);
  for (size_t i = 0; i < kBytes; i += kPage) p[i] = 1;
  ::munmap(m, kBytes + kHuge);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: page_cost FILE [REPS]\n");
    return 64;
  }
  const int fd = ::open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || st.st_size == 0) {
    std::perror(argv[1]);
    return 1;
  }
  const auto size = static_cast<size_t>(st.st_size);
  const int reps = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  struct Way {
    const char* name;
    std::function<void()> run;
    double best = 1e18;
  };
  std::vector<Way> ways = {
      {"file through a mapping (4 KiB faults)", [&] { through_mapping(fd, size); }},
      {"file through a mapping populated per MiB", [&] { through_populated_mapping(fd, size); }},
      {"file through read() into a 1 MiB buffer", [&] { through_read(fd, size); }},
      {"file through ReadAheadMapping (copies)",
       [&] { through_read_ahead(fd, size, gw::ReadAheadMapping::Choice::kCopy); }},
      {"file through ReadAheadMapping (cheaper way)",
       [&] { through_read_ahead(fd, size, gw::ReadAheadMapping::Choice::kCheaper); }},
      {"32 MiB of fresh heap, 4 KiB pages", [] { fresh_heap(false); }},
      {"32 MiB of fresh heap, advised for huge pages", [] { fresh_heap(true); }},
  };
  for (int r = 0; r < reps; ++r)
    for (auto& w : ways) {
      const double t0 = cpu_ms();
      w.run();
      w.best = std::min(w.best, cpu_ms() - t0);
    }
  std::printf("# %s, %zu MB, best of %d\n", argv[1], size >> 20, reps);
  for (const auto& w : ways) std::printf("%-46s %8.1f ms CPU\n", w.name, w.best);
  ::close(fd);
  return 0;
}
