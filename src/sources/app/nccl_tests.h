// nccl-tests output (all_reduce_perf, all_gather_perf, ...): the result rows
//   "  134217728  33554432  float  sum  -1  1568.3  85.58  160.47  0  1560.9  86.0  161.2  0"
// with or without the redop and root columns (older builds), with an MPI launcher's "[0]" rank
// tags anywhere in the line, the "#  Rank  0 Group  0 Pid ... device  0 [0x1b] NVIDIA H100"
// device lines and "# Avg bus bandwidth : N". Pure over text; NcclTestsScanner keeps one table
// per input.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bench.h"
#include "sources/record_fold.h"

namespace gw {

// One result row; nullopt for any other line. The row's bus bandwidth is the better of the
// out-of-place and in-place ones (a test without in-place prints "N/A" there).
std::optional<CollectiveRow> parse_nccl_tests_row(std::string_view line);

class NcclTestsScanner {
 public:
  // True when the line is nccl-tests' (a row, its header and summary lines, a device line).
  bool take(std::string_view line, std::string_view origin, size_t line_no);
  // The tables read: a row no larger than the one before it starts a new table (a log of
  // several runs).
  std::vector<CollectiveRun> finish();
  // Runs left out by the cap on those kept (kMaxCollectiveRunsPerInput) in the input the last
  // finish() closed.
  size_t dropped() const { return dropped_; }

 private:
  CollectiveRun& run(std::string_view origin, size_t line_no);
  std::optional<CollectiveRun> run_;
  // The command line seen before the next table: its test and CUDA_VISIBLE_DEVICES.
  std::string command_test_;
  std::optional<std::vector<unsigned>> command_visible_;
  std::vector<CollectiveRun> done_;
  GroupFold<CollectiveRun> fold_{0, kMaxCollectiveRunsPerInput};  // a looped test's equal runs
  size_t dropped_ = 0;
  void close();  // the open run into done_
};

}  // namespace gw
