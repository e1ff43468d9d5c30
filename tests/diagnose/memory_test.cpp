#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::kGiB;
using test::snapshot;

constexpr uint64_t kMiB = 1024ULL * 1024;

TEST(MemoryNearFull, FiresAtNinetyOnePercent) {
  // Fixture 016: 22437 of 24564 MiB.
  GpuState g = busy_gpu(0);
  g.sample.mem_total_bytes = 24564 * kMiB;
  g.sample.mem_used_bytes = 22437 * kMiB;
  const auto x = find(diagnose(snapshot({g})), "memory.near_full", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("22437 MiB of 24564 MiB used (91.3%)"), std::string::npos);
  EXPECT_NE(x->remedy.find("gradient checkpointing"), std::string::npos);
  EXPECT_NE(x->remedy.find("BF16"), std::string::npos);
}

TEST(MemoryNearFull, SilentAtEightyNinePointSeven) {
  // Fixture 017: 9184 of 10240 MiB, the documented near miss.
  GpuState g = busy_gpu(0);
  g.sample.mem_total_bytes = 10240 * kMiB;
  g.sample.mem_used_bytes = 9184 * kMiB;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "memory.near_full"));
}

TEST(MemoryNearFull, UsesThePeakOfTheWindow) {
  const auto obs = test::window(5, [](size_t i) {
    GpuState g = busy_gpu(0);
    g.sample.mem_used_bytes = (i == 3 ? 76 : 50) * kGiB;
    return std::vector<GpuState>{g};
  });
  EXPECT_TRUE(find(diagnose(obs), "memory.near_full", 0u));
}

TEST(MemoryHeldByIdle, FiresWhenIdleGpuHoldsMostMemory) {
  // Fixture 016 GPU C1: 17253 of 24564 MiB at 0 %.
  GpuState g = idle_gpu(0);
  g.sample.mem_total_bytes = 24564 * kMiB;
  g.sample.mem_used_bytes = 17253 * kMiB;
  g.sample.processes = std::vector<ProcessInfo>{{4242, 17253 * kMiB, "python3", false}};
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "memory.held_by_idle", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("pid 4242 (python3)"), std::string::npos);
  EXPECT_FALSE(find(f, "memory.near_full"));  // 70 % is not near full
}

TEST(MemoryHeldByIdle, SilentForADesktopSession) {
  // Fixture 006: 290 MiB of 12 GiB held by Xorg and friends.
  GpuState g = idle_gpu(0);
  g.sample.mem_total_bytes = 12 * kGiB;
  g.sample.mem_used_bytes = 290 * kMiB;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "memory.held_by_idle"));
}

TEST(MemoryHeldByIdle, SilentWhenUtilizationIsUnknown) {
  // MIG: utilization N/A is not 0 % (fixture 020, Idle reason "Not Active").
  GpuState g = idle_gpu(0);
  g.sample.util_gpu_pct.reset();
  g.sample.clock_reasons = 0;
  g.sample.mem_used_bytes = 60 * kGiB;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "memory.held_by_idle"));
}

TEST(MemoryHeldByIdle, IdleReasonMakesUnknownUtilizationIdle) {
  // Utilization unknown but the driver's own Idle reason active: affirmatively idle.
  GpuState g = idle_gpu(0);
  g.sample.util_gpu_pct.reset();
  g.sample.clock_reasons = clock_reason::kGpuIdle;
  g.sample.mem_used_bytes = 60 * kGiB;
  const auto x = find(diagnose(snapshot({g})), "memory.held_by_idle", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("the Idle clock reason is active"), std::string::npos);
}

TEST(MemoryHeldByIdle, SingleSnapshotGivesBothReadingsAndTheCheck) {
  GpuState g = idle_gpu(0);
  g.sample.mem_used_bytes = 60 * kGiB;
  g.sample.processes = std::vector<ProcessInfo>{{4242, 60 * kGiB, "python3", false}};
  const auto x = find(diagnose(snapshot({g})), "memory.held_by_idle", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("stale holder"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("starving on its input"), std::string::npos);
  EXPECT_NE(x->remedy.find("--window 60"), std::string::npos);
}

TEST(MemoryHeldByIdle, WindowOfIdleSamplesIsAStaleHolderNotAnEitherOr) {
  const auto obs = test::window(10, [](size_t) {
    GpuState g = idle_gpu(0);
    g.sample.mem_used_bytes = 60 * kGiB;
    return std::vector<GpuState>{g};
  });
  const auto x = find(diagnose(obs), "memory.held_by_idle", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(test::evidence(*x).find("single snapshot"), std::string::npos);
}

TEST(MemoryHeldByIdle, SilentWhenBusyOnceInTheWindow) {
  const auto obs = test::window(10, [](size_t i) {
    GpuState g = idle_gpu(0);
    g.sample.mem_used_bytes = 60 * kGiB;
    if (i == 5) g.sample.util_gpu_pct = 80;
    return std::vector<GpuState>{g};
  });
  EXPECT_FALSE(find(diagnose(obs), "memory.held_by_idle"));
}

}  // namespace
}  // namespace gw
