// The lines a training run prints about its own progress, read as such (no GPU fact in them,
// but understood: a log of them is not "nothing recognised"):
//   HuggingFace Trainer's metrics dicts: "{'loss': 1.7102, 'grad_norm': 1.0412,
//   'learning_rate': 0.0001, 'epoch': 0.02}", "{'train_runtime': 225.8005,
//   'train_samples_per_second': 3.543, ...}", "{'eval_loss': ...}" and the TrainOutput line;
//   tqdm progress bars: "100%|█████| 200/200 [03:45<00:00,  1.13s/it]" (with a label before,
//   "Train: ", "Map: ", and postfix figures inside the brackets);
//   step metric lines, a step counter and a loss each followed by its number: torchtitan's
//   "step:  4  loss:  7.62585  grad_norm: 26.6250  memory: 66.91GiB(37.51%)  tps: 10,050
//   tflops: 314.71  mfu: 13.99%", nanoGPT's "iter 100: loss 3.2100, time 102.31ms, mfu 31.24%",
//   "step=100 loss=2.31 lr=3e-4"; not when the line has a word of data loading ("data",
//   "reader", "load", "fetch", "wait") that the step-timing reader did not take.
// Pure over text.
#pragma once

#include <string_view>

namespace gw {

bool is_trainer_metrics_line(std::string_view trimmed);
bool is_progress_bar(std::string_view trimmed);
bool is_step_metrics_line(std::string_view trimmed);

}  // namespace gw
