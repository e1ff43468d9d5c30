// Keeps what a doctor run over a huge capture needs in bounded memory:
// - SampleReducer: all snapshots up to a cap; beyond it an evenly strided subset (the stride
//   doubles each time the cap is hit) that always keeps the newest snapshot (the state a report
//   is about) and pins snapshots with an active throttle reason, a new peak (temperature, power,
//   memory used, ECC count), a GPU not read cleanly (lost, a failed reading) or a change in the
//   number of GPUs (one fell off the bus): a moment like that is never skipped by the stride.
// - EventReducer: every event up to a cap per (kind, GPU, code), with exact counts for all.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/observation.h"

namespace gw {

inline constexpr size_t kDefaultSampleCap = 4096;
// The kept snapshots' own size is bounded too, whatever the GPU count: the cap shrinks to what
// this budget holds at the widest snapshot seen (8 GPUs: about 800; 64 GPUs: about 100), never
// below kMinSampleCap (issue 20: doctor --from's peak RSS under 64 MB).
inline constexpr size_t kSampleBudgetBytes = size_t{8} << 20;
inline constexpr size_t kMinSampleCap = 64;
// GPUs of one snapshot kept at most (no machine has more; a dmon log or a table that names ever
// new GPUs would otherwise make each snapshot as wide as the log is long).
inline constexpr size_t kMaxGpusPerSnapshot = 256;
// All that a big input's reading keeps on the heap at most: the snapshots' budget, their strings
// and the kept events, rounded up (heap_pages.h sizes the huge-page range from it).
inline constexpr size_t kCaptureWorkingSetBytes = size_t{14} << 20;
inline constexpr size_t kDefaultEventsPerKey = 1000;
// Events kept in all: past this, each (kind, GPU, code) keeps only its first
// kEventsPerKeyWhenFull, so memory stays bounded however many GPUs and codes a log names
// (every key still has events for the rules, and every count stays exact).
inline constexpr size_t kMaxKeptEvents = 16384;
inline constexpr size_t kEventsPerKeyWhenFull = 16;
// The keys themselves are bounded too (a log naming ever new PCI addresses, an AER report from
// every port): past kKeysWithManyEvents keys a new key keeps one event when full, and past
// kMaxEventKeys keys the events of a new key are only counted, in a note.
inline constexpr size_t kKeysWithManyEvents = 1024;
inline constexpr size_t kMaxEventKeys = 4096;
// Notes naming a key whose events were left out, per input; the rest are counted in one.
inline constexpr size_t kMaxEventNotes = 8;

class SampleReducer {
 public:
  explicit SampleReducer(size_t cap = kDefaultSampleCap) : cap_(cap < 2 ? 2 : cap) {}
  // `last`: the final snapshot of its input, kept whatever the stride.
  void add(const Snapshot& s, bool last = false);
  // The same for a snapshot the caller is done with: moved in when kept, never copied.
  void add(Snapshot&& s, bool last = false);
  size_t seen() const { return seen_; }
  size_t stride() const { return stride_; }
  // Pinned snapshots seen, and the stride that thins them once they fill half the cap.
  size_t pins_seen() const { return pins_seen_; }
  size_t pin_stride() const { return pin_stride_; }
  size_t pinned() const;
  size_t kept() const { return kept_.size(); }
  // GPU readings left out of snapshots wider than kMaxGpusPerSnapshot.
  size_t gpus_left_out() const { return gpus_left_out_; }
  // The snapshot last added with `last` is a snapshot like any other from now on (more of the
  // same series follows it).
  void demote_last();
  // Moves the kept snapshots (oldest first) out.
  std::vector<Snapshot> take();

 private:
  static constexpr size_t kUnpinned = ~size_t{0};
  struct Kept {
    size_t seq;
    size_t pin_seq;  // its place among the pinned ones; kUnpinned
    bool last;       // never dropped
    Snapshot snap;
  };
  bool is_pinned(const Snapshot& s);
  // Whether the next snapshot (`s`) is kept: the widest GPU count and the pins updated.
  bool admit(const Snapshot& s, bool last, size_t& seq, size_t& pin_seq);
  bool keeps(size_t seq, size_t pin_seq, bool last) const {
    return last || seq % stride_ == 0 || (pin_seq != kUnpinned && pin_seq % pin_stride_ == 0);
  }
  void compact();

  size_t cap_;
  size_t stride_ = 1;
  size_t pin_stride_ = 1;
  size_t seen_ = 0;
  size_t pins_seen_ = 0;
  std::vector<Kept> kept_;
  std::vector<Snapshot> spare_;  // dropped snapshots, reused as copy targets
  size_t widest_ = 0;            // the most GPUs in one snapshot so far
  size_t gpus_left_out_ = 0;
  size_t prev_gpus_ = 0;  // the GPU count of the snapshot before
  // The highest reading so far, as two plain scalars: a std::optional copied into a local and
  // back (is_pinned, every snapshot) went through the stack as a value and a flag stored apart
  // and loaded whole, a stalled store-to-load forward each.
  template <class T>
  struct Peak {
    T value{};
    bool set = false;
  };
  Peak<int> max_temp_;
  Peak<uint32_t> max_power_;
  Peak<uint64_t> max_mem_;
  Peak<uint64_t> max_ecc_;
};

class EventReducer {
 public:
  explicit EventReducer(Observation& obs, size_t per_key = kDefaultEventsPerKey);
  void add(Event&& e);
  // The notes about events left out (exact counts are in obs.event_counts), at most
  // kMaxEventNotes naming a key, then one for the rest; the caller lists them.
  std::vector<std::string> finish(std::string_view origin);
  // Events of keys past kMaxEventKeys, neither kept nor counted per key.
  uint64_t untracked() const { return untracked_; }

 private:
  using Key = std::tuple<int, std::string, int64_t>;
  Observation& obs_;
  size_t per_key_;
  std::map<Key, size_t> index_;  // -> position in obs_.event_counts
  std::map<Key, uint64_t> dropped_;
  uint64_t untracked_ = 0;  // events of keys past kMaxEventKeys
};

// The note that says what a reducer left out (none when it kept every snapshot).
void note_reduction(const SampleReducer& r, std::string_view origin, Observation& obs);
// Appends the snapshots of a reducer to obs with a note when some were left out.
void merge_samples(SampleReducer& r, std::string_view origin, Observation& obs);

// After one more input was added (its snapshots start at `first_new`): GPUs are the same GPU
// across inputs when their UUID, else their bus id, matches (a GPU known by both in one input
// lends the other to the rest); never by index. When the inputs cannot be one machine (no
// UUID in common, different host names, one bus id with two UUIDs) the newest input's
// coverage is marked incomplete and a note says so: their GPUs are read side by side.
void check_machines(Observation& obs, size_t first_new, std::string_view origin);

}  // namespace gw
