// `status` colours and names what `doctor` would warn about, from the same rules.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cli/status_view.h"
#include "run_binary.h"

namespace gw {
namespace {

using ::testing::HasSubstr;

TEST(StatusColour, DoctorWarningsColourTheirCellsAndJoinTheSummary) {
  Snapshot s;
  GpuState g;
  g.info.index = 0;
  g.info.name = "GPU";
  g.sample.mem_total_bytes = 100;
  g.sample.mem_used_bytes = 99;
  g.sample.power_mw = 100000;
  g.sample.power_limit_mw = 200000;
  g.info.power_default_limit_mw = 400000;
  s.gpus.push_back(g);
  cli::StatusViewOptions o;
  o.color = true;
  const std::string plain = cli::render_status(s, o);
  o.findings[0] = {"memory.near_full", "power.limit_below_default"};
  const std::string flagged = cli::render_status(s, o);
  EXPECT_THAT(flagged, HasSubstr("VRAM nearly full"));
  EXPECT_THAT(flagged, HasSubstr("power limit lowered"));
  EXPECT_THAT(plain, ::testing::Not(HasSubstr("VRAM nearly full")));
  // The power cell turns yellow (warning) only with the finding.
  EXPECT_GT(std::count(flagged.begin(), flagged.end(), '\x1b'),
            std::count(plain.begin(), plain.end(), '\x1b'));
}

TEST(StatusColour, TheVramScenarioIsFlaggedByTheBinary) {
  const auto r = clitest::run_gpuwarden(
      {"status", "--scenario", clitest::scenario_path("vram-nearly-full").string()});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_THAT(r.out, HasSubstr("VRAM nearly full")) << r.out;
}

}  // namespace
}  // namespace gw
