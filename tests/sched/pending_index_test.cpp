#include "sched/pending_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace gw::sched {
namespace {

// The block summaries must never hide a match: compare with a plain scan of a sorted vector
// through inserts, erases and a rebuild.
TEST(PendingIndex, NextCandidateMatchesABruteForceScan) {
  std::mt19937_64 rng(42);
  PendingIndex idx;
  std::vector<PendingEntry> all;
  const unsigned sizes[] = {1, 1, 1, 2, 3, 4, 8, 16, 64};
  for (JobId id = 1; id <= 3000; ++id) {
    PendingEntry e{{static_cast<double>(rng() % 50), static_cast<int64_t>(rng() % 1000), id},
                   sizes[rng() % 9],
                   static_cast<int64_t>(rng() % 100000)};
    idx.insert(e);
    all.push_back(e);
    if (id % 7 == 0) {
      const size_t k = rng() % all.size();
      ASSERT_TRUE(idx.erase(all[k].key));
      all.erase(all.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.key < b.key; });
  ASSERT_EQ(idx.size(), all.size());
  EXPECT_EQ(idx.first()->key, all.front().key);
  for (int q = 0; q < 400; ++q) {
    const unsigned fit_now = static_cast<unsigned>(rng() % 20);
    const unsigned fit_long = static_cast<unsigned>(rng() % (fit_now + 1));
    const int64_t window = static_cast<int64_t>(rng() % 3000);
    std::optional<PendingKey> after;
    if (q % 2) after = all[rng() % all.size()].key;
    std::optional<PendingEntry> expect;
    for (const auto& e : all) {
      if (after && !(*after < e.key)) continue;
      if (e.gpus <= fit_now && (e.limit_ms <= window || e.gpus <= fit_long)) {
        expect = e;
        break;
      }
    }
    const auto got = idx.next_candidate(after, fit_now, window, fit_long);
    ASSERT_EQ(got.has_value(), expect.has_value()) << q;
    if (got) {
      EXPECT_EQ(got->key, expect->key);
    }
  }
  idx.rebuild(all);
  EXPECT_EQ(idx.size(), all.size());
  EXPECT_EQ(idx.first()->key, all.front().key);
}

TEST(PendingIndex, MinGpusSkipsOnlyTheExcludedJob) {
  PendingIndex idx;
  idx.insert({{0, 0, 1}, 4, 10});
  idx.insert({{0, 1, 2}, 2, 10});
  EXPECT_EQ(*idx.min_gpus_except({0, 1, 2}, 2), 4u);
  EXPECT_EQ(*idx.min_gpus_except({0, 0, 1}, 4), 2u);
  idx.erase({0, 0, 1});
  EXPECT_FALSE(idx.min_gpus_except({0, 1, 2}, 2));
}

}  // namespace
}  // namespace gw::sched

namespace gw::sched {
namespace {

TEST(PendingIndex, RerankKeepsOrderOrResorts) {
  PendingIndex idx;
  for (JobId id = 1; id <= 600; ++id) idx.insert({{0, static_cast<int64_t>(id), id}, 1, 10, 0});
  // Same order (rank grows with id): updated in place.
  idx.rerank([](const PendingEntry& e) { return static_cast<double>(e.key.id); });
  EXPECT_EQ(idx.first()->key.id, 1u);
  // Reversed: must re-sort; every job still there once.
  idx.rerank([](const PendingEntry& e) { return -static_cast<double>(e.key.id); });
  EXPECT_EQ(idx.first()->key.id, 600u);
  EXPECT_EQ(idx.size(), 600u);
  EXPECT_TRUE(idx.erase({-300.0, 300, 300}));
  EXPECT_FALSE(idx.erase({-300.0, 300, 300}));
  JobId last = 601;
  bool descending = true;
  idx.for_each([&](const PendingEntry& e) {
    descending = descending && e.key.id < last;
    last = e.key.id;
  });
  EXPECT_TRUE(descending);
}

}  // namespace
}  // namespace gw::sched
