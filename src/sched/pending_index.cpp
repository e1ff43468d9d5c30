#include "sched/pending_index.h"

#include <algorithm>
#include <bit>
#include <iterator>

namespace gw::sched {

size_t PendingIndex::size_class(unsigned gpus) {
  const unsigned c = gpus <= 1 ? 0u : static_cast<unsigned>(std::bit_width(gpus - 1));
  return std::min<size_t>(c, kClasses - 1);
}

void PendingIndex::summarize(Block& b) {
  b.stale = 0;
  b.min_gpus = UINT32_MAX;
  b.min_limit_upto.fill(INT64_MAX);
  for (const PendingEntry& e : b.entries) {
    b.min_gpus = std::min(b.min_gpus, e.gpus);
    auto& slot = b.min_limit_upto[size_class(e.gpus)];
    slot = std::min(slot, e.limit_ms);
  }
  for (size_t c = 1; c < kClasses; ++c)
    b.min_limit_upto[c] = std::min(b.min_limit_upto[c], b.min_limit_upto[c - 1]);
}

// The block whose range holds `key`: the first block whose last key is not below it.
size_t PendingIndex::block_for(const PendingKey& key) const {
  auto it = std::lower_bound(
      blocks_.begin(), blocks_.end(), key,
      [](const BlockPtr& b, const PendingKey& k) { return b->entries.back().key < k; });
  if (it == blocks_.end()) return blocks_.empty() ? 0 : blocks_.size() - 1;
  return static_cast<size_t>(it - blocks_.begin());
}

void PendingIndex::insert(const PendingEntry& e) {
  ++size_;
  ++gpu_counts_[e.gpus];
  if (blocks_.empty()) {
    blocks_.push_back(std::make_unique<Block>());
    blocks_.back()->entries.push_back(e);
    summarize(*blocks_.back());
    return;
  }
  const size_t bi = block_for(e.key);
  Block& b = *blocks_[bi];
  auto pos = std::upper_bound(b.entries.begin(), b.entries.end(), e.key,
                              [](const PendingKey& k, const PendingEntry& x) { return k < x.key; });
  b.entries.insert(pos, e);
  if (b.entries.size() <= 2 * kBlock) {
    b.min_gpus = std::min(b.min_gpus, e.gpus);
    for (size_t c = size_class(e.gpus); c < kClasses; ++c)
      b.min_limit_upto[c] = std::min(b.min_limit_upto[c], e.limit_ms);
    return;
  }
  auto tail = std::make_unique<Block>();
  tail->entries.assign(b.entries.begin() + static_cast<std::ptrdiff_t>(kBlock), b.entries.end());
  b.entries.resize(kBlock);
  summarize(b);
  summarize(*tail);
  blocks_.insert(blocks_.begin() + static_cast<std::ptrdiff_t>(bi) + 1, std::move(tail));
}

bool PendingIndex::erase(const PendingKey& key) {
  if (blocks_.empty()) return false;
  const size_t bi = block_for(key);
  Block& b = *blocks_[bi];
  auto pos = std::lower_bound(b.entries.begin(), b.entries.end(), key,
                              [](const PendingEntry& x, const PendingKey& k) { return x.key < k; });
  if (pos == b.entries.end() || !(pos->key == key)) return false;
  auto cnt = gpu_counts_.find(pos->gpus);
  if (--cnt->second == 0) gpu_counts_.erase(cnt);
  b.entries.erase(pos);
  --size_;
  if (b.entries.empty()) {
    blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(bi));
  } else if (++b.stale >= kResummarize) {
    summarize(b);
  }
  return true;
}

void PendingIndex::reorder(std::vector<PendingEntry> entries) {
  const auto by_key = [](const PendingEntry& a, const PendingEntry& b) { return a.key < b.key; };
  std::vector<PendingEntry> kept, moved;
  kept.reserve(entries.size());
  for (const PendingEntry& e : entries) {
    if (!kept.empty() && e.key < kept.back().key)
      moved.push_back(e);
    else
      kept.push_back(e);
  }
  if (moved.size() * 8 > entries.size()) {
    std::sort(entries.begin(), entries.end(), by_key);
  } else {
    std::sort(moved.begin(), moved.end(), by_key);
    entries.clear();
    std::merge(kept.begin(), kept.end(), moved.begin(), moved.end(), std::back_inserter(entries),
               by_key);
  }
  blocks_.clear();
  fill_blocks(entries);
}

// Cuts sorted entries into blocks of kBlock.
void PendingIndex::fill_blocks(const std::vector<PendingEntry>& entries) {
  for (size_t i = 0; i < entries.size(); i += kBlock) {
    auto b = std::make_unique<Block>();
    const size_t end = std::min(entries.size(), i + kBlock);
    b->entries.assign(entries.begin() + static_cast<std::ptrdiff_t>(i),
                      entries.begin() + static_cast<std::ptrdiff_t>(end));
    summarize(*b);
    blocks_.push_back(std::move(b));
  }
}

void PendingIndex::rebuild(std::vector<PendingEntry> entries) {
  std::sort(entries.begin(), entries.end(),
            [](const PendingEntry& a, const PendingEntry& b) { return a.key < b.key; });
  blocks_.clear();
  gpu_counts_.clear();
  size_ = entries.size();
  fill_blocks(entries);
  for (const PendingEntry& e : entries) ++gpu_counts_[e.gpus];
}

std::optional<PendingEntry> PendingIndex::first() const {
  if (blocks_.empty()) return std::nullopt;
  return blocks_.front()->entries.front();
}

std::optional<PendingEntry> PendingIndex::next_candidate(const std::optional<PendingKey>& after,
                                                         unsigned fit_now, int64_t max_limit_ms,
                                                         unsigned fit_long) const {
  if (fit_now == 0 || blocks_.empty()) return std::nullopt;
  const unsigned small = std::min(fit_now, fit_long);
  // The class of fit_now also holds requests slightly above it: a conservative block filter.
  const size_t cls = size_class(fit_now);
  size_t bi = after ? block_for(*after) : 0;
  for (; bi < blocks_.size(); ++bi) {
    const Block& b = *blocks_[bi];
    if (b.min_gpus > small && b.min_limit_upto[cls] > max_limit_ms) continue;
    auto it = b.entries.begin();
    if (after)
      it = std::upper_bound(b.entries.begin(), b.entries.end(), *after,
                            [](const PendingKey& k, const PendingEntry& x) { return k < x.key; });
    for (; it != b.entries.end(); ++it)
      if (it->gpus <= fit_now && (it->limit_ms <= max_limit_ms || it->gpus <= fit_long)) return *it;
  }
  return std::nullopt;
}

std::optional<unsigned> PendingIndex::min_gpus_except(const PendingKey&,
                                                      unsigned except_gpus) const {
  for (const auto& [gpus, count] : gpu_counts_) {
    if (gpus == except_gpus && count == 1) continue;
    return gpus;
  }
  return std::nullopt;
}

}  // namespace gw::sched
