// Megatron-LM's training log: one report per logging interval,
//   " iteration      182/  250000 | consumed samples: ... | elapsed time per iteration (ms):
//    126995.3 | learning rate: ... |"
// and, with its timers on, the averages of the same interval on the next line,
//   "time (ms) | forward-compute: 152.33 | backward-compute: 157.91 | ... | batch-generator: 0.64"
// where batch-generator is the time spent fetching the batch from the data loader. The two
// together are the interval's step timing: the wait for data against the whole iteration.
// Pure over text; the capture reader adds the steps to the input's StepTimingSum.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "sources/app/step_timing.h"

namespace gw {

class MegatronLog {
 public:
  // True when the line is an iteration report or a timers line; a timers line after an
  // iteration report sets `step` to that interval's timing.
  bool take(std::string_view trimmed, std::optional<StepTimingLine>& step);

 private:
  std::optional<double> elapsed_ms_;  // of the last iteration report, until its timers line
  std::optional<uint64_t> iteration_;
};

}  // namespace gw
