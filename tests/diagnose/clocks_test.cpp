// Clock collapse judged against the window's own peak when the maximum is unknown, the
// temperature trend that tells a thermal cap from a power one, the legacy Unknown reason,
// history counters of every limiter, and power capping with unknown load.
#include <gtest/gtest.h>

#include "builders.h"
#include "diagnose/context.h"

namespace gw {
namespace {

using test::busy_gpu;
using test::find;
using test::idle_gpu;
using test::snapshot;

// A dmon-like GPU: no maximum clocks, no thresholds, no reasons.
GpuState dmon_gpu(unsigned index) {
  GpuState g = busy_gpu(index);
  g.info.max_sm_clock_mhz.reset();
  g.info.max_graphics_clock_mhz.reset();
  g.info.temp_slowdown_c.reset();
  g.info.temp_max_operating_c.reset();
  g.sample.clock_reasons.reset();
  return g;
}

TEST(ClocksCollapse, JudgedAgainstTheWindowPeakWithoutMaxClocks) {
  // dmon without clocks.max: 1755 MHz for two seconds, then 600 MHz under the same load while
  // the temperature climbs to 91 C.
  const auto obs = test::window(10, [](size_t i) {
    GpuState g = dmon_gpu(0);
    g.sample.sm_clock_mhz = i < 2 ? 1755 : 600;
    g.sample.temp_c = i < 2 ? 78 : 91;
    return std::vector<GpuState>{g};
  });
  const auto x = find(diagnose(obs), "clocks.low_under_load", 0u);
  ASSERT_TRUE(x);
  const std::string ev = test::evidence(*x);
  EXPECT_NE(ev.find("600 MHz vs 1755 MHz, the highest clock seen in this window"),
            std::string::npos);
  EXPECT_NE(ev.find("rose from 78 C to 91 C"), std::string::npos) << ev;
  EXPECT_NE(ev.find("a thermal cap"), std::string::npos);
  EXPECT_NE(x->title.find("of its peak clock"), std::string::npos);
}

TEST(ClocksCollapse, FlatTemperatureIsAPowerOrPlatformCap) {
  const auto obs = test::window(10, [](size_t i) {
    GpuState g = dmon_gpu(0);
    g.sample.sm_clock_mhz = i < 3 ? 1980 : 700;
    g.sample.temp_c = i < 3 ? 70 : 68;
    return std::vector<GpuState>{g};
  });
  const auto x = find(diagnose(obs), "clocks.low_under_load", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("a power or platform cap, not a thermal one"),
            std::string::npos);
}

TEST(ClocksCollapse, SteadyClocksAtTheirPeakAreSilent) {
  // Fixture 120: pclk 1695 MHz in every sample.
  const auto obs = test::window(6, [](size_t) {
    GpuState g = dmon_gpu(0);
    g.sample.sm_clock_mhz = 1695;
    return std::vector<GpuState>{g};
  });
  EXPECT_FALSE(find(diagnose(obs), "clocks.low_under_load"));
}

TEST(ClocksCollapse, NearMissAtSixtyFivePercentOfThePeak) {
  const auto obs = test::window(10, [](size_t i) {
    GpuState g = dmon_gpu(0);
    g.sample.sm_clock_mhz = i < 2 ? 2000 : 1300;
    return std::vector<GpuState>{g};
  });
  EXPECT_FALSE(find(diagnose(obs), "clocks.low_under_load"));
}

TEST(ClocksCollapse, OneSnapshotWithoutMaxIsNotJudged) {
  GpuState g = dmon_gpu(0);
  g.sample.sm_clock_mhz = 300;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "clocks.low_under_load"));
}

TEST(ClocksCollapse, KnownMaxNearTheLimitIsThermal) {
  GpuState g = busy_gpu(0);
  g.sample.sm_clock_mhz = 900;
  g.sample.temp_c = 84;  // max operating 85
  const auto x = find(diagnose(snapshot({g})), "clocks.low_under_load", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("near the 85 C limit: a thermal cap"), std::string::npos);
}

TEST(ClocksUnknownReason, LegacyBitIsKeptAndNamed) {
  GpuState g = busy_gpu(0);
  g.sample.clock_reasons = clock_reason::kUnknown;
  const auto x = find(diagnose(snapshot({g})), "clocks.unknown_reason", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("0x8000000000000000"), std::string::npos);
  EXPECT_EQ(reasons_text(clock_reason::kUnknown | clock_reason::kSwPowerCap),
            "SW power cap, Unknown (legacy reason 0x8000000000000000)");
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "clocks.unknown_reason"));
}

TEST(ClocksReasonHistory, EveryLimiterIsReportedAsPastWithSeconds) {
  GpuState g = idle_gpu(0);
  g.sample.violations.sw_thermal_ns = 125ULL * 1'000'000'000;
  g.sample.violations.hw_thermal_ns = 61ULL * 1'000'000'000;
  g.sample.violations.hw_power_brake_ns = 3600ULL * 1'000'000'000;
  g.sample.violations.board_limit_ns = 10ULL * 1'000'000'000;  // under a minute: noise
  const auto x = find(diagnose(snapshot({g})), "clocks.reason_history", 0u);
  ASSERT_TRUE(x);
  EXPECT_EQ(x->severity, Severity::kInfo);
  const std::string ev = test::evidence(*x);
  EXPECT_NE(ev.find("SW thermal slowdown: 125 s accumulated"), std::string::npos) << ev;
  EXPECT_NE(ev.find("HW thermal slowdown: 61 s"), std::string::npos);
  EXPECT_NE(ev.find("HW power brake: 3600 s"), std::string::npos);
  EXPECT_NE(ev.find("not active now"), std::string::npos);
  EXPECT_EQ(ev.find("board limit"), std::string::npos);
  EXPECT_NE(x->title.find("in the past (not now)"), std::string::npos);
}

TEST(ClocksReasonHistory, ActiveReasonIsNotHistory) {
  GpuState g = busy_gpu(0);
  g.sample.violations.hw_power_brake_ns = 3600ULL * 1'000'000'000;
  g.sample.clock_reasons = clock_reason::kHwPowerBrakeSlowdown;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "clocks.reason_history"));
  g.sample.clock_reasons = 0;
  g.sample.violations.hw_power_brake_ns = 59ULL * 1'000'000'000;
  EXPECT_FALSE(find(diagnose(snapshot({g})), "clocks.reason_history"));
}

TEST(PowerSwCapLoadUnknown, IsAPowerCapFindingThatSaysSo) {
  // No utilization, no power reading, no Idle reason: the load is unknown, never idle.
  GpuState g = busy_gpu(0);
  g.sample.util_gpu_pct.reset();
  g.sample.util_enc_pct.reset();
  g.sample.util_dec_pct.reset();
  g.sample.power_mw.reset();
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  const auto f = diagnose(snapshot({g}));
  EXPECT_FALSE(find(f, "power.sw_cap_idle"));
  const auto x = find(f, "power.sw_cap", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("load is unknown"), std::string::npos);
  EXPECT_NE(test::evidence(*x).find("cannot tell idle from busy"), std::string::npos);
}

TEST(PowerSwCapLoadUnknown, IdleReasonMakesItAffirmativelyIdle) {
  GpuState g = idle_gpu(0);
  g.sample.util_gpu_pct.reset();
  g.sample.clock_reasons = clock_reason::kSwPowerCap | clock_reason::kGpuIdle;
  const auto f = diagnose(snapshot({g}));
  EXPECT_TRUE(find(f, "power.sw_cap_idle", 0u));
  EXPECT_FALSE(find(f, "power.sw_cap"));
}

TEST(PowerSwCapLoadUnknown, LightLoadIsNotIdle) {
  GpuState g = idle_gpu(0);
  g.sample.util_gpu_pct = 12;
  g.sample.clock_reasons = clock_reason::kSwPowerCap;
  const auto f = diagnose(snapshot({g}));
  EXPECT_FALSE(find(f, "power.sw_cap_idle"));
  const auto x = find(f, "power.sw_cap", 0u);
  ASSERT_TRUE(x);
  EXPECT_NE(x->title.find("light load"), std::string::npos);
}

}  // namespace
}  // namespace gw
