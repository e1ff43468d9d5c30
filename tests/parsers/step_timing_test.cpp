// Training logs with step timing (issue 19): the lines read into one kStepTiming message per
// input, and the class transformations (cut, re-indented, CRLF, after another family, inside a
// bug report). Inputs are the training fixtures 290, 291 and 294 (held-out 293 stays out; 295 was
// read after its held-out score was recorded, docs/capture-formats.md).
#include "sources/app/step_timing.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

const char* const kStarved = "290-mmdet-train-log-data-time-80pct-starved";
const char* const kFine = "291-mmdet-train-log-data-time-2pct-not-starved";
const char* const kStall = "294-animateanyone-load-data-stall-19s-every-few-steps";

// A copy, not a pointer: the Observation is often a temporary.
std::optional<AppMessage> timing(const Observation& o) {
  for (const AppMessage& m : o.app_messages)
    if (m.kind == AppMessageKind::kStepTiming) return m;
  return std::nullopt;
}

Observation read(const std::string& text) {
  Observation obs;
  add_capture(text, "train.log", obs);
  return obs;
}

TEST(StepTiming, MmcvLinesSumTheWaitInsideTheStep) {
  const Observation o = read(read_fixture(kStarved, "train.log"));
  const std::optional<AppMessage> m = timing(o);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->steps, 3u);
  EXPECT_NEAR(m->data_wait_s, 1.655 + 1.595 + 1.417, 1e-9);
  EXPECT_NEAR(m->step_s, 2.013 + 2.013 + 1.764, 1e-9);
  EXPECT_EQ(m->origin, "train.log:1");
  EXPECT_EQ(o.coverage.at(0).lines_not_understood, 0u);
}

TEST(StepTiming, WaitMeasuredApartIsAddedToTheStep) {
  const std::optional<AppMessage> m = timing(read(read_fixture(kStall, "train.log")));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->steps, 6u);
  EXPECT_NEAR(m->longest_wait_s, 19.6173, 1e-9);
  EXPECT_EQ(m->origin, "train.log:4");
  EXPECT_NEAR(m->step_s, m->data_wait_s + 0.665 + 0.652 + 0.640 + 0.686 + 0.664 + 0.639, 1e-9);
}

// The forms of other frameworks, read by the same keys-as-data table.
TEST(StepTiming, TorchAndImageNetExampleForms) {
  // Lua Torch: compute and the wait measured apart.
  const auto torch = parse_step_timing(
      "Epoch: [1][11/10000]    Time 2.195 Err 8.5423 Top1-%: 0.00 LR 1e-02 DataLoadingTime 21.177");
  ASSERT_TRUE(torch.has_value());
  EXPECT_NEAR(torch->wait_s, 21.177, 1e-9);
  EXPECT_NEAR(torch->step_s, 21.177 + 2.195, 1e-9);
  // PyTorch's ImageNet example: the iteration and the wait inside it, each with its average.
  const auto ex = parse_step_timing(
      "Epoch: [3][ 40/5005]\tTime  0.412 ( 0.587)\tData  0.012 ( 0.201)\tLoss 5.1e+00 (5.3e+00)");
  ASSERT_TRUE(ex.has_value());
  EXPECT_NEAR(ex->wait_s, 0.012, 1e-9);
  EXPECT_NEAR(ex->step_s, 0.412, 1e-9);
  // timm: "Time: 0.407s, ... Data: 0.010 (0.044)".
  const auto timm = parse_step_timing(
      "Train: 2 [ 100/1251 (  8%)]  Loss: 6.21 (6.40)  Time: 0.407s, 629.41/s  (0.437s, "
      "585.90/s)  LR: 1.000e-01  Data: 0.010 (0.044)");
  ASSERT_TRUE(timm.has_value());
  EXPECT_NEAR(timm->wait_s, 0.010, 1e-9);
  EXPECT_NEAR(timm->step_s, 0.407, 1e-9);
  // torchvision's MetricLogger: lower-case keys, read only beside its "eta:".
  const auto ml = parse_step_timing(
      "Epoch: [0]  [ 103/5005]  eta: 4:43:31  lr: 0.1  img/s: 13.6  loss: 6.8536 (6.9458)  "
      "time: 2.5401  data: 0.0336  max mem: 3524");
  ASSERT_TRUE(ml.has_value());
  EXPECT_NEAR(ml->wait_s, 0.0336, 1e-9);
  EXPECT_NEAR(ml->step_s, 2.5401, 1e-9);
  EXPECT_FALSE(parse_step_timing("loading data: 12 files, time: 30"));
  // A capital "Data" that is not a key, or a key without its number, is no step.
  EXPECT_FALSE(parse_step_timing("Data loaded in 12 s, Time to first batch 3 s"));
  EXPECT_FALSE(parse_step_timing("DataLoadingTime 0.5"));  // the step's key is missing
}

// YOLOX's trainer (loguru, capture 472): "iter_time: 8.711s, data_time: 8.409s", units on the
// numbers, under a "date | LEVEL | module:line -" prefix that also looks like a log's.
TEST(StepTiming, YoloxIterTimeAndDataTime) {
  const std::string line =
      "2021-08-03 08:06:36 | INFO     | yolox.core.trainer:259 - epoch: 1/100, iter: 240/983, "
      "mem: 7746Mb, iter_time: 8.711s, data_time: 8.409s, total_loss: 5.8, iou_loss: 2.9, l1_loss: "
      "0.0, conf_loss: 2.2, cls_loss: 0.7, lr: 2.384e-05, size: 512, ETA: 5 days, 2:29:49";
  const auto t = parse_step_timing(line);
  ASSERT_TRUE(t.has_value());
  EXPECT_NEAR(t->wait_s, 8.409, 1e-9);
  EXPECT_NEAR(t->step_s, 8.711, 1e-9);
  // Through the reader, in its class variants: one step-timing message, nothing unread.
  for (const std::string& text : {line + "\n", "  " + line + "\r\n", line + "\n" + line + "\n"}) {
    Observation obs;
    add_capture(text, "train.log", obs);
    ASSERT_EQ(obs.app_messages.size(), 1u);
    EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kStepTiming);
    EXPECT_EQ(obs.coverage.at(0).lines_not_understood, 0u);
  }
}

// The first step read is set apart as the loader's start-up only when it can be the run's
// first: its iteration is within one logging interval of the start (or unknown).
TEST(StepTiming, OnlyARunsFirstStepIsSetApartAsStartUp) {
  const auto sum_of = [](std::initializer_list<std::string_view> lines) {
    StepTimingSum sum;
    size_t no = 0;
    for (std::string_view l : lines) sum.add(*parse_step_timing(l), "t.log", ++no);
    return sum.message();
  };
  const AppMessage cut = sum_of({"iter: 240/983, iter_time: 8.711s, data_time: 8.409s",
                                 "iter: 250/983, iter_time: 14.433s, data_time: 0.002s"});
  EXPECT_EQ(cut.first_step_s, 0.0);  // mid-run: nothing set apart
  const AppMessage start = sum_of({"Epoch: [0][ 10/5005]\tTime  5.0 ( 5.0)\tData  4.5 ( 4.5)",
                                   "Epoch: [0][ 20/5005]\tTime  0.4 ( 2.7)\tData  0.1 ( 2.3)"});
  EXPECT_DOUBLE_EQ(start.first_step_s, 5.0);  // the first logged step after the start
  const AppMessage unknown = sum_of({"time: 2.0, data_time: 1.9", "time: 0.5, data_time: 0.1"});
  EXPECT_DOUBLE_EQ(unknown.first_step_s, 2.0);
}

TEST(StepTiming, Detectron2sIterationIsItsIterNotTheDateInItsPrefix) {
  const auto t = parse_step_timing(
      "[11/01 11:27:04 d2.utils.events]: eta: 8:05:12  iter: 1259  total_loss: 1.012  time: "
      "0.3322  data_time: 0.0334  lr: 0.010000  max_mem: 3961M");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->index, 1259u);
  // "iter: 7" at the line's end, and a total after it, are counts too; a word is not.
  EXPECT_EQ(parse_step_timing("time: 0.5 data_time: 0.1 iter: 7")->index, 7u);
  EXPECT_EQ(parse_step_timing("time: 0.5 data_time: 0.1 iter: 7/90")->index, 7u);
  EXPECT_FALSE(parse_step_timing("time: 0.5 data_time: 0.1 iter: 7x")->index);
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
    const std::optional<AppMessage> m = timing(read(text));
    ASSERT_TRUE(m.has_value()) << tag;
    EXPECT_EQ(m->steps, base.steps) << tag;
    EXPECT_NEAR(m->data_wait_s, base.data_wait_s, 1e-9) << tag;
    EXPECT_NEAR(m->step_s, base.step_s, 1e-9) << tag;
  }
  // Cut at any line: the lines left are summed, no more.
  const auto lines = lines_of(log);
  for (size_t cut = 1; cut < lines.size(); ++cut) {
    std::string rest;
    for (size_t i = cut; i < lines.size(); ++i) rest += lines[i] + "\n";
    const std::optional<AppMessage> m = timing(read(rest));
    ASSERT_TRUE(m.has_value()) << cut;
    EXPECT_EQ(m->steps, lines.size() - cut);
  }
}

}  // namespace
}  // namespace gw
