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
  g.sample.temp_c = 86;  // slowdown 90
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "thermal.near_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_NE(test::evidence(*x).find("86 C, slowdown threshold 90 C"), std::string::npos);
  EXPECT_NE(x->remedy.find("16-25 C"), std::string::npos);
}

TEST(ThermalNearSlowdown, SilentSixDegreesBelow) {
  GpuState g = busy_gpu(0);
  g.sample.temp_c = 84;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "thermal.near_slowdown"));
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

}  // namespace
}  // namespace gw
