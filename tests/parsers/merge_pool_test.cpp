// SampleReducer recycles dropped snapshots as copy targets: the kept ones must still be
// exact copies of what was added, whatever the shape of the snapshot they were copied into.
#include <gtest/gtest.h>

#include <string>

#include "sources/capture_merge.h"

namespace gw {
namespace {

// Snapshots that differ in GPU count, string lengths and which optionals are set.
Snapshot varied(int64_t seq) {
  Snapshot s;
  s.time_ms = seq * 1000;
  s.source = "pool.csv";
  if (seq % 3 == 0) s.hostname = "node-" + std::to_string(seq);
  const size_t gpus = 1 + static_cast<size_t>(seq % 5);
  for (size_t g = 0; g < gpus; ++g) {
    GpuState st;
    st.info.index = static_cast<unsigned>(g);
    st.info.name = std::string(static_cast<size_t>(seq % 40), 'n') + std::to_string(g);
    st.info.pci_bus_id = "00000000:" + std::to_string(10 + g) + ":00.0";
    st.sample.temp_c = 50;  // constant: no peaks, so nothing is pinned
    if ((seq + static_cast<int64_t>(g)) % 2 == 0) st.sample.util_gpu_pct = 7;
    if (seq % 7 == 0) st.sample.processes = std::vector<ProcessInfo>{{42, 1024, "python", false}};
    s.gpus.push_back(st);
  }
  return s;
}

TEST(ReducerPool, KeptSnapshotsAreExactCopiesOnTheStride) {
  // All the same GPU count: nothing is pinned, the stride alone decides.
  SampleReducer r(16);
  auto same = [](int64_t seq) {
    Snapshot s = varied(seq);
    s.gpus.resize(3, s.gpus.front());
    return s;
  };
  for (int64_t i = 0; i < 1000; ++i) r.add(same(i));
  EXPECT_EQ(r.stride(), 64u);
  const auto kept = r.take();
  ASSERT_EQ(kept.size(), 16u);  // 0, 64, ..., 960
  for (size_t k = 0; k < kept.size(); ++k) {
    const auto seq = static_cast<int64_t>(k * 64);
    EXPECT_EQ(kept[k], same(seq)) << "snapshot " << seq;
  }
}

// Every snapshot here changes the GPU count, so every one is pinned: the pinned ones are thinned
// by their own stride, and whichever were kept are exact copies, the newest among them.
TEST(ReducerPool, PinnedSnapshotsAreExactCopiesToo) {
  SampleReducer r(16);
  for (int64_t i = 0; i < 1000; ++i) r.add(varied(i), i == 999);
  EXPECT_GT(r.pin_stride(), 1u);
  const auto kept = r.take();
  ASSERT_LE(kept.size(), 16u);
  ASSERT_GE(kept.size(), 8u);
  for (const auto& s : kept) EXPECT_EQ(s, varied(s.time_ms / 1000)) << "snapshot " << s.time_ms;
  EXPECT_EQ(kept.back().time_ms, 999000);
}

}  // namespace
}  // namespace gw
