// gpu_burn's output (github.com/wilicc/gpu-burn): progress lines
//   "46.7%  proc'd: 11367 (7109 Gflop/s) - 11100 (6743 Gflop/s)   errors: 0 - 0   temps: 62 C - 82
//   C"
// (errors flagged "(WARNING!)" for wrong results, "(DIED!)" for a worker gone), the closing
// "Tested N GPUs:" / "GPU N: OK|FAULTY" summary, "No clients are alive!  Aborting" and
// "Couldn't init a GPU test: ...". Pure over text: BurnScanner keeps one run per input.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/bench.h"

namespace gw {

struct BurnProgress {
  struct Gpu {
    std::optional<double> gflops;  // nullopt: no "(N Gflop/s)" for this GPU
    bool worker_gone = false;      // "proc'd: -1"
    std::optional<int64_t> errors;
    bool error_flag = false, died = false;
    std::optional<int> temp_c;
  };
  std::vector<Gpu> gpus;
};

// One progress line (one '\r'-separated update of it); nullopt for any other line.
std::optional<BurnProgress> parse_burn_progress(std::string_view line);

class BurnScanner {
 public:
  // True when the line is gpu_burn's (progress, summary, its routine lines while a run is open).
  bool take(std::string_view line, std::string_view origin, size_t line_no);
  // The run read, if any (then the scanner is empty again).
  std::optional<BurnRun> finish();

 private:
  BurnRun& run(std::string_view origin, size_t line_no);
  void add(const BurnProgress& p, std::string_view origin, size_t line_no);
  std::optional<BurnRun> run_;
};

}  // namespace gw
