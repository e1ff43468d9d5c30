// capture_scenario through the fake: timestamps from an injected clock, so a capture of a
// scripted timeline replays at the same scenario times.
#include "sources/nvml/capture.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/clock.h"
#include "fake_support.h"

namespace gw::nvml::test {
namespace {

TEST(Capture, RecordsTimelineThatReplaysTheSame) {
  auto src = open_fake(scenario("thermal-throttle.json"));
  ASSERT_TRUE(src.ok());
  ManualClock clock(1'000'000);
  double t = 0;
  pin_time(t);
  std::vector<Snapshot> seen;
  CaptureOptions o;
  o.samples = 4;
  o.interval = std::chrono::milliseconds(30000);
  auto sc = capture_scenario(**src, o, clock, [&](std::chrono::milliseconds d) {
    clock.advance_ms(d.count());
    t += static_cast<double>(d.count()) / 1000;
    pin_time(t);
  });
  ASSERT_TRUE(sc.ok()) << sc.error().to_string();
  EXPECT_EQ(sc->gpus.size(), 8u);
  EXPECT_NE(sc->description.find("4 sample(s), 30000 ms apart"), std::string::npos);
  // GPU 2 changes at 30, 60 and 90 s; nothing else does.
  ASSERT_EQ(sc->timeline.size(), 3u);
  EXPECT_EQ(sc->timeline[2].t_s, 90);
  EXPECT_EQ(sc->timeline[2].gpu, 2u);
  EXPECT_EQ(sc->timeline[2].set["temp_c"], 91);
  EXPECT_EQ(sc->timeline[2].set["clock_reasons"],
            Json::parse(R"(["hw_slowdown", "sw_thermal", "hw_thermal"])"));
  // Unsupported readings stay unsupported.
  EXPECT_FALSE(sc->gpus[0].state.info.caps.has(Capability::kFan));

  const std::string path = ::testing::TempDir() + "/capture-thermal.json";
  std::ofstream(path) << write_scenario(*sc);
  auto replay = open_fake(path);
  ASSERT_TRUE(replay.ok()) << replay.error().to_string();
  const GpuState g = sample_at(**replay, 90).gpus.at(2);
  EXPECT_EQ(g.sample.temp_c, 91);
  EXPECT_EQ(g.sample.sm_clock_mhz, 795u);
  EXPECT_EQ(g.info.temp_slowdown_c, 89);
}

TEST(Capture, SourceThatFailsIsAnError) {
  struct Broken : GpuSource {
    Result<Snapshot> sample() override { return make_error("x.broken", "broken"); }
    std::string describe() const override { return "broken"; }
  } broken;
  ManualClock clock;
  auto sc = capture_scenario(broken, CaptureOptions{}, clock, [](auto) {});
  ASSERT_FALSE(sc.ok());
  EXPECT_EQ(sc.error().code, "x.broken");
  CaptureOptions none;
  none.samples = 0;
  EXPECT_EQ(capture_scenario(broken, none, clock, [](auto) {}).error().code, "capture.bad_option");
}

}  // namespace
}  // namespace gw::nvml::test
