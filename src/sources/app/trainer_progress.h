// The lines a training run prints about its own progress, read as such (no GPU fact in them,
// but understood: a log of them is not "nothing recognised"):
//   HuggingFace Trainer's metrics dicts: "{'loss': 1.7102, 'grad_norm': 1.0412,
//   'learning_rate': 0.0001, 'epoch': 0.02}", "{'train_runtime': 225.8005,
//   'train_samples_per_second': 3.543, ...}", "{'eval_loss': ...}" and the TrainOutput line;
//   tqdm progress bars: "100%|█████| 200/200 [03:45<00:00,  1.13s/it]" (with a label before,
//   "Train: ", "Map: ", and postfix figures inside the brackets).
// Pure over text.
#pragma once

#include <string_view>

namespace gw {

bool is_trainer_metrics_line(std::string_view trimmed);
bool is_progress_bar(std::string_view trimmed);

}  // namespace gw
