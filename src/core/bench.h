// What stress and benchmark tools printed in a capture: gpu_burn's per-GPU progress and verdict,
// nccl-tests' bus bandwidth per message size. Parsed by sources/app (gpu_burn, nccl_tests),
// judged by diagnose/bench.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

// One GPU of a gpu_burn run, over every progress line read. Indexes are gpu_burn's (CUDA order).
struct BurnGpu {
  unsigned index = 0;
  double first_gflops = 0, last_gflops = 0, best_gflops = 0;
  int64_t errors = 0;       // the last count printed (gpu_burn's counter can wrap negative)
  bool error_flag = false;  // "(WARNING!)": wrong results
  bool died = false;        // "(DIED!)" or a "proc'd: -1" worker
  std::optional<int> first_temp_c, max_temp_c;
  std::optional<bool> summary_ok;  // "GPU N: OK" / "GPU N: FAULTY" in the closing summary
};

struct BurnRun {
  std::vector<BurnGpu> gpus;
  size_t progress_lines = 0;
  bool no_clients_alive = false;  // "No clients are alive!  Aborting"
  std::string init_error;         // "Couldn't init a GPU test: Error in "load module": ..."
  std::string origin;             // "file:line" of the first line
  std::string died_origin;        // the first line that shows a died worker
};

// One row of an nccl-tests table (all_reduce_perf and friends).
struct CollectiveRow {
  uint64_t bytes = 0;
  double busbw_gbs = 0;  // the better of out-of-place and in-place
  double algbw_gbs = 0;
  size_t line = 0;
};

struct CollectiveRun {
  std::string test;  // "all_reduce_perf" when the capture names it, else empty
  std::vector<CollectiveRow> rows;
  std::optional<double> avg_busbw_gbs;  // "# Avg bus bandwidth : N"
  std::vector<std::string> devices;     // "# Rank 0 ... device 0 [0x1b] NVIDIA H100 80GB HBM3"
  std::string origin;                   // "file:line" of the first row
};

// A matrix of p2pBandwidthLatencyTest (CUDA samples) or nvbandwidth: rows are the source (or
// the row GPU), columns the destination; cells in GB/s, microseconds or 0/1 (connectivity).
struct BandwidthMatrix {
  enum class Kind { kBandwidth, kLatency, kConnectivity };
  Kind kind = Kind::kBandwidth;
  std::string title;  // the tool's own title line
  bool bidirectional = false;
  std::optional<bool> p2p;  // P2P=Enabled / P2P=Disabled, when the title says
  std::vector<std::vector<std::optional<double>>> cells;  // [row][column]; nullopt: N/A
  std::string origin;                                     // "file:line" of the title
};

}  // namespace gw
