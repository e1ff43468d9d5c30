// Training logs with step timing (issue 19): the lines read into one kStepTiming message per
// input, and the class transformations (cut, re-indented, CRLF, after another family, inside a
// bug report). Inputs are the training fixtures 290, 291 and 294 (held-out 293, 295 stay out).
#include "sources/app/step_timing.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::read_fixture;

const char* const kStarved = "290-mmdet-train-log-data-time-80pct-starved";
const char* const kFine = "291-mmdet-train-log-data-time-2pct-not-starved";
const char* const kStall = "294-animateanyone-load-data-stall-19s-every-few-steps";

const AppMessage* timing(const Observation& o) {
  for (const AppMessage& m : o.app_messages)
    if (m.kind == AppMessageKind::kStepTiming) return &m;
  return nullptr;
}

Observation read(const std::string& text) {
  Observation obs;
  add_capture(text, "train.log", obs);
  return obs;
}

std::vector<std::string> lines_of(const std::string& t) {
  std::vector<std::string> out;
  size_t p = 0;
  while (p < t.size()) {
    const size_t nl = t.find('\n', p);
    out.push_back(t.substr(p, nl - p));
    p = nl == std::string::npos ? t.size() : nl + 1;
  }
  return out;
}

TEST(StepTiming, MmcvLinesSumTheWaitInsideTheStep) {
  const Observation o = read(read_fixture(kStarved, "train.log"));
  const AppMessage* m = timing(o);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->steps, 3u);
  EXPECT_NEAR(m->data_wait_s, 1.655 + 1.595 + 1.417, 1e-9);
  EXPECT_NEAR(m->step_s, 2.013 + 2.013 + 1.764, 1e-9);
  EXPECT_EQ(m->origin, "train.log:1");
  EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u);
}

TEST(StepTiming, WaitMeasuredApartIsAddedToTheStep) {
  const AppMessage* m = timing(read(read_fixture(kStall, "train.log")));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->steps, 6u);
  EXPECT_NEAR(m->longest_wait_s, 19.6173, 1e-9);
  EXPECT_EQ(m->origin, "train.log:4");
  EXPECT_NEAR(m->step_s, m->data_wait_s + 0.665 + 0.652 + 0.640 + 0.686 + 0.664 + 0.639, 1e-9);
}

TEST(StepTiming, OtherLinesAreNotSteps) {
  EXPECT_FALSE(parse_step_timing("time: 0.5, memory: 3946"));                  // no wait
  EXPECT_FALSE(parse_step_timing("data_time: 1.5, time: 0.5"));                // wait > step
  EXPECT_FALSE(parse_step_timing("[  12.3] NVRM: Xid (PCI:0000:3b:00): 79"));  // no key
  EXPECT_FALSE(parse_step_timing("runtime: 3, data_time: 1"));                 // "time" is a tail
}

TEST(StepTiming, ClassTransformationsKeepTheSums) {
  const std::string log = read_fixture(kFine, "train.log");
  const AppMessage base = *timing(read(log));
  std::string crlf, indented;
  for (const std::string& l : lines_of(log)) {
    crlf += l + "\r\n";
    indented += "    " + l + "\n";
  }
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"crlf", crlf},
      {"indented", indented},
      {"after-dmesg", dmesg + log},
      {"before-dmesg", log + dmesg},
      {"bug-report", sep + "\n\npython train.py\n\n" + log + sep + "\n\ndmesg:\n\n" + dmesg},
  };
  for (const auto& [tag, text] : variants) {
    const AppMessage* m = timing(read(text));
    ASSERT_NE(m, nullptr) << tag;
    EXPECT_EQ(m->steps, base.steps) << tag;
    EXPECT_NEAR(m->data_wait_s, base.data_wait_s, 1e-9) << tag;
    EXPECT_NEAR(m->step_s, base.step_s, 1e-9) << tag;
  }
  // Cut at any line: the lines left are summed, no more.
  const auto lines = lines_of(log);
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    for (size_t i = cut; i < lines.size(); ++i) rest += lines[i] + "\n";
    const AppMessage* m = timing(read(rest));
    ASSERT_NE(m, nullptr) << cut;
    EXPECT_EQ(m->steps, lines.size() - cut);
  }
}

}  // namespace
}  // namespace gw
