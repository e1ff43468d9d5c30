// gpuwarden doctor --stress: a controlled load on this machine's GPUs, measured.
//   1. one NVML sample: which GPUs to test; a GPU running other processes is refused unless
//      forced (never load someone else's work);
//   2. the load kernel on every tested GPU for the duration, NVML sampled the whole time; it stops
//      at once on an interrupt, a GPU at its shutdown temperature or a GPU lost;
//   3. host<->device copies per GPU (pinned memory: each direction, both at once) and the PCIe
//      link NVML reports right after them;
//   4. copies between every pair of tested GPUs, with peer access when the driver allows it.
// The samples go into the Observation like any doctor window (so every rule judges them with
// the load known) and the figures into Observation::active (diagnose/active.cpp judges them).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/observation.h"
#include "sources/cuda/cuda_session.h"
#include "sources/gpu_source.h"

namespace gw::active {

struct StressOptions {
  double duration_s = 10;
  std::vector<unsigned> gpus;  // NVML indexes; empty = every GPU
  bool force = false;          // load GPUs that run other processes too
  double interval_s = 1.0;     // NVML sample interval during the load
  size_t copy_bytes = size_t{64} << 20;
  int copy_reps = 8;
  size_t peer_bytes = size_t{32} << 20;
  int peer_reps = 4;
  double memory_share = 0.25;           // of the free device memory, for the load buffer
  size_t memory_cap = size_t{4} << 30;  // and never more than this
  int launches_per_chunk = 10;          // kernel launches between two checks of the stop flag
  uint32_t own_pid = 0;                 // this process (its own context is not "other")
  // Set: no GPU is loaded, each is refused with this reason (the queue would not drain them).
  std::optional<std::string> refuse_all;
  // Sleeps up to the given time, returning false when interrupted (Ctrl-C).
  std::function<bool(std::chrono::milliseconds)> sleep;
  std::function<void(const std::string&)> progress;  // one line per phase
};

// Runs the whole check. `cuda` is null when the CUDA driver could not be opened: `cuda_error`
// says why, and only step 1 runs (the report says the load was not run).
void run_stress(GpuSource& nvml, cuda::CudaSession* cuda, const std::string& cuda_error,
                const StressOptions& o, Observation& obs);

// The CUDA driver that goes with `source` (the real libcuda.so.1 or `library`; the fake one
// beside a fake NVML), opened; null with `error` saying why when it cannot be used.
std::unique_ptr<cuda::CudaSession> open_cuda(const GpuSourceOptions& source,
                                             const std::optional<std::string>& library,
                                             std::string& error);

// The processes on a GPU that are not ours, "python3 (pid 4711)", from one sample.
std::vector<std::string> foreign_processes(const GpuState& g, uint32_t own_pid);

}  // namespace gw::active
