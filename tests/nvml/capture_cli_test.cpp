// `gpuwarden capture` end to end: options, the file it writes, and that the fake can play it.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/command.h"
#include "fake_support.h"
#include "sources/nvml/scenario.h"

namespace gw::nvml::test {
namespace {

int run_cli(std::vector<std::string> args, std::string& out, std::string& err) {
  std::ostringstream o, e;
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  const int rc = cli::run(static_cast<int>(argv.size()), argv.data(), cli::Io{o, e, false});
  out = o.str();
  err = e.str();
  return rc;
}

TEST(CaptureCli, WritesAScenarioThatReplays) {
  const std::string path = ::testing::TempDir() + "/cli-capture.json";
  std::remove(path.c_str());  // capture refuses to replace a file without --force
  std::string out, err;
  ASSERT_EQ(run_cli({"gpuwarden", "capture", "--scenario", scenario("consumer-rtx4090.json"), "-o",
                     path, "--samples", "2", "--interval-ms", "1"},
                    out, err),
            0)
      << err;
  EXPECT_NE(err.find("captured 2 sample(s) of 1 GPU(s)"), std::string::npos) << err;
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto sc = parse_scenario(text.str(), path);
  ASSERT_TRUE(sc.ok()) << sc.error().to_string();
  ASSERT_EQ(sc->gpus.size(), 1u);
  EXPECT_EQ(sc->gpus[0].state.info.name, "NVIDIA GeForce RTX 4090");
  EXPECT_FALSE(sc->gpus[0].state.info.caps.has(Capability::kEcc));
  EXPECT_EQ(sc->gpus[0].state.sample.fan_pct, 64u);
  auto replay = open_fake(path);
  ASSERT_TRUE(replay.ok()) << replay.error().to_string();
  EXPECT_EQ(sample_at(**replay, 0).gpus.at(0).sample.power_mw, 402000u);
}

TEST(CaptureCli, SourceErrorsAreReportedWithTheirCode) {
  std::string out, err;
  EXPECT_EQ(
      run_cli({"gpuwarden", "capture", "--nvml-lib", "/nonexistent/libnvidia-ml.so.1"}, out, err),
      2);
  EXPECT_NE(err.find("[nvml.library_not_found]"), std::string::npos) << err;
}

}  // namespace
}  // namespace gw::nvml::test
