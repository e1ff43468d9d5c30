// Training logs that time their steps: the share of each step spent waiting for data is the
// input-starvation verdict. Forms read (keys, not positions, so that the frameworks' other
// fields may sit anywhere on the line):
//   mmcv / mmdetection: "..., time: 2.013, data_time: 1.655, memory: 2677, ..." (time includes
//   the wait); a script's own "load_data_time: 19.6173, train_step_time: 0.686" (measured apart);
//   Lua Torch's "Time 1.972 ... DataLoadingTime 0.043" (apart); PyTorch's ImageNet example and
//   timm's "Time  0.355 ( 0.563)  Data  0.001 ( 0.198)" (the iteration, the wait inside it);
//   torchvision references' MetricLogger "eta: ...  time: 2.5401  data: 0.0336" (the same).
// Pure over text; the capture reader sums the lines of one input (StepTimingSum).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/observation.h"

namespace gw {

struct StepTimingLine {
  double wait_s = 0;  // waiting for the batch
  double step_s = 0;  // the whole step, the wait included
  // The iteration the line reports, when it says ("iter: 240/983", "[ 40/5005]").
  std::optional<uint64_t> index;
};

// Cheap on other lines: one substring search before anything else.
std::optional<StepTimingLine> parse_step_timing(std::string_view line);

// The lines of one input, summed into one AppMessage (kStepTiming).
class StepTimingSum {
 public:
  void add(const StepTimingLine& t, std::string_view origin, size_t line_no);
  bool empty() const { return m_.steps == 0; }
  AppMessage message() const { return m_; }

 private:
  AppMessage m_;
  std::optional<uint64_t> first_index_;
};

}  // namespace gw
