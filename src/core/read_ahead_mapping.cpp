#include "core/read_ahead_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace gw {
namespace {

constexpr uint64_t kPage = 4096;  // a lower bound of the page size: only used to round down
constexpr uint64_t kDropBatch = uint64_t{1} << 20;
constexpr uint64_t kLookBehind = uint64_t{64} << 10;

uint64_t round_up(uint64_t n, uint64_t to) {
  return (n + to - 1) / to * to;
}

// One byte of each page of a chunk read, the way the reader's first pass will.
void read_each_page(const char* chunk) {
  for (uint64_t at = 0; at < ReadAheadMapping::kChunk; at += kPage)
    (void)*static_cast<const volatile char*>(chunk + at);
}

}  // namespace

std::unique_ptr<ReadAheadMapping> ReadAheadMapping::open(int fd, uint64_t size, Choice choice) {
  if (size == 0) return nullptr;
  std::unique_ptr<ReadAheadMapping> m(new ReadAheadMapping());
  if (!m->set_up(fd, size, choice)) return nullptr;
  return m;
}

ReadAheadMapping::~ReadAheadMapping() {
  if (reserved_ != nullptr) ::munmap(reserved_, reserved_size_);
  if (fd_ >= 0) ::close(fd_);
}

// One reservation holds the view (2 MiB aligned, so that a chunk moves as one huge page) and
// the buffers right after it; the file is mapped over the view's start.
bool ReadAheadMapping::set_up(int fd, uint64_t size, Choice choice) {
  fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (fd_ < 0) return false;
  size_ = size;
  whole_chunks_ = size / kChunk;
  const uint64_t view_bytes = round_up(size, kChunk);
  reserved_size_ = view_bytes + kSlots * kChunk + kChunk;
  void* r = ::mmap(nullptr, reserved_size_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  if (r == MAP_FAILED) return false;
  reserved_ = r;
  view_ = reinterpret_cast<char*>(round_up(reinterpret_cast<uintptr_t>(r), kChunk));
  pool_ = view_ + view_bytes;
  if (::mmap(view_, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_, 0) == MAP_FAILED) return false;
  (void)::madvise(view_, size, MADV_SEQUENTIAL);
  if (::mmap(pool_, kSlots * kChunk, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
    return false;
  (void)::madvise(pool_, kSlots * kChunk, MADV_HUGEPAGE);  // refused: 4 KiB pages, still reused
  (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  for (size_t s = kSlots; s-- > 0;) free_slots_.push_back(s);
  if (choice == Choice::kCheaper && mapping_costs_less()) copying_ = false;
  fill_from(0);
  return true;
}

// Chunks 0 and 3 faulted in through the file mapping against chunks 1 and 2 copied in (pread
// and the move into the view), each timed in this thread's CPU time until every page of the
// chunk in the view has been read once, and the two of a way added up.
// - The first reads count: a hypervisor that shadows the guest's page tables charges a mapped
//   page there, not at MADV_POPULATE_READ (1 ms a chunk against 0.15 ms to populate it, where a
//   copy cost 0.4 ms).
// - Each way gets an even and an odd chunk, and the sum rather than the cheaper: where the page
//   cache holds a file in 2 MiB folios, such a chunk is mapped by one entry, 20-40 us, and
//   the chunks in small folios around it cost 0.6-1.2 ms. One kernel log had them every other
//   chunk; the even chunks alone chose the mapping there, at 3x the copies' cost.
// A buffer is touched before its clock starts: its first fill is paid once per run, the copies'
// work every chunk. The chunks are left as the reader will find them (mapped, copied). False
// where a step is refused (no MADV_POPULATE_READ before Linux 5.14) or the file has fewer than
// five whole chunks.
bool ReadAheadMapping::mapping_costs_less() {
  static_assert(kSlots >= 2, "two chunks are copied in to time the copies");
  if (whole_chunks_ < 5) return false;
  const auto cpu_ns = [] {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
  };
  const auto map_in = [&](uint64_t chunk) -> int64_t {
    const int64_t t0 = cpu_ns();
    if (::madvise(chunk_at(chunk), kChunk, MADV_POPULATE_READ) != 0) return -1;
    read_each_page(chunk_at(chunk));
    return cpu_ns() - t0;
  };
  const auto copy_into_view = [&](uint64_t chunk) -> int64_t {
    const size_t slot = free_slots_.back();
    if (::madvise(slot_at(slot), kChunk, MADV_POPULATE_WRITE) != 0) return -1;
    const int64_t t0 = cpu_ns();
    if (!copy_in(chunk, slot)) return -1;
    read_each_page(chunk_at(chunk));
    const int64_t took = cpu_ns() - t0;
    free_slots_.pop_back();
    in_view_.push_back({chunk, slot});
    return took;
  };
  const int64_t ns[4] = {map_in(0), copy_into_view(1), copy_into_view(2), map_in(3)};
  next_ = 4;
  if (std::any_of(std::begin(ns), std::end(ns), [](int64_t n) { return n < 0; })) return false;
  return ns[0] + ns[3] < ns[1] + ns[2];
}

void ReadAheadMapping::advance(uint64_t done) {
  // Readers may look a little behind what they report (the kernel-log parser reads up to
  // 16 KiB back for the lines of an Oops report): that stays copied in until the end.
  if (done < size_)
    done = done > kLookBehind ? done - kLookBehind : 0;
  else
    done = size_;
  while (!in_view_.empty() && (in_view_.front().chunk + 1) * kChunk <= done) {
    const InView v = in_view_.front();
    const uint64_t to = std::max(next_, done / kChunk);
    if (copying_ && to < whole_chunks_) {
      const Moved m = move_copy(v.chunk, to);
      if (m == Moved::kNot) {
        copying_ = false;  // the copy stays: it holds the file's bytes
        break;
      }
      in_view_.pop_front();
      if (m == Moved::kAndFilled) {
        in_view_.push_back({to, v.slot});
        next_ = to + 1;
      } else {
        free_slots_.push_back(v.slot);  // the buffer is gone; the file is mapped at both
        copying_ = false;
      }
      continue;
    }
    if (!give_back(v.chunk, v.slot)) {
      copying_ = false;  // the copy stays: it holds the file's bytes
      break;
    }
    in_view_.pop_front();
    free_slots_.push_back(v.slot);
  }
  // The file pages below `done`, a MiB at a time, around the copies still in the view
  // (MADV_DONTNEED on a copy would leave zeros where the file's bytes were).
  const uint64_t end = done / kPage * kPage;
  if (end >= dropped_ + kDropBatch) {
    uint64_t from = dropped_;
    for (const InView& v : in_view_) {
      const uint64_t b = v.chunk * kChunk;
      if (b >= end) break;
      if (b > from) (void)::madvise(view_ + from, b - from, MADV_DONTNEED);
      from = std::max(from, b + kChunk);
    }
    if (end > from) (void)::madvise(view_ + from, end - from, MADV_DONTNEED);
    dropped_ = end;
  }
  fill_from(done / kChunk);
}

// Copies chunks in from `chunk` on while buffers are free; the chunks skipped stay mapped.
void ReadAheadMapping::fill_from(uint64_t chunk) {
  next_ = std::max(next_, chunk);
  while (copying_ && !free_slots_.empty() && next_ < whole_chunks_) {
    const size_t slot = free_slots_.back();
    if (!copy_in(next_, slot)) {
      copying_ = false;
      break;
    }
    free_slots_.pop_back();
    in_view_.push_back({next_, slot});
    ++next_;
  }
}

// The file's bytes of `chunk` into `to` (kChunk bytes).
bool ReadAheadMapping::read_chunk(char* to, uint64_t chunk) const {
  const uint64_t off = chunk * kChunk;
  uint64_t got = 0;
  while (got < kChunk) {
    const ssize_t n = ::pread(fd_, to + got, kChunk - got, static_cast<off_t>(off + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // an error, or the file shrank
    got += static_cast<uint64_t>(n);
  }
  return true;
}

// The file mapped over `chunk` again; the view would read zeros there otherwise.
void ReadAheadMapping::map_file(uint64_t chunk) const {
  if (::mmap(chunk_at(chunk), kChunk, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_,
             static_cast<off_t>(chunk * kChunk)) != MAP_FAILED)
    return;
  std::fputs("gpuwarden: could not restore the mapping of an input file\n", stderr);
  std::abort();
}

// The copy of `from`, which the reader is done with, moves straight to `to` and is filled
// there: one page-table move per chunk, where giving it back to its buffer and moving the
// buffer in again took two (each a trap to the hypervisor on some virtual machines).
ReadAheadMapping::Moved ReadAheadMapping::move_copy(uint64_t from, uint64_t to) {
  if (::mremap(chunk_at(from), kChunk, kChunk, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
               chunk_at(to)) == MAP_FAILED)
    return Moved::kNot;
  // Until both are mended `from` reads as zeros and `to` holds the bytes of `from`; nothing
  // reads the view before advance() returns.
  const bool filled = read_chunk(chunk_at(to), to);
  map_file(from);
  if (filled) return Moved::kAndFilled;
  map_file(to);
  return Moved::kButNotFilled;
}

bool ReadAheadMapping::copy_in(uint64_t chunk, size_t slot) {
  char* buf = slot_at(slot);
  if (!read_chunk(buf, chunk)) return false;  // the mapping stays
  // MREMAP_DONTUNMAP leaves the buffer's range mapped (empty): a hole in the reservation
  // could be taken by any mmap in the process (malloc's among them), and moving the copy back
  // would then land on it. The copy stays writable: making it read-only and writable again
  // cost ~10 ms per 256 MB (two page-table walks per chunk), and nothing writes to the view.
  if (::mremap(buf, kChunk, kChunk, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
               chunk_at(chunk)) == MAP_FAILED)
    return false;  // MREMAP_DONTUNMAP needs Linux 5.13 for this; nothing moved
  return true;
}

bool ReadAheadMapping::give_back(uint64_t chunk, size_t slot) {
  char* at = chunk_at(chunk);
  char* buf = slot_at(slot);
  // The chunk's range stays mapped (empty) until the file is mapped over it: never a hole.
  if (::mremap(at, kChunk, kChunk, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, buf) ==
      MAP_FAILED)
    return false;
  if (::mmap(at, kChunk, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_,
             static_cast<off_t>(chunk * kChunk)) != MAP_FAILED)
    return true;
  // The chunk's range reads as zeros now: the copy goes back, it holds the file's bytes.
  if (::mremap(buf, kChunk, kChunk, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, at) !=
      MAP_FAILED)
    return false;
  std::fputs("gpuwarden: could not restore the mapping of an input file\n", stderr);
  std::abort();  // the view would give zeros for the file's bytes
}

}  // namespace gw
