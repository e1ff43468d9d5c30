// What the report says of records an input repeats (issue 20): a DCGM result folded from many
// copies is one finding that says how many; the all-clear parts beside a fault are named up to
// a few and counted beyond; and no finding lists more than 24 lines of evidence.
#include <gtest/gtest.h>

#include <string>

#include "builders.h"
#include "diagnose/diagnose.h"

namespace gw {
namespace {

using test::find;

DcgmResult dcgm(DcgmKind kind, std::string test, std::string text, size_t line) {
  DcgmResult r;
  r.kind = kind;
  r.gpu = 0;
  r.part = "dcgmi diag";
  r.test = std::move(test);
  r.text = std::move(text);
  r.origin = "diag.txt:" + std::to_string(line);
  return r;
}

TEST(Repeats, AFoldedDiagFailureIsOneFindingThatSaysHowManyTimes) {
  Observation obs;
  obs.dcgm.push_back(dcgm(DcgmKind::kDiagFail, "GPU Memory", "GPU 0 memory errors", 3));
  obs.dcgm.back().copies = 57;
  const auto f = diagnose(obs);
  size_t n = 0;
  for (const Finding& x : f) n += x.code == "dcgm.diag_fail";
  EXPECT_EQ(n, 1u);
  const auto x = find(f, "dcgm.diag_fail");
  ASSERT_TRUE(x);
  EXPECT_NE(test::evidence(*x).find("the input holds this result 57 times"), std::string::npos)
      << test::evidence(*x);
  obs.dcgm.back().copies = 1;
  const auto once = find(diagnose(obs), "dcgm.diag_fail");
  ASSERT_TRUE(once);
  EXPECT_EQ(test::evidence(*once).find("holds this result"), std::string::npos);
}

TEST(Repeats, AllClearPartsBesideAFaultAreNamedUpToFourAndCountedBeyond) {
  Observation obs;
  obs.dcgm.push_back(dcgm(DcgmKind::kDiagFail, "PCIe", "link down", 3));
  for (size_t i = 0; i < 10; ++i) {
    obs.dcgm.push_back(dcgm(DcgmKind::kHealthy, "", "Overall Health: Healthy", 100 + i));
    obs.dcgm.back().part = "dcgmi health";
  }
  obs.dcgm.back().copies = 3;  // the last one stands for three
  const auto x = find(diagnose(obs), "dcgm.diag_fail");
  ASSERT_TRUE(x);
  size_t named = 0;
  for (const auto& e : x->evidence) named += e.find("the fault above wins") != std::string::npos;
  EXPECT_EQ(named, 4u);
  EXPECT_NE(test::evidence(*x).find("8 more DCGM report(s) in the input said all was well"),
            std::string::npos)
      << test::evidence(*x);
}

TEST(Repeats, NoFindingListsMoreThanTwentyFourLinesOfEvidence) {
  // 40 uncorrectable-error counters read on one GPU: one finding naming each.
  Observation obs;
  for (size_t i = 0; i < 40; ++i) {
    DcgmResult r = dcgm(DcgmKind::kReading, "EDVTL", std::to_string(i + 1), 10 + i);
    r.part = "dcgmi dmon";
    obs.dcgm.push_back(std::move(r));
  }
  const auto x = find(diagnose(obs), "dcgm.counter_errors");
  ASSERT_TRUE(x);
  ASSERT_EQ(x->evidence.size(), 24u);
  EXPECT_NE(x->evidence.front().find("= 1 ("), std::string::npos) << x->evidence.front();
  EXPECT_EQ(x->evidence.back(), "17 more line(s) of evidence like these, not listed");
}

}  // namespace
}  // namespace gw
