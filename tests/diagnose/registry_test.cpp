#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "diagnose/diagnose.h"

namespace gw {
namespace {

TEST(Registry, CodesAreUniqueDottedAndComplete) {
  std::set<std::string_view> seen;
  for (const RuleInfo& r : rule_registry()) {
    EXPECT_TRUE(seen.insert(r.code).second) << "duplicate code " << r.code;
    EXPECT_NE(r.code.find('.'), std::string_view::npos) << r.code;
    EXPECT_FALSE(r.area.empty()) << r.code;
    EXPECT_FALSE(r.title.empty()) << r.code;
    EXPECT_FALSE(r.checks.empty()) << r.code;
    EXPECT_FALSE(r.remedy.empty()) << r.code;
    EXPECT_NE(r.run, nullptr) << r.code;
    EXPECT_EQ(find_rule(r.code), &r);
  }
  EXPECT_GE(seen.size(), 40u);
  EXPECT_EQ(find_rule("no.such_rule"), nullptr);
}

TEST(Registry, DocsListEveryRegisteredCode) {
  const std::string path = GW_SOURCE_DIR "/docs/checks.md";
  if (std::getenv("GW_UPDATE_CHECKS_DOC") != nullptr) {
    std::ofstream(path) << checks_markdown();  // regenerate on request only
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << "docs/checks.md missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  for (const RuleInfo& r : rule_registry()) {
    EXPECT_NE(doc.find("`" + std::string(r.code) + "`"), std::string::npos)
        << r.code << " is not documented in docs/checks.md (regenerate: gpuwarden doctor "
        << "--list-checks --markdown > docs/checks.md)";
  }
  EXPECT_EQ(doc, checks_markdown()) << "docs/checks.md is stale: regenerate it with "
                                       "GW_UPDATE_CHECKS_DOC=1 diagnose_test or "
                                       "gpuwarden doctor --list-checks --markdown";
}

}  // namespace
}  // namespace gw
