// PendingIndex: the waiting jobs in policy order, built so that a backfill pass can examine
// every waiting job cheaply. Jobs sit in sorted blocks of at most kBlock entries; each block
// keeps its smallest GPU request and, per GPU-size class, the smallest time limit among jobs
// of that class or smaller. A query "next job after K that fits in F GPUs now and either ends
// within L or fits in F_long" skips whole blocks on those summaries and scans only blocks that
// may hold a match.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "sched/job.h"

namespace gw::sched {

struct PendingKey {
  double rank = 0;
  int64_t submit_ms = 0;
  JobId id = 0;
  bool operator<(const PendingKey& o) const {
    if (rank != o.rank) return rank < o.rank;
    if (submit_ms != o.submit_ms) return submit_ms < o.submit_ms;
    return id < o.id;
  }
  bool operator==(const PendingKey& o) const {
    return rank == o.rank && submit_ms == o.submit_ms && id == o.id;
  }
};

struct PendingEntry {
  PendingKey key;
  unsigned gpus = 1;
  int64_t limit_ms = 0;  // the estimate backfill plans with
  uint32_t slot = 0;     // the owner's index of the job (saves a lookup by id)
};

class PendingIndex {
 public:
  static constexpr size_t kBlock = 64;
  static constexpr size_t kClasses = 16;  // GPU-size classes: ceil(log2(gpus)), capped

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void insert(const PendingEntry& e);
  bool erase(const PendingKey& key);
  // Replaces the whole content (after re-ranking); `entries` need not be sorted.
  void rebuild(std::vector<PendingEntry> entries);
  // Re-ranks every entry with `rank_of(entry)`. Ranks usually keep their order (fair-share
  // factors and ages move slowly), so this updates in place and sorts only when needed.
  template <class F>
  void rerank(F&& rank_of) {
    bool sorted = true;
    const PendingKey* prev = nullptr;
    for (BlockPtr& b : blocks_) {
      for (PendingEntry& e : b->entries) {
        e.key.rank = rank_of(e);
        if (prev && e.key < *prev) sorted = false;
        prev = &e.key;
      }
    }
    if (sorted) return;
    std::vector<PendingEntry> all;
    all.reserve(size_);
    for (BlockPtr& b : blocks_) all.insert(all.end(), b->entries.begin(), b->entries.end());
    reorder(std::move(all));
  }
  std::optional<PendingEntry> first() const;
  // First entry after `after` (or from the start) with gpus <= fit_now and
  // (limit_ms <= max_limit_ms or gpus <= fit_long).
  std::optional<PendingEntry> next_candidate(const std::optional<PendingKey>& after,
                                             unsigned fit_now, int64_t max_limit_ms,
                                             unsigned fit_long) const;
  // Smallest GPU request among waiting jobs other than `except` (nullopt if none).
  std::optional<unsigned> min_gpus_except(const PendingKey& except, unsigned except_gpus) const;
  template <class F>
  void for_each(F&& f) const {
    for (const BlockPtr& b : blocks_)
      for (const PendingEntry& e : b->entries) f(e);
  }
  // Visits entries in order while `f(entry)` returns true.
  template <class F>
  void for_each_while(F&& f) const {
    for (const BlockPtr& b : blocks_)
      for (const PendingEntry& e : b->entries)
        if (!f(e)) return;
  }

 private:
  struct Block {
    std::vector<PendingEntry> entries;
    unsigned min_gpus = UINT32_MAX;
    std::array<int64_t, kClasses> min_limit_upto{};  // by GPU-size class, prefix minimum
    // Erasures since the summary was computed. A summary is a lower bound, so after an erase
    // it stays valid (only looser); it is recomputed every kResummarize erasures.
    uint32_t stale = 0;
  };
  static constexpr uint32_t kResummarize = 64;
  static size_t size_class(unsigned gpus);
  static void summarize(Block& b);
  void fill_blocks(const std::vector<PendingEntry>& entries);
  // Re-sorts the same entries after re-ranking and rebuilds the blocks (the GPU counts stay).
  // Ranks move little between re-rankings, so only the entries that fell out of order are
  // sorted and merged back: O(n + k log k) for k such entries, a full sort when k is large.
  void reorder(std::vector<PendingEntry> entries);
  size_t block_for(const PendingKey& key) const;

  // Blocks by pointer: inserting or dropping a block shifts pointers, not whole blocks.
  using BlockPtr = std::unique_ptr<Block>;
  std::vector<BlockPtr> blocks_;
  std::map<unsigned, size_t> gpu_counts_;  // how many waiting jobs ask for each GPU count
  size_t size_ = 0;
};

}  // namespace gw::sched
