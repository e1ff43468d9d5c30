#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

TEST(Engine, HealthyGpusGiveNoFindings) {
  EXPECT_TRUE(diagnose(snapshot({idle_gpu(0), busy_gpu(1)})).empty());
  EXPECT_TRUE(diagnose(Observation{}).empty());
  EXPECT_EQ(worst_severity({}), Severity::kInfo);
}

TEST(Engine, FindingsAreSortedBySeverityThenGpu) {
  std::vector<GpuState> gpus{idle_gpu(0), idle_gpu(1), busy_gpu(2)};
  gpus[0].sample.pcie_width = 8;            // warning on GPU 0
  gpus[1].sample.ecc_dbe_volatile = 1;      // critical on GPU 1
  gpus[2].sample.persistence_mode = false;  // info on GPU 2
  const auto f = diagnose(snapshot(gpus));
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].code, "ecc.dbe_volatile");
  EXPECT_EQ(f[1].code, "pcie.width_below_max");
  EXPECT_EQ(f[2].code, "config.persistence_off");
  EXPECT_EQ(worst_severity(f), Severity::kCritical);
  for (const auto& x : f) {
    EXPECT_FALSE(x.title.empty());
    EXPECT_FALSE(x.evidence.empty());
    EXPECT_FALSE(x.remedy.empty());
  }
}

TEST(Engine, SeriesFollowAGpuByUuidAcrossSnapshots) {
  // GPU order changes between snapshots; the window must still be per GPU.
  const auto obs = test::window(4, [](size_t i) {
    GpuState a = busy_gpu(0), b = busy_gpu(1);
    b.sample.clock_reasons = clock_reason::kSwThermalSlowdown;
    b.sample.temp_c = 80;
    return i % 2 == 0 ? std::vector<GpuState>{a, b} : std::vector<GpuState>{b, a};
  });
  const auto x = find(diagnose(obs), "thermal.sw_slowdown", 1u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("4 of 4 samples (100%)"), std::string::npos);
  EXPECT_FALSE(find(diagnose(obs), "thermal.sw_slowdown", 0u));
}

TEST(Engine, ManyEventsCollapseIntoOneFindingPerGpuAndXid) {
  Observation obs = snapshot({idle_gpu(0)});
  obs.samples[0].gpus[0].info.pci_bus_id = "00000000:38:00.0";
  for (int i = 0; i < 20000; ++i) {
    obs.events.push_back(test::xid(13, "0000:38:00", "Out Of Range Address",
                                   1'737'426'093'000 + static_cast<int64_t>(i) * 10));
  }
  const auto f = diagnose(obs);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code, "xid.application");
  EXPECT_EQ(f[0].gpu, 0u);
  EXPECT_NE(test::evidence(f[0]).find("20000 line(s) in 1 burst(s)"), std::string::npos);
}

TEST(Engine, AGpuWithNoReadableSampleDoesNotCrashTheRules) {
  GpuState g = idle_gpu(0);
  g.access = GpuAccess::kError;
  g.sample = GpuSample{};
  g.info = DeviceInfo{};
  const auto f = diagnose(snapshot({g}));
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code, "gpu.access_error");
}

}  // namespace
}  // namespace gw
