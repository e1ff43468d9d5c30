#include <gtest/gtest.h>

#include "builders.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

constexpr uint64_t kBrake = clock_reason::kHwSlowdown | clock_reason::kHwPowerBrakeSlowdown;

TEST(PowerHwBrake, EveryGpuBrakedSaysCheckTheWholeNode) {
  // Fixture 002: all 8 GPUs braked, 86 MHz in P0 while idle.
  std::vector<GpuState> gpus;
  for (unsigned i = 0; i < 8; ++i) {
    GpuState g = idle_gpu(i);
    g.sample.pstate = 0;
    g.sample.sm_clock_mhz = 86;
    g.sample.clock_reasons = kBrake;
    gpus.push_back(g);
  }
  const auto f = diagnose(snapshot(gpus));
  EXPECT_EQ(test::count(f, "power.hw_power_brake"), 8u);
  const auto x = find(f, "power.hw_power_brake", 3u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
  EXPECT_NE(x->remedy.find("whole node"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("86 MHz vs max 1980 MHz"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("all 8 GPUs"), std::string::npos);
  EXPECT_FALSE(find(f, "power.hw_slowdown"));
  EXPECT_FALSE(find(f, "thermal.hw_slowdown"));
}

TEST(PowerHwBrake, OneGpuBrakedAtFullClocksIsAWarningForThatGpuOnly) {
  // Fixture 003: one GPU flags a brake but still runs at max clock.
  std::vector<GpuState> gpus{idle_gpu(0), busy_gpu(1), idle_gpu(2)};
  gpus[1].sample.sm_clock_mhz = 1980;
  gpus[1].sample.clock_reasons = clock_reason::kHwPowerBrakeSlowdown;
  const auto f = diagnose(snapshot(gpus));
  EXPECT_EQ(test::count(f, "power.hw_power_brake"), 1u);
  const auto x = find(f, "power.hw_power_brake", 1u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kWarning);
  EXPECT_EQ(x->remedy.find("whole node"), std::string::npos);
}

TEST(PowerHwBrake, SilentWithoutTheBit) {
  GpuState g = busy_gpu(0);
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "power.hw_power_brake"));
}

TEST(PowerHwSlowdown, FiresOnUnexplainedHwSlowdown) {
  GpuState g = busy_gpu(0);
  g.sample.sm_clock_mhz = 800;
  g.sample.clock_reasons = clock_reason::kHwSlowdown;
  const auto x = find(diagnose(snapshot({g})), "power.hw_slowdown", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kCritical);
}

TEST(PowerHwSlowdown, SilentWhenThermalExplainsIt) {
  GpuState g = busy_gpu(0);
  g.sample.clock_reasons = clock_reason::kHwSlowdown | clock_reason::kHwThermalSlowdown;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "power.hw_slowdown"));
}

TEST(PowerSwCap, UnderLoadAtDefaultLimitIsInfo) {
  // Fixture 004: 446 W of 450 W at 100 % util.
  GpuState g = busy_gpu(0);
  g.sample.power_mw = 396'000;
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "power.sw_cap", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_NE(test::evidence(*x).find("396.0 W of 400.0 W limit"), std::string::npos);
  EXPECT_FALSE(find(f, "power.sw_cap_idle"));
}

TEST(PowerSwCap, LoweredLimitMakesItAWarning) {
  GpuState g = busy_gpu(0);
  g.sample.power_limit_mw = 250'000;
  g.sample.power_mw = 249'000;
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  const auto f = diagnose(snapshot({g}));
  ASSERT_TRUE(find(f, "power.sw_cap", 0u));
  EXPECT_EQ(find(f, "power.sw_cap", 0u)->severity, Severity::kWarning);
  EXPECT_NE(find(f, "power.sw_cap", 0u)->remedy.find("-pl 400"), std::string::npos);
  EXPECT_TRUE(find(f, "power.limit_below_default", 0u));
}

TEST(PowerSwCap, IdleFlagIsNotPowerStarvation) {
  // Fixture 018: SW power cap flagged at 35 W of 350 W, P8, 0 %.
  GpuState g = idle_gpu(0);
  g.sample.power_mw = 35'000;
  g.sample.clock_reasons = clock_reason::kSwPowerCap | clock_reason::kGpuIdle;
  const auto f = diagnose(snapshot({g}));
  EXPECT_FALSE(find(f, "power.sw_cap"));
  const auto x = find(f, "power.sw_cap_idle", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_NE(x->remedy.find("not power starvation"), std::string::npos);
  EXPECT_EQ(worst_severity(f), Severity::kInfo);
}

TEST(PowerSwCapIdle, SilentWithoutTheFlag) {
  EXPECT_FALSE(find(diagnose(snapshot({idle_gpu(0)})), "power.sw_cap_idle"));
}

TEST(PowerLimitBelowDefault, SilentAtDefault) {
  EXPECT_FALSE(find(diagnose(snapshot({busy_gpu(0)})), "power.limit_below_default"));
}

TEST(PowerLimitBelowDefault, FiresWhenLowered) {
  GpuState g = idle_gpu(0);
  g.sample.power_limit_mw = 300'000;
  const auto x = find(diagnose(snapshot({g})), "power.limit_below_default", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("75.0% of default"), std::string::npos);
}

TEST(PowerCapHistory, LifetimeCounterIsHistoryNotActive) {
  // Fixtures 029/052: 834 s accumulated, nothing active now.
  GpuState g = busy_gpu(0);
  g.sample.violations.power_ns = 834'002'687'000ULL;
  const auto f = diagnose(snapshot({g}));
  const auto x = find(f, "power.cap_history", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  EXPECT_NE(test::evidence(*x).find("834 s"), std::string::npos);
  EXPECT_FALSE(find(f, "power.sw_cap"));
}

TEST(PowerCapHistory, SilentUnderAMinute) {
  GpuState g = busy_gpu(0);
  g.sample.violations.power_ns = 59'000'000'000ULL;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "power.cap_history"));
}

}  // namespace
}  // namespace gw
