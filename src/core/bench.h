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

// "#  Rank  0 Group  0 Pid 1234 on node1 device  0 [0x1b] NVIDIA H100 80GB HBM3"
struct CollectiveDevice {
  std::optional<unsigned> cuda_index;  // "device  0": the CUDA device number in its process
  std::string bus;                     // "0x1b": the PCI bus number as printed
};

struct CollectiveRun {
  std::string test;  // "all_reduce_perf" when the capture names it, else empty
  std::vector<CollectiveRow> rows;
  std::optional<double> avg_busbw_gbs;       // "# Avg bus bandwidth : N"
  std::vector<std::string> devices;          // the device names of those lines ("NVIDIA H100 ...")
  std::vector<CollectiveDevice> device_ids;  // the same lines' device numbers and buses
  // CUDA_VISIBLE_DEVICES on the command line that started the test, when the capture shows it.
  std::optional<std::vector<unsigned>> visible_devices;
  std::string origin;  // "file:line" of the first row
  size_t copies = 1;   // runs of the input that printed this same table (sources/record_fold.h)
};

// What NCCL_DEBUG=INFO printed of the node's paths: "=== System : maxBw 24.0 totalBw 24.0 ==="
// (the best path bandwidth NCCL plans with, GB/s), the GPU-to-GPU paths of its topology dump
// ("GPU/CE000 :GPU/0-4e000 (5/10.0/SYS) ...") and the link kinds of its tree dump
// ("+ NVL[240.0] - GPU/...").
struct NcclPath {
  std::string from, to;  // "CE000", "4E000": NCCL's bus ids
  double bw_gbs = 0;
  std::string type;  // "NVL", "PIX", "PXB", "PHB", "SYS", ...
};

struct NcclTopology {
  std::optional<double> max_bw_gbs, total_bw_gbs;
  std::vector<NcclPath> gpu_paths;
  std::vector<std::string> link_kinds;  // of the tree dump, each once: "NVL", "PCI", "SYS"
  std::string origin;                   // "file:line" of the first line read
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
  size_t copies = 1;  // the same matrix printed again (sources/record_fold.h)
};

}  // namespace gw
