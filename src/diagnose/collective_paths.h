// What the path between a collective's GPUs should carry, from what the capture shows of it:
// NCCL's own plan (NCCL_DEBUG=INFO "=== System : maxBw ..."), or `nvidia-smi topo -m` with the
// GPUs the nccl-tests run used (its "device N" lines and CUDA_VISIBLE_DEVICES), judged with
// the GPU model's NVLink and PCIe figures (facts in collective_paths.cpp). Shared by the
// nccl-tests and NCCL topology rules.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/bench.h"
#include "diagnose/context.h"

namespace gw {

struct PathCeiling {
  double gbs = 0;   // per direction, GB/s: what the slowest hop of the best ring carries
  std::string why;  // "NCCL's plan: maxBw 24.0 GB/s (log:12)", "GPU0-GPU1 NV12: 12 x 25 GB/s"
};

// The run's GPUs as `topo -m` numbers them, with how they were found; nullopt when the capture
// does not say (no device lines, or numbers outside the matrix).
struct RunGpus {
  std::vector<unsigned> gpus;
  std::string how;
};
std::optional<RunGpus> run_gpus(const DiagnoseContext& c, const CollectiveRun& r);

// "GPU0-GPU1 SYS, GPU0-GPU2 NODE": the links between the run's GPUs (the first six pairs).
std::string run_links(const Topology& t, const std::vector<unsigned>& gpus);

// The ring over `gpus` whose slowest hop is fastest, and that hop: nullopt when a hop crosses
// CPU sockets (SYS: no figure to hold it to) or the link is unknown.
std::optional<PathCeiling> ring_ceiling(const Topology& t, const std::vector<unsigned>& gpus,
                                        const std::string& model);

// NCCL's plan first, else the topology; nullopt when the capture shows neither.
std::optional<PathCeiling> collective_ceiling(const DiagnoseContext& c, const CollectiveRun& r);

// The run's plateau: the best bus bandwidth at 32 MiB or more (nullopt when no row is that big).
std::optional<CollectiveRow> plateau(const CollectiveRun& r);

// Which link could carry `gbs` per direction: "at most what PCIe 4.0 x16 carries ...".
std::string busbw_class(double gbs);

// The GPU model the run or the capture names ("Tesla T4"), empty when none.
std::string run_model(const DiagnoseContext& c, const CollectiveRun& r);

}  // namespace gw
