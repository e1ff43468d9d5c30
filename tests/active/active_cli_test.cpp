// `gpuwarden doctor --stress` as a user runs it: the demo fleet through the fake NVML and the
// fake CUDA driver, JSON and text, and the option rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "run_binary.h"

namespace gw::clitest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

TEST(ActiveCli, DemoStressReportsGpu5NarrowLinkWithMeasuredBandwidth) {
  const auto r = run_gpuwarden({"doctor", "--demo", "--stress", "2", "--json"});
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  const json doc = json::parse(r.out);
  const json& g5 = doc.at("active").at("gpus").at(5);
  EXPECT_NEAR(g5.at("h2d_gb_s").get<double>(), 12.9, 0.3);
  EXPECT_NEAR(g5.at("link_should_carry_gb_s").get<double>(), 63.0, 0.1);
  bool found = false;
  for (const json& f : doc.at("findings")) {
    if (f.at("code") != "active.copy_below_link") continue;
    EXPECT_EQ(f.at("gpu"), 5);
    EXPECT_THAT(f.at("title").get<std::string>(), HasSubstr("12.9 GB/s"));
    found = true;
  }
  EXPECT_TRUE(found) << r.out;
}

TEST(ActiveCli, DemoStressTextShowsTheFiguresTable) {
  const auto r = run_gpuwarden({"doctor", "--demo", "--stress", "1"});
  ASSERT_FALSE(r.timed_out) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("Stress: 1 s planned"));
  EXPECT_THAT(r.out, HasSubstr("[active.copy_below_link]"));
  EXPECT_THAT(r.out, HasSubstr("Gen5 x16 (63.0)"));
  EXPECT_THAT(r.out, HasSubstr("--force is implied"));
}

TEST(ActiveCli, StressOnlyOptionsWithoutStressAreUsageErrors) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"doctor", "--demo", "--force"},
                                             {"doctor", "--demo", "--gpu", "1"},
                                             {"doctor", "--demo", "--stress", "5", "--quick"},
                                             {"doctor", "--demo", "--stress", "0"}}) {
    const auto r = run_gpuwarden(args);
    EXPECT_EQ(r.exit_code, 64) << args.back() << r.describe();
  }
}

// `check --active`: the Slurm health-check contract with a load test behind it. 60 scenario
// seconds of load in 3 real seconds (GPUWARDEN_FAKE_TIME_SCALE=20).
RunResult check(std::vector<std::string> extra, const std::string& scenario) {
  std::vector<std::string> args = {"check", "--scenario", scenario_path(scenario).string()};
  args.insert(args.end(), extra.begin(), extra.end());
  RunOptions o;
  o.env["GPUWARDEN_FAKE_TIME_SCALE"] = "20";
  return run_gpuwarden(args, o);
}

TEST(ActiveCheck, AGpuThatThrottlesOnlyUnderLoadMakesTheNodeSick) {
  const auto idle = check({}, "stress-thermal");
  EXPECT_EQ(idle.exit_code, 0) << "idle, the GPU looks fine" << idle.describe();
  const auto loaded = check({"--active", "3"}, "stress-thermal");
  ASSERT_FALSE(loaded.timed_out) << loaded.describe();
  EXPECT_EQ(loaded.exit_code, 1) << loaded.describe();
  EXPECT_THAT(loaded.out, ::testing::StartsWith("gpuwarden: GPU 3 active.clock_drop: "));
  EXPECT_EQ(std::count(loaded.out.begin(), loaded.out.end(), '\n'), 1) << loaded.out;
}

TEST(ActiveCheck, OnlyTheJobsGpusAreLoadedAndJudged) {
  const auto r = check({"--active", "3", "--gpus", "0,1", "--verbose"}, "stress-thermal");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("from active test of 3 s on scenario stress-thermal.json"));
}

TEST(ActiveCheck, MissingPeerAccessIsSick) {
  const auto r = check({"--active", "2"}, "stress-nvlink-no-peer");
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("active.peer_access_missing"));
}

TEST(ActiveCheck, WithoutACudaDriverItSaysSoAndJudgesTheRest) {
  const auto r =
      check({"--active", "2", "--cuda-lib", "/nonexistent/libcuda.so.1"}, "stress-thermal");
  EXPECT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("gpuwarden check: No load was run"));
  EXPECT_THAT(r.err, HasSubstr("cuda.library_not_found"));
  const auto usage = run_gpuwarden({"check", "--demo", "--cuda-lib", "/x"});
  EXPECT_EQ(usage.exit_code, 64) << usage.describe();
}

}  // namespace
}  // namespace gw::clitest
