#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

TEST(ThermalNearSlowdown, FiresWithinFiveDegrees) {
  GpuState g = busy_gpu(0);
  g.info.temp_max_operating_c.reset();
  g.sample.temp_c = 86;  // slowdown 90
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "thermal.near_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_NE(test::evidence(*x).find("86 C, slowdown threshold 90 C (4 C below)"),
            std::string::npos);
  EXPECT_NE(x->remedy.find("16-25 C"), std::string::npos);
}

TEST(ThermalNearSlowdown, SilentSixDegreesBelow) {
  GpuState g = busy_gpu(0);
  g.info.temp_max_operating_c.reset();
  g.sample.temp_c = 84;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.near_slowdown"));
}

TEST(ThermalNearSlowdown, MaxOperatingTempComesFirst) {
  // Max operating 85 C, slowdown 90 C: 81 C is 4 C from the lower limit.
  GpuState g = busy_gpu(0);
  g.sample.temp_c = 81;
  const auto x = find(diagnose(snapshot({g})), "thermal.near_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("81 C, max operating temperature 85 C (4 C below)"),
            std::string::npos);
  g.sample.temp_c = 79;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.near_slowdown"));
}

TEST(ThermalNearSlowdown, LaptopWithLowMaxOperatingTemp) {
  // Laptop GPUs cap far below slowdown: max operating 75 C with slowdown at 98 C.
  GpuState g = busy_gpu(0);
  g.info.name = "NVIDIA GeForce RTX 3070 Laptop GPU";
  g.info.temp_max_operating_c = 75;
  g.info.temp_slowdown_c = 98;
  g.info.temp_shutdown_c = 103;
  g.sample.temp_c = 76;
  const auto x = find(diagnose(snapshot({g})), "thermal.near_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("max operating"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("1 C above it"), std::string::npos);
  g.sample.temp_c = 69;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.near_slowdown"));
}

TEST(ThermalNearSlowdown, MarginsOnlyDriverIsJudgedByTheMargin) {
  // RTX 4090 of fixture 004 under load: "GPU T.Limit Temp : 11 C", slowdown offset -2 C,
  // max operating offset 0 C, no absolute thresholds. 11 C is healthy; 3 C is near.
  GpuState g = busy_gpu(0);
  g.info.temp_slowdown_c.reset();
  g.info.temp_max_operating_c.reset();
  g.info.temp_shutdown_c.reset();
  g.info.tlimit_shutdown_c = -7;
  g.info.tlimit_slowdown_c = -2;
  g.info.tlimit_max_operating_c = 0;
  g.sample.temp_c = 72;
  g.sample.tlimit_margin_c = 11;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.near_slowdown"));
  g.sample.temp_c = 80;
  g.sample.tlimit_margin_c = 3;
  const auto x = find(diagnose(snapshot({g})), "thermal.near_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("3 C from its max operating (T.Limit) limit"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("margins only"), std::string::npos);
}

TEST(ThermalNearSlowdown, NegativeMarginIsAboveTheLimit) {
  GpuState g = busy_gpu(0);
  g.info.temp_slowdown_c.reset();
  g.info.temp_max_operating_c.reset();
  g.sample.tlimit_margin_c = -1;  // 1 C above T.Limit, no offsets known
  const auto x = find(diagnose(snapshot({g})), "thermal.near_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("max operating at offset 0 C (1 C above it)"),
            std::string::npos);
}

TEST(ThermalNearSlowdown, SilentWithoutThresholds) {
  // T.Limit-only GPUs give no absolute threshold: a margin is not a temperature.
  GpuState g = busy_gpu(0);
  g.info.temp_slowdown_c.reset();
  g.info.temp_max_operating_c.reset();
  g.sample.temp_c = 88;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.near_slowdown"));
}

TEST(ThermalSwSlowdown, ReportsShareOfWindowThrottled) {
  const auto obs = test::window(20, [](size_t i) {
    GpuState g = busy_gpu(0);
    g.sample.temp_c = 84;
    if (i >= 2) g.sample.clock_reasons = clock_reason::kSwThermalSlowdown;
    return std::vector<GpuState>{g};
  });
  const auto x = find(diagnose(obs), "thermal.sw_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_NE(test::evidence(*x).find("18 of 20 samples (90%)"), std::string::npos);
}

TEST(ThermalSwSlowdown, CoolGpuWithFlagIsInfoNotATemperatureProblem) {
  // Fixture 003: SW thermal flag at 39 C. Report the flag, do not invent heat.
  GpuState g = busy_gpu(0);
  g.sample.temp_c = 39;
  g.sample.mem_temp_c = 46;
  g.sample.clock_reasons = clock_reason::kSwThermalSlowdown;
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "thermal.sw_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_FALSE(find(f, "thermal.near_slowdown"));
}

TEST(ThermalSwSlowdown, SilentWithoutTheFlag) {
  GpuState g = busy_gpu(0);
  g.sample.temp_c = 84;
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.sw_slowdown"));
}

TEST(ThermalHwSlowdown, FiresCriticalOnHwThermalBit) {
  GpuState g = busy_gpu(0);
  g.sample.clock_reasons = clock_reason::kHwSlowdown | clock_reason::kHwThermalSlowdown;
  const auto f = diagnose(snapshot({g}));
  ASSERT_TRUE(find(f, "thermal.hw_slowdown", 0u));
  EXPECT_EQ(find(f, "thermal.hw_slowdown", 0u)->severity, Severity::kCritical);
  // The thermal sub-reason explains the HW slowdown: no platform-power finding.
  EXPECT_FALSE(find(f, "power.hw_slowdown"));
}

TEST(ThermalHwSlowdown, SilentOnPowerBrakeOnly) {
  GpuState g = busy_gpu(0);
  g.sample.clock_reasons = clock_reason::kHwSlowdown | clock_reason::kHwPowerBrakeSlowdown;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.hw_slowdown"));
}

TEST(ThermalHotterThanPeers, FiresForTheOutlierUnderTheSameLoad) {
  std::vector<GpuState> gpus;
  for (unsigned i = 0; i < 4; ++i) gpus.push_back(busy_gpu(i));
  gpus[2].sample.temp_c = 82;  // others 65
  const auto f = diagnose(snapshot(gpus));
  ASSERT_TRUE(find(f, "thermal.hotter_than_peers", 2u));
  EXPECT_EQ(test::count(f, "thermal.hotter_than_peers"), 1u);
}

TEST(ThermalHotterThanPeers, SilentWhenTheHotOneIsTheOnlyBusyOne) {
  // A busy GPU is rightly hotter than idle ones (fixture 004).
  std::vector<GpuState> gpus{busy_gpu(0), idle_gpu(1), idle_gpu(2)};
  gpus[0].sample.temp_c = 76;
  gpus[1].sample.temp_c = 30;
  gpus[2].sample.temp_c = 31;
  EXPECT_FALSE(find(diagnose(snapshot(gpus)), "thermal.hotter_than_peers"));
}

TEST(ThermalHotterThanPeers, SilentAtFourteenDegrees) {
  std::vector<GpuState> gpus{busy_gpu(0), busy_gpu(1), busy_gpu(2)};
  gpus[1].sample.temp_c = 79;
  EXPECT_FALSE(find(diagnose(snapshot(gpus)), "thermal.hotter_than_peers"));
}

TEST(ThermalFanMaxHot, FiresAtFullFanNearMaxOperating) {
  GpuState g = busy_gpu(0);
  g.sample.fan_pct = 100;
  g.sample.temp_c = 82;
  ASSERT_TRUE(find(diagnose(snapshot({g})), "thermal.fan_max_hot", 0u));
}

TEST(ThermalFanMaxHot, SilentWhenFanFullButCool) {
  GpuState g = busy_gpu(0);
  g.sample.fan_pct = 100;
  g.sample.temp_c = 70;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.fan_max_hot"));
}

TEST(ClocksLowUnderLoad, FiresWithTheReason) {
  GpuState g = busy_gpu(0);
  g.sample.sm_clock_mhz = 900;
  g.sample.clock_reasons = clock_reason::kSwThermalSlowdown;
  const auto x = find(diagnose(snapshot({g})), "clocks.low_under_load", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("900 MHz vs max 1980 MHz"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("SW thermal slowdown"), std::string::npos);
}

TEST(ClocksLowUnderLoad, SilentWhenIdle) {
  // Fixture 014/004: idle clocks are low by design.
  GpuState g = idle_gpu(0);
  g.sample.sm_clock_mhz = 210;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "clocks.low_under_load"));
}

TEST(ClocksLowUnderLoad, SilentAtSixtyFivePercentOfMax) {
  GpuState g = busy_gpu(0);
  g.sample.sm_clock_mhz = 1290;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "clocks.low_under_load"));
}

// Fixture 126 (dmon, one sample): 83, 84, 80 and 70 C at 18-25 % SM, no thresholds known.
std::vector<GpuState> dmon_four(int t0, int t1, int t2, int t3) {
  std::vector<GpuState> gs;
  const int temps[] = {t0, t1, t2, t3};
  for (unsigned i = 0; i < 4; ++i) {
    GpuState g = busy_gpu(i);
    g.info.temp_slowdown_c.reset();
    g.info.temp_max_operating_c.reset();
    g.sample.util_gpu_pct = 20;
    g.sample.temp_c = temps[i];
    gs.push_back(g);
  }
  return gs;
}

TEST(ThermalUneven, HotCardsFarAboveTheCoolestAtSimilarLoad) {
  const auto f = diagnose(snapshot(dmon_four(83, 84, 80, 70)));
  EXPECT_FALSE(find(f, "thermal.hotter_than_peers"));  // median 80 hides it
  const auto x = find(f, "thermal.uneven", 1u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("84 C vs 70 C on the coolest"), std::string::npos);
  EXPECT_TRUE(find(f, "thermal.uneven", 0u));
  EXPECT_FALSE(find(f, "thermal.uneven", 3u));
}

TEST(ThermalUneven, SilentWhenTheSpreadIsSmallOrTheCardsAreCool) {
  EXPECT_FALSE(find(diagnose(snapshot(dmon_four(81, 82, 80, 71))), "thermal.uneven"));
  EXPECT_FALSE(find(diagnose(snapshot(dmon_four(70, 72, 66, 55))), "thermal.uneven"));
}

}  // namespace
}  // namespace gw
