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

}  // namespace
}  // namespace gw
