#include "sched/rank_classes.h"

#include <algorithm>

namespace gw::sched {

void ClassQueue::insert(const PendingEntry& e, const RankClassKey& cls) {
  auto [it, added] = class_index_.try_emplace(cls, static_cast<uint32_t>(classes_.size()));
  if (added) classes_.emplace_back();
  if (loc_.size() <= e.slot) loc_.resize(e.slot + 1);
  loc_[e.slot] = Loc{Where::kFresh, it->second, e.key};
  fresh_.emplace(e.key, e);
  ++gpu_counts_[e.gpus];
  ++size_;
}

void ClassQueue::rank_head(uint32_t c, const RankFn& rank_at_rerank) {
  Class& k = classes_[c];
  if (k.head_key) heads_.erase({*k.head_key, c});
  k.head_key.reset();
  if (k.members.empty()) return;
  const PendingEntry& e = k.members.begin()->second;
  k.head_key = PendingKey{rank_at_rerank(e.slot), e.key.submit_ms, e.key.id};
  heads_.emplace(*k.head_key, c);
}

bool ClassQueue::erase(uint32_t slot, const RankFn& rank_at_rerank) {
  if (slot >= loc_.size() || loc_[slot].where == Where::kAbsent) return false;
  Loc& l = loc_[slot];
  unsigned gpus = 0;
  if (l.where == Where::kFresh) {
    auto it = fresh_.find(l.key);
    gpus = it->second.gpus;
    fresh_.erase(it);
  } else {
    Class& k = classes_[l.cls];
    const Order order{l.key.submit_ms, l.key.id};
    auto it = k.members.find(order);
    gpus = it->second.gpus;
    const bool was_head = it == k.members.begin();
    k.members.erase(it);
    if (was_head) rank_head(l.cls, rank_at_rerank);
  }
  if (auto c = gpu_counts_.find(gpus); --c->second == 0) gpu_counts_.erase(c);
  l.where = Where::kAbsent;
  --size_;
  return true;
}

void ClassQueue::rerank(const RankFn& rank_at_rerank) {
  for (auto& [key, e] : fresh_) {
    Loc& l = loc_[e.slot];
    classes_[l.cls].members.emplace(Order{key.submit_ms, key.id}, e);
    l.where = Where::kClass;
  }
  fresh_.clear();
  // Every class head is re-ranked: the moment (and fair-share factors) changed for all.
  for (uint32_t c = 0; c < classes_.size(); ++c) rank_head(c, rank_at_rerank);
}

std::optional<PendingEntry> ClassQueue::first() const {
  const PendingEntry* best = nullptr;
  PendingKey key;
  if (!heads_.empty()) {
    const auto& [k, c] = *heads_.begin();
    best = &classes_[c].members.begin()->second;
    key = k;
  }
  if (!fresh_.empty() && (!best || fresh_.begin()->first < key)) {
    best = &fresh_.begin()->second;
    key = fresh_.begin()->first;
  }
  if (!best) return std::nullopt;
  PendingEntry out = *best;
  out.key = key;
  return out;
}

std::optional<unsigned> ClassQueue::min_gpus_except(unsigned except_gpus) const {
  for (const auto& [gpus, count] : gpu_counts_) {
    if (gpus == except_gpus && count == 1) continue;
    return gpus;
  }
  return std::nullopt;
}

}  // namespace gw::sched
