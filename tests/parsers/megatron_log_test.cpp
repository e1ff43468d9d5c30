// Megatron-LM's iteration reports and timers (issue 19, training logs): the interval's
// batch-generator time against its elapsed time per iteration. The lines are a real BERT
// pretraining log from the GWAI project's documentation (github.com/AI-HPC-Research-Team/GWAI,
// 2024-02-02): iteration 1 carries the start-up, iteration 2 waits 274 ms of 429 ms for data.
#include "sources/app/megatron_log.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

const std::string kLog =
    "      iteration        1/   30000 | current time: 1706860208.35 | consumed samples:       "
    "    16 | elapsed time per iteration (ms): 1996.1 | learning rate: 0.000E+00 | global batch "
    "size:    16 | loss scale: 4294967296.0 | number of skipped iterations:   1 | number of nan "
    "iterations:   0 |\n"
    "      time (ms) | backward-compute: 138.46 | backward-params-all-reduce: 32.71 | "
    "backward-embedding-all-reduce: 0.04 | optimizer-copy-to-main-grad: 3.17 | "
    "optimizer-unscale-and-check-inf: 42.67 | optimizer: 45.94 | batch-generator: 263.80\n"
    "      iteration        2/   30000 | current time: 1706860208.78 | consumed samples:       "
    "    32 | elapsed time per iteration (ms): 429.4 | learning rate: 0.000E+00 | global batch "
    "size:    16 | loss scale: 2147483648.0 | number of skipped iterations:   1 | number of nan "
    "iterations:   0 |\n"
    "      time (ms) | backward-compute: 31.50 | backward-params-all-reduce: 35.43 | "
    "backward-embedding-all-reduce: 0.03 | optimizer-copy-to-main-grad: 2.87 | "
    "optimizer-unscale-and-check-inf: 12.14 | optimizer: 15.32 | batch-generator: 274.37\n";

std::optional<AppMessage> timing(const std::string& text) {
  Observation o;
  add_capture(text, "train.log", o);
  for (const AppMessage& m : o.app_messages)
    if (m.kind == AppMessageKind::kStepTiming) return m;
  return std::nullopt;
}

TEST(MegatronLog, TimersAfterAnIterationReportAreItsStep) {
  MegatronLog m;
  std::optional<StepTimingLine> step;
  const auto lines = test::lines_of(kLog);
  EXPECT_TRUE(m.take(std::string_view(lines[0]).substr(6), step));
  EXPECT_FALSE(step);
  EXPECT_TRUE(m.take(std::string_view(lines[1]).substr(6), step));
  ASSERT_TRUE(step);
  EXPECT_NEAR(step->wait_s, 0.2638, 1e-9);
  EXPECT_NEAR(step->step_s, 1.9961, 1e-9);
  EXPECT_EQ(step->index, 1u);
  // A timers line without its report is read but gives no step; other lines are not taken.
  EXPECT_TRUE(m.take("time (ms) | forward-compute: 43.42 | batch-generator: 1.62", step));
  EXPECT_FALSE(step);
  EXPECT_FALSE(m.take("the iteration took a long time", step));
}

TEST(MegatronLog, TheSecondIntervalIsStarvedInEveryVariant) {
  const auto m = timing(kLog);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->steps, 2u);
  EXPECT_NEAR(m->data_wait_s - m->first_wait_s, 0.27437, 1e-9);  // the first is start-up
  EXPECT_NEAR(m->step_s - m->first_step_s, 0.4294, 1e-9);
  const std::string dmesg = test::read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [tag, text] : test::class_variants(kLog, dmesg)) {
    const auto v = timing(text);
    ASSERT_TRUE(v) << tag;
    EXPECT_EQ(v->steps, 2u) << tag;
    EXPECT_NEAR(v->data_wait_s, m->data_wait_s, 1e-9) << tag;
  }
  Observation o;
  add_capture(kLog, "train.log", o);
  EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u);
}

}  // namespace
}  // namespace gw
