// A big file read once from the start, the way grep reads it, behind the same contiguous view a
// mapping gives: the chunks just ahead of the reader are copied in with pread() into a few
// recycled 2 MiB buffers and moved into place (mremap); a chunk the reader is done with goes
// back to being a plain, unfaulted file mapping, its buffer moved straight on to the next chunk
// and filled there. Every byte of the view is the file's whenever the reader can look, so a
// parser that looks behind, or far ahead, still reads the right bytes (from the file mapping,
// as before, only slower).
//
// Why: a mapping costs a page-table entry per 4 KiB page, set up on a fault. On some virtual
// machines that costs far more than copying the page: touching a 256 MB file through a mapping
// took ~140 ms of CPU, through read() into a reused buffer ~27 ms, and through this ~40 ms
// (bench/parse/page_cost, docs/perf/parse.md). The buffers are advised for transparent huge
// pages, so where the kernel grants them each chunk moves as one page-table entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace gw {

class ReadAheadMapping {
 public:
  static constexpr uint64_t kChunk = uint64_t{2} << 20;  // the huge-page size on x86-64 and arm64
  static constexpr size_t kSlots = 2;                    // copied-in chunks at most: 4 MiB

  // kCopy: copy every whole chunk in, as above. kCheaper: first time two chunks each way on
  // this machine (chunks 0 and 3 faulted in through the mapping, 1 and 2 copied into buffers
  // already touched, each up to its first read of every page) and go on with the copies only
  // where they cost less CPU. The same machine type has measured either way round: a mapping
  // ~3x a copy under one hypervisor, ~0.65x under another (docs/perf/parse.md). The view holds
  // the file's bytes whichever is chosen.
  enum class Choice { kCopy, kCheaper };

  // Maps `fd` (its first `size` bytes, size > 0) and copies the first chunks in (kCheaper: times
  // chunks 0 to 3 first); the descriptor is duplicated, the caller keeps its own. nullptr when the
  // view cannot be set up: map the file plainly then.
  static std::unique_ptr<ReadAheadMapping> open(int fd, uint64_t size,
                                                Choice choice = Choice::kCopy);
  ~ReadAheadMapping();
  ReadAheadMapping(const ReadAheadMapping&) = delete;
  ReadAheadMapping& operator=(const ReadAheadMapping&) = delete;

  const char* data() const { return view_; }
  uint64_t size() const { return size_; }

  // The reader is done with [0, done): the copied chunks wholly below it (less 64 KiB it may
  // still look back at, until `done` is the end) go back to the file mapping, their buffers
  // take the next chunks, and the file pages below it are dropped (MADV_DONTNEED).
  void advance(uint64_t done);

  // Chunks now held as copies (for tests: 0 once copying stopped or the file is read).
  size_t copied_chunks() const { return in_view_.size(); }
  // False once a call failed: from then on the rest of the file is read through the mapping.
  bool copying() const { return copying_; }

 private:
  ReadAheadMapping() = default;
  bool set_up(int fd, uint64_t size, Choice choice);
  bool mapping_costs_less();
  void fill_from(uint64_t chunk);
  bool read_chunk(char* to, uint64_t chunk) const;
  void map_file(uint64_t chunk) const;
  enum class Moved { kNot, kAndFilled, kButNotFilled };
  Moved move_copy(uint64_t from, uint64_t to);
  bool copy_in(uint64_t chunk, size_t slot);
  bool give_back(uint64_t chunk, size_t slot);
  char* chunk_at(uint64_t chunk) const { return view_ + chunk * kChunk; }
  char* slot_at(size_t slot) const { return pool_ + slot * kChunk; }

  int fd_ = -1;
  void* reserved_ = nullptr;  // view, buffers and alignment slack, unmapped as one
  size_t reserved_size_ = 0;
  char* view_ = nullptr;  // 2 MiB aligned, the file's bytes
  char* pool_ = nullptr;  // kSlots buffers, each a hole while its chunk is in the view
  uint64_t size_ = 0;
  uint64_t whole_chunks_ = 0;  // the last partial chunk is never copied
  uint64_t next_ = 0;          // the next chunk to copy in
  uint64_t dropped_ = 0;       // [0, dropped_) of the file mapping was handed back
  struct InView {
    uint64_t chunk;
    size_t slot;
  };
  std::deque<InView> in_view_;  // oldest first
  std::vector<size_t> free_slots_;
  bool copying_ = true;
};

}  // namespace gw
