// ClassQueue: the waiting queue of a strict (no backfill, no skipping, no preemption) policy
// that re-ranks every waiting job each period, kept without re-ranking them all.
//
// The policy puts each job in a rank class (Policy::rank_class) such that jobs of one class,
// ranked at the same moment, always rank in (submit, id) order. Every job present at the last
// re-rank was ranked at that moment, so inside its class the order is known without any rank:
// only each class's first job needs one, computed when it becomes first. Jobs queued since the
// last re-rank keep the rank they got when queued, as in PendingIndex, until the next re-rank
// joins them to their classes. first() is then the best of the class heads and of those jobs:
// exactly PendingIndex's first entry, with ~10^2 ranks per re-rank instead of one per job.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "sched/pending_index.h"
#include "sched/policy.h"

namespace gw::sched {

class ClassQueue {
 public:
  // A job's rank as of the last re-rank (the job was waiting then).
  using RankFn = std::function<double(uint32_t slot)>;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Queues a job ranked now (`e.key.rank`), in class `cls`.
  void insert(const PendingEntry& e, const RankClassKey& cls);
  // Removes the job in `slot`; false if it is not queued. A class whose first job leaves gets
  // its next one ranked with `rank_at_rerank`.
  bool erase(uint32_t slot, const RankFn& rank_at_rerank);
  // Every queued job is now ranked at this moment: joins the jobs queued since the last
  // re-rank to their classes and ranks each class's first job.
  void rerank(const RankFn& rank_at_rerank);
  // The best-ranked job (rank, then submit, then id), with its current key.
  std::optional<PendingEntry> first() const;
  // Smallest GPU request among waiting jobs other than one of `except_gpus`.
  std::optional<unsigned> min_gpus_except(unsigned except_gpus) const;

 private:
  using Order = std::pair<int64_t, JobId>;  // (submit, id): the order inside a class
  struct Class {
    std::map<Order, PendingEntry> members;  // ranked at the last re-rank
    std::optional<PendingKey> head_key;     // the first member's key, when ranked
  };
  enum class Where : uint8_t { kAbsent, kFresh, kClass };
  struct Loc {
    Where where = Where::kAbsent;
    uint32_t cls = 0;
    PendingKey key;  // fresh: its key as queued
  };
  void rank_head(uint32_t c, const RankFn& rank_at_rerank);

  std::vector<Class> classes_;
  std::map<RankClassKey, uint32_t> class_index_;
  std::vector<Loc> loc_;                             // by slot
  std::map<PendingKey, PendingEntry> fresh_;         // queued since the last re-rank
  std::set<std::pair<PendingKey, uint32_t>> heads_;  // (head key, class)
  std::map<unsigned, size_t> gpu_counts_;            // waiting jobs per GPU request
  size_t size_ = 0;
};

}  // namespace gw::sched
