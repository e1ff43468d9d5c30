// Real output of a lent H200 (cases 474-483, 2026-12-04): Lightning's SimpleProfiler report and
// torch.profiler's table read as training timing (not as nvidia-smi tables), NCCL 2.28's INFO
// lines, JAX/XLA's out-of-memory report and PyTorch's device-side assert read to the last GPU
// line, with the class transformations.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "fixture_util.h"
#include "sources/app/lightning_profiler.h"
#include "sources/app/torch_profiler.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::class_variants;
using test::lines_of;
using test::read_fixture;

const char* const kLightning = "482-h200-lightning-2.6-simpleprofiler-slow-dataset";
const char* const kTorchProfile = "483-h200-torch-profiler-key-averages-matmul";

Observation read(const std::string& text) {
  Observation obs;
  add_capture(text, "run.log", obs);
  return obs;
}

std::optional<AppMessage> timing(const Observation& o) {
  for (const AppMessage& m : o.app_messages)
    if (m.kind == AppMessageKind::kStepTiming) return m;
  return std::nullopt;
}

size_t gpu_unread(const Observation& o) {
  size_t n = 0;
  for (const InputCoverage& c : o.coverage) n += c.gpu_lines_not_read;
  return n;
}

TEST(LightningProfiler, RowsOfEveryLayoutAndWhatIsNoRow) {
  auto r = parse_profiler_row(
      "|  [_TrainingEpochLoop].train_dataloader_next         \t|  0.16404        \t|  32"
      "             \t|  5.2492         \t|  83.185         \t|");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->action, "[_TrainingEpochLoop].train_dataloader_next");
  EXPECT_DOUBLE_EQ(*r->mean_s, 0.16404);
  EXPECT_DOUBLE_EQ(*r->calls, 32);
  EXPECT_DOUBLE_EQ(r->total_s, 5.2492);
  // 1.x: no leading bar, "_" calls on the Total row; 1.0: mean and total only.
  r = parse_profiler_row(
      "get_train_batch    \t|  0.0040861      \t|24             \t|  0.098066  \t|  0.28641  \t|");
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->total_s, 0.098066);
  r = parse_profiler_row("Total    \t|  -     \t|_      \t|  34.24   \t|  100 %   \t|");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->mean_s);
  EXPECT_FALSE(r->calls);
  r = parse_profiler_row("on_train_start      \t|  0.0071615      \t|  0.0071615");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->calls);
  EXPECT_TRUE(
      is_profiler_header("|  Action  \t|  Mean duration (s)\t|  Num calls  \t|  Total time (s) \t| "
                         " Percentage %  \t|"));
  EXPECT_TRUE(is_profiler_title("FIT Profiler Report"));
  EXPECT_TRUE(is_profiler_title("Profiler Report"));
  // nvidia-smi's and DCGM's rows are no profiler rows.
  EXPECT_FALSE(
      parse_profiler_row("|   0  NVIDIA H200                    On  |   00000000:00:06.0 Off |     "
                         "               0 |"));
  EXPECT_FALSE(
      parse_profiler_row("| N/A   38C    P0             80W /  700W |       0MiB / 143771MiB |"));
  EXPECT_FALSE(
      parse_profiler_row("| Deployment     | Pass                                           |"));
}

TEST(LightningProfiler, TheReportIsTheStepTimingInEveryVariant) {
  const std::string log = read_fixture(kLightning, "input.txt");
  const Observation o = read(log);
  const auto m = timing(o);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->steps, 32u);
  EXPECT_NEAR(m->data_wait_s, 5.2492, 1e-9);
  EXPECT_NEAR(m->step_s, 5.2492 + 0.66922, 1e-9);
  EXPECT_EQ(gpu_unread(o), 0u);  // the start-up lines ("GPU available: True (cuda), used: True")
  EXPECT_TRUE(o.samples.empty()) << "read as an nvidia-smi table";
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  for (const auto& [tag, text] : class_variants(log, dmesg)) {
    const auto v = timing(read(text));
    ASSERT_TRUE(v) << tag;
    EXPECT_EQ(v->steps, 32u) << tag;
    EXPECT_NEAR(v->data_wait_s, m->data_wait_s, 1e-9) << tag;
    EXPECT_NEAR(v->step_s, m->step_s, 1e-9) << tag;
  }
  // Cut before the batch row: no figure (the fetch alone is no share); cut after: the same.
  const auto lines = lines_of(log);
  size_t batch = 0;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find("run_training_batch") != std::string::npos) batch = i;
  ASSERT_GT(batch, 0u);
  std::string head;
  for (size_t i = 0; i < batch; ++i) head += lines[i] + "\n";
  EXPECT_FALSE(timing(read(head)));
  EXPECT_TRUE(timing(read(head + lines[batch] + "\n")));
}

TEST(LightningProfiler, ARunOnTheCpuBesideAGpuIsNotPassedOver) {
  const Observation o = read("GPU available: True (cuda), used: False\n");
  EXPECT_EQ(gpu_unread(o), 1u);
  EXPECT_EQ(gpu_unread(read("GPU available: True (cuda), used: True\n")), 0u);
}

TEST(TorchProfiler, TheTableIsReadAndWithoutStepsGivesNoTiming) {
  const std::string text = read_fixture(kTorchProfile, "input.txt");
  const Observation o = read(text);
  EXPECT_EQ(gpu_unread(o), 0u);
  EXPECT_FALSE(timing(o));
  ASSERT_EQ(o.coverage.size(), 1u);
  EXPECT_EQ(o.coverage[0].lines_not_understood, 2u);  // the profiler's own warning, 2 lines
  EXPECT_EQ(parse_torch_profiler_total("Self CUDA time total: 27.254ms"), 0.027254);
  EXPECT_TRUE(is_torch_profiler_rule("-----------  ------------  ------------"));
  EXPECT_FALSE(is_torch_profiler_rule("-----------------------------------"));
}

// The steps and the loader's fetches, in the table's own layout (the real header and rules of
// case 483, rows in its format): the loader's share of the steps' CPU time.
TEST(TorchProfiler, StepsAndLoaderRowsGiveTheWaitShare) {
  const auto lines = lines_of(read_fixture(kTorchProfile, "input.txt"));
  ASSERT_GT(lines.size(), 5u);
  const std::string rule = lines[2], header = lines[3];
  ASSERT_NE(header.find("Self CPU %"), std::string::npos);
  auto row = [](const std::string& name, const std::string& cpu_total) {
    return std::string(55 - std::min<size_t>(55, name.size()), ' ') + name +
           "         0.04%      64.973us        59.24%      " + cpu_total +
           "       8.936ms       0.000us         0.00%      48.050ms       4.805ms            10  "
           "\n";
  };
  const std::string table =
      rule + "\n" + header + "\n" + rule + "\n" + row("ProfilerStep#2", "400.000ms") +
      row("ProfilerStep#3", "600.000ms") +
      row("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "450.000ms") +
      row("aten::mm", "89.294ms") + rule + "\nSelf CPU time total: 1.2s\n";
  const Observation o = read(table);
  const auto m = timing(o);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->steps, 2u);
  EXPECT_NEAR(m->data_wait_s, 0.45, 1e-9);
  EXPECT_NEAR(m->step_s, 1.0, 1e-9);
  EXPECT_EQ(o.coverage[0].lines_not_understood, 0u);
}

// Every GPU line of the other H200 captures is read: NCCL 2.28's INFO lines, XLA's OOM report
// (HLO dump, source trace), the kernel's failed assertion, the driver's FBHUB line at start.
TEST(H200Captures, EveryGpuLineIsRead) {
  for (const char* id :
       {"477-h200-dmesg-boot-open-kernel-module-580",
        "479-h200-torch-2.11-device-side-assert-index-out-of-bounds",
        "480-h200-jax-0.11-oom-240gib-on-140gib-gpu", "481-h200-nccl-2.28-info-single-rank-socket",
        "474-h200-nvidia-smi-table-and-q-idle-driver-580"}) {
    const Observation o = read(read_fixture(id, "input.txt"));
    EXPECT_EQ(gpu_unread(o), 0u) << id;
    if (!o.coverage.empty() && !o.coverage[0].gpu_unread.empty())
      ADD_FAILURE() << id << ": " << o.coverage[0].gpu_unread[0].excerpt;
  }
  // The assertion line alone, without the error it explains, is not read.
  const auto assert_lines = lines_of(
      read_fixture("479-h200-torch-2.11-device-side-assert-index-out-of-bounds", "input.txt"));
  EXPECT_EQ(gpu_unread(read(assert_lines[0] + "\n")), 1u);
}

}  // namespace
}  // namespace gw
