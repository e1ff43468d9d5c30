// `gpuwarden capture` round trip (the requirement): capturing a scenario and replaying the
// capture gives the same `status --json` snapshot as reading the scenario itself.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_binary.h"
#include "scenario_model.h"

namespace gw::clitest {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// The status document without what legitimately differs between two runs of two files:
// snapshot.time_ms (the sample's wall-clock time), snapshot.source and source_description (they
// name the file that was read: the scenario vs. the capture). Everything else must be identical.
json comparable_status(const std::string& stdout_text) {
  json doc = json::parse(stdout_text);
  doc.erase("source_description");
  doc.at("snapshot").erase("time_ms");
  doc.at("snapshot").erase("source");
  return doc;
}

class CliCaptureRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(CliCaptureRoundTrip, ReplayingTheCaptureGivesTheSameSnapshot) {
  const TempDir dir;
  const auto scenario = scenario_path(GetParam());
  const auto cap = dir.path() / "cap.json";
  const auto c = run_gpuwarden({"capture", "--scenario", scenario.string(), "-o", cap.string()});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  EXPECT_TRUE(c.out.empty()) << "the capture went to -o, not stdout";
  EXPECT_THAT(c.err, HasSubstr(cap.string()));

  const auto original = run_gpuwarden({"status", "--scenario", scenario.string(), "--json"});
  ASSERT_EQ(original.exit_code, 0) << original.describe();
  const auto replay = run_gpuwarden({"status", "--scenario", cap.string(), "--json"});
  ASSERT_EQ(replay.exit_code, 0) << replay.describe();

  const json a = comparable_status(original.out);
  const json b = comparable_status(replay.out);
  const json patch = json::diff(a, b);
  EXPECT_TRUE(patch.empty()) << "replay differs from the scenario (JSON patch from original to "
                                "replay):\n"
                             << patch.dump(1);
  // Not vacuous: the documents carry the GPUs.
  EXPECT_EQ(b.at("snapshot").at("gpus").size(), load_json_file(scenario).at("devices").size());
}

INSTANTIATE_TEST_SUITE_P(Bundled, CliCaptureRoundTrip,
                         ::testing::Values("demo", "consumer-rtx4090", "pcie-link",
                                           "vram-nearly-full", "healthy-8x-h100"),
                         [](const auto& p) { return test_name(p.param); });

// A hung GPU is recorded as a hang of the call it was stuck in, so the replay hangs that GPU
// alone (not the enumeration of the whole machine) and reads the same snapshot.
TEST(CliCapture, HungGpuReplaysAsTheSameHungGpu) {
  const TempDir dir;
  const auto scenario = scenario_path("hung-call");
  const auto cap = dir.path() / "cap.json";
  RunOptions o;
  o.timeout = std::chrono::milliseconds(20000);  // the scripted hang lasts 30 s
  const std::vector<std::string> deadline{"--deadline-ms", "300"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), deadline.begin(), deadline.end());
    return run_gpuwarden(args, o);
  };
  const auto c = with({"capture", "--scenario", scenario.string(), "-o", cap.string()});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const auto original = with({"status", "--scenario", scenario.string(), "--json"});
  ASSERT_EQ(original.exit_code, 0) << original.describe();
  const auto replay = with({"status", "--scenario", cap.string(), "--json"});
  ASSERT_EQ(replay.exit_code, 0) << replay.describe();
  const json b = comparable_status(replay.out);
  EXPECT_EQ(b.at("snapshot").at("gpus")[3].at("access"), "hung");
  const json patch = json::diff(comparable_status(original.out), b);
  EXPECT_TRUE(patch.empty()) << patch.dump(1);
}

TEST(CliCapture, StdoutCaptureIsAScenarioTheFakeReplays) {
  const TempDir dir;
  const auto c = run_gpuwarden({"capture", "--scenario", scenario_path("demo").string()});
  ASSERT_EQ(c.exit_code, 0) << c.describe();
  const json sc = json::parse(c.out);
  EXPECT_EQ(sc.at("hostname"), "gpu-node-17");
  EXPECT_EQ(sc.at("devices").size(), 8u);
  const auto file = dir.write("from-stdout.json", c.out);
  const auto r = run_gpuwarden({"status", "--scenario", file.string(), "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_EQ(json::parse(r.out).at("snapshot").at("gpus").size(), 8u);
}

TEST(CliCapture, UnreadableSourceExitsTwoWithTheCode) {
  const auto r =
      run_gpuwarden({"capture", "--scenario", scenario_path("init-version-mismatch").string()});
  EXPECT_EQ(r.exit_code, 2) << r.describe();
  EXPECT_THAT(r.err, HasSubstr("nvml.lib_rm_version_mismatch"));
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace gw::clitest
