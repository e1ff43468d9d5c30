// The --gpu-mem share rules (share.h), without processes: each rule can refuse, and says why.
#include "queue/share.h"

#include <gtest/gtest.h>

namespace gw::queue {
namespace {

constexpr uint64_t kGiB = 1ULL << 30;
constexpr int64_t kNow = 10'000'000;
const ShareRules kRules{60'000, false};

// A GPU of 80 GiB with one --gpu-mem job that started `ran_ms` ago.
ShareGpu shared_gpu(unsigned index, uint64_t used_gib, uint64_t declared_gib, int64_t ran_ms) {
  ShareGpu g;
  g.index = index;
  g.open = true;
  g.total = 80 * kGiB;
  g.used = used_gib * kGiB;
  g.jobs = 1;
  g.declared = declared_gib * kGiB;
  g.newest_start_ms = kNow - ran_ms;
  g.planned_end_ms = kNow + 3'600'000;
  g.job_ids = {static_cast<int64_t>(index) + 100};
  return g;
}

ShareAsk ask(uint64_t gib, unsigned gpus = 1, int64_t end_ms = kNow + 600'000) {
  return {gpus, gib * kGiB, end_ms};
}

TEST(Share, AWarmedUpGpuWithRoomIsShared) {
  const SharePlan p = plan_share(ask(20), {shared_gpu(0, 25, 20, 120'000)}, kRules, kNow);
  EXPECT_EQ(p.gpus, std::vector<unsigned>{0});
  EXPECT_TRUE(p.why_not.empty());
}

TEST(Share, MemoryIsJudgedOnWhatIsUsedNotOnWhatWasDeclared) {
  // The job there said 20 GiB but uses 70: 10 free, so a 20 GiB job would run out of memory.
  const SharePlan p = plan_share(ask(20), {shared_gpu(0, 70, 20, 120'000)}, kRules, kNow);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_EQ(p.why_not, "cannot share: GPU 0 10.0 GiB free, 20.0 GiB needed");
}

TEST(Share, DeclaredSizesMustFitTooWhileAJobHasNotReachedItsPeak) {
  const SharePlan p = plan_share(ask(30), {shared_gpu(0, 10, 60, 120'000)}, kRules, kNow);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_NE(p.why_not.find("60.0 GiB already promised of 80.0 GiB"), std::string::npos)
      << p.why_not;
}

TEST(Share, NoJoiningBeforeEveryJobThereHasWarmedUp) {
  const SharePlan p = plan_share(ask(10), {shared_gpu(0, 1, 20, 5'000)}, kRules, kNow);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_NE(p.why_not.find("warming up (a job started 5 s ago, 60 s needed)"), std::string::npos)
      << p.why_not;
}

TEST(Share, OnlyJobsThatStatedTheirMemoryShareAndIdleOrClosedGpusAreNotOffered) {
  ShareGpu whole = shared_gpu(0, 10, 0, 120'000);
  whole.all_declared = false;
  ShareGpu idle = shared_gpu(1, 0, 0, 120'000);
  idle.jobs = 0;
  ShareGpu drained = shared_gpu(2, 10, 20, 120'000);
  drained.open = false;
  ShareGpu unknown = shared_gpu(3, 10, 20, 120'000);
  unknown.used.reset();
  const SharePlan p = plan_share(ask(10), {whole, idle, drained, unknown}, kRules, kNow);
  EXPECT_TRUE(p.gpus.empty());
  EXPECT_EQ(p.why_not,
            "cannot share: GPU 0 runs a job without --gpu-mem; GPU 3 its memory use is not known");
}

TEST(Share, PacksOntoTheFullestGpuThatFitsAndNeedsEveryGpuItAsksFor) {
  const std::vector<ShareGpu> gpus = {shared_gpu(0, 20, 20, 120'000),
                                      shared_gpu(1, 50, 30, 120'000),
                                      shared_gpu(2, 75, 20, 120'000)};
  EXPECT_EQ(plan_share(ask(20), gpus, kRules, kNow).gpus, std::vector<unsigned>{1});
  EXPECT_EQ(plan_share(ask(20, 2), gpus, kRules, kNow).gpus, (std::vector<unsigned>{1, 0}));
  const SharePlan three = plan_share(ask(20, 3), gpus, kRules, kNow);
  EXPECT_TRUE(three.gpus.empty()) << "GPU 2 has 5 GiB free: two of three is not enough";
}

TEST(Share, WhileAWholeGpuJobWaitsASharerMayNotOutlastTheJobsThere) {
  const ShareRules protect{60'000, true};
  const ShareGpu g = shared_gpu(0, 20, 20, 120'000);  // planned to end in an hour
  EXPECT_EQ(plan_share(ask(10, 1, kNow + 1'800'000), {g}, protect, kNow).gpus,
            std::vector<unsigned>{0});
  const SharePlan late = plan_share(ask(10, 1, kNow + 7'200'000), {g}, protect, kNow);
  EXPECT_TRUE(late.gpus.empty());
  EXPECT_NE(late.why_not.find("waiting for whole GPUs would be delayed"), std::string::npos);
  EXPECT_EQ(plan_share(ask(10, 1, kNow + 7'200'000), {g}, kRules, kNow).gpus,
            std::vector<unsigned>{0})
      << "nobody waits for whole GPUs: no bound";
}

TEST(Share, ABurstOfSubmissionsPutsOneJobPerGpuPerWarmUpNotAllOfThem) {
  // 128 small jobs arrive at once on 16 GPUs that each run one warmed-up sharer with plenty
  // of room: one joins each GPU, the rest wait for the newcomer to warm up.
  std::vector<ShareGpu> gpus;
  for (unsigned i = 0; i < 16; ++i) gpus.push_back(shared_gpu(i, 4, 4, 120'000));
  unsigned placed = 0;
  for (int64_t job = 0; job < 128; ++job) {
    const SharePlan p = plan_share(ask(4), gpus, kRules, kNow);
    if (p.gpus.empty()) continue;
    take_share(gpus, p, ask(4), job, kNow);
    ++placed;
  }
  EXPECT_EQ(placed, 16u);
  for (const ShareGpu& g : gpus) {
    EXPECT_EQ(g.jobs, 2u);
    EXPECT_EQ(g.declared, 8 * kGiB);
  }
  EXPECT_EQ(plan_share(ask(4), gpus, kRules, kNow + 59'000).gpus.size(), 0u);
  EXPECT_EQ(plan_share(ask(4), gpus, kRules, kNow + 60'000).gpus.size(), 1u);
}

}  // namespace
}  // namespace gw::queue
