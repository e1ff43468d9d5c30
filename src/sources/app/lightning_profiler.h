// PyTorch Lightning's SimpleProfiler report (`Trainer(profiler="simple")`), printed at the end
// of fit: a title ("FIT Profiler Report", 1.x "Profiler Report"), then one row per action,
//   2.x:  "|  [_TrainingEpochLoop].train_dataloader_next \t|  0.16404 \t|  32 \t|  5.2492
//   \t|  83.185 \t|" 1.x:  "get_train_batch      \t|  0.0040861 \t|24 \t|  0.098066 \t|  0.28641
//   \t|" 1.0:  "on_train_start       \t|  0.0071615 \t|  0.0071615"   (mean, total; no calls)
// with dashed rules between. The time spent fetching batches (train_dataloader_next, 1.x
// get_train_batch) against the time of the training batches themselves (run_training_batch)
// is the run's input-starvation share: one kStepTiming message. Pure over text.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/observation.h"

namespace gw {

struct ProfilerRow {
  std::string_view action;
  std::optional<double> mean_s;  // "-" on the Total row
  std::optional<double> calls;   // absent in 1.0's three-column form
  double total_s = 0;
};

// One row of the report's table (the header row gives nullopt: see is_profiler_header).
std::optional<ProfilerRow> parse_profiler_row(std::string_view trimmed);
bool is_profiler_header(std::string_view trimmed);  // "Action | Mean duration (s) | ..."
bool is_profiler_title(std::string_view trimmed);   // "FIT Profiler Report", "Profiler Report"
// "GPU available: True (cuda), used: True", "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]", ...
bool is_lightning_banner(std::string_view trimmed);

// The lines of one report: take() reads Lightning's start-up lines, the title, header, rules and
// rows (a dashed rule only inside a report), message() gives the step timing once the data and
// batch rows were read.
class LightningProfilerScanner {
 public:
  bool take(std::string_view trimmed, std::string_view origin, size_t line_no);
  std::optional<AppMessage> message() const;

 private:
  bool in_report_ = false;
  double wait_s_ = 0, batch_s_ = 0, wait_calls_ = 0, wait_mean_s_ = 0;
  bool have_wait_ = false, have_batch_ = false;
  std::string wait_action_, wait_origin_;
};

}  // namespace gw
