// A training run's own progress lines are read (not "nothing recognised"): HuggingFace
// Trainer's metrics dicts and TrainOutput, tqdm bars. The lines are real, quoted in public
// repositories' READMEs and issues (LLaMA-Factory, ms-swift and fine-tuning guides, found with
// the project's code search); the negatives are lines of other families.
#include "sources/app/trainer_progress.h"

#include <gtest/gtest.h>

#include <string>

#include "sources/captures.h"

namespace gw {
namespace {

const char* const kTrainerLog =
    "{'loss': 1.7102, 'grad_norm': 1.0412, 'learning_rate': 0.0001, 'epoch': 0.02}\n"
    "{'loss': 1.6627, 'grad_norm': 0.9876, 'learning_rate': 6.667e-05, 'epoch': 0.04}\n"
    "{'train_runtime': 225.8005, 'train_samples_per_second': 3.543, 'train_steps_per_second': "
    "0.886, 'train_loss': 1.211241865158081, 'epoch': 0.32}\n"
    "100%|██████████████████████████████████████████| 200/200 [03:45<00:00,  1.13s/it]\n"
    "TrainOutput(global_step=200, training_loss=1.211241865158081, metrics={'train_runtime': "
    "225.8005, 'train_samples_per_second': 3.543, 'train_steps_per_second': 0.886, "
    "'train_loss': 1.211241865158081, 'epoch': 0.32})\n"
    "Train: 100%|██████████| 94/94 [03:03<00:00,  1.95s/it]\n"
    "Map: 100%|██████████| 45/45 [00:00<00:00, 3053.02 examples/s]\n";

TEST(TrainerProgress, MetricsDictsAndBarsAreRead) {
  EXPECT_TRUE(is_trainer_metrics_line(
      "{'train_runtime': 1530.1399, 'train_samples_per_second': 3.144, "
      "'train_steps_per_second': 0.196, 'train_loss': 0.7139853564898173, 'epoch': 9.7, "
      "'num_input_tokens_seen': 2812704}"));
  EXPECT_TRUE(is_progress_bar("100%|██████████| 50/50 [8:05:30<00:00, 582.62s/it]"));
  EXPECT_TRUE(is_progress_bar("  5%|▌         | 50/1000 [00:10<03:10,  4.98it/s]"));
  // Not theirs: a config dict, an nvidia-smi row, a percentage in prose.
  EXPECT_FALSE(is_trainer_metrics_line("{'model': 'llama', 'lr': 0.1}"));
  EXPECT_FALSE(is_progress_bar("| N/A   38C    P0    80W /  700W |      0MiB / 143771MiB |"));
  EXPECT_FALSE(is_progress_bar("GPU 0 is 100%| busy"));
  Observation o;
  add_capture(kTrainerLog, "train.log", o);
  ASSERT_EQ(o.coverage.size(), 1u);
  EXPECT_EQ(o.coverage[0].lines_not_understood, 0u);
  EXPECT_EQ(o.coverage[0].gpu_lines_not_read, 0u);
}

// A step's loss and throughput (torchtitan, nanoGPT, key=value loggers) is progress; a line that
// also states data loading in a form no reader knows, or names the GPU stack, is not taken.
TEST(TrainerProgress, StepMetricLinesAreReadUnlessTheyCarryDataTime) {
  for (std::string_view line :
       {"[titan] 2026-02-24 19:46:17,508 - root - INFO - step:  4  loss:  7.62585  grad_norm: "
        "26.6250  memory: 66.91GiB(37.51%)  tps: 10,050  tflops: 314.71  mfu: 13.99%",
        "iter 100: loss 3.2100, time 102.31ms, mfu 31.24%", "step=100 loss=-0.25 lr=3e-4"})
    EXPECT_TRUE(is_step_metrics_line(line)) << line;
  for (std::string_view line :
       {"step: 4 loss: 7.6 dataload: 0.8s", "iter 100: loss 3.21, wait 0.9s", "steps: 4 loss: 7.6",
        "step: 4 eval_loss_scale: 2", "loss: 7.6 at the last step", "substep: 4 loss: 7.6"})
    EXPECT_FALSE(is_step_metrics_line(line)) << line;
  Observation o;
  add_capture(
      "step:  1  loss: 12.0  tps: 9,000\n"
      "step:  2  loss: 11.5  tps: 9,100\n"
      "step:  3  loss: 11.2  CUDA error: an illegal memory access was encountered\n",
      "titan.log", o);
  ASSERT_EQ(o.coverage.size(), 1u);
  EXPECT_EQ(o.coverage[0].lines_not_understood, 0u);
  ASSERT_EQ(o.app_messages.size(), 1u);  // the error line went to the error readers
  EXPECT_EQ(o.app_messages[0].kind, AppMessageKind::kIllegalAddress);
}

}  // namespace
}  // namespace gw
