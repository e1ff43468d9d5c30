// The scenario examples in docs/scenario-format.md show their fault with exactly the options
// the page gives: every such line is run and must report the finding named in its comment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "run_binary.h"

namespace gw {
namespace {

TEST(DocExamples, ScenarioFaultsShowWithTheDocumentedOptions) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/docs/scenario-format.md");
  ASSERT_TRUE(in.good());
  const std::regex line(R"(^GPUWARDEN_FAKE_TIME_SCALE=(\d+) gpuwarden (.+?)\s+# (\S+)\s*$)");
  size_t run = 0;
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_match(l, m, line)) continue;
    std::vector<std::string> args;
    std::istringstream words(m[2].str());
    for (std::string w; words >> w;) args.push_back(w);
    clitest::RunOptions ro;
    ro.env["GPUWARDEN_FAKE_TIME_SCALE"] = m[1].str();
    ro.cwd = GW_SOURCE_DIR;
    const auto r = clitest::run_gpuwarden(args, ro);
    EXPECT_THAT(r.out, ::testing::HasSubstr(m[3].str())) << l << "\n" << r.describe();
    EXPECT_NE(r.exit_code, 0) << l;
    ++run;
  }
  EXPECT_GE(run, 7u) << "the example block of docs/scenario-format.md was not found";
}

}  // namespace
}  // namespace gw
