// The measurements, each one task on a device's CUDA worker (CudaSession::run): copies between
// pinned host memory and the device, copies between two devices, and the load kernel. Every
// function frees what it allocated, also when a call fails, and returns the failing call.
#pragma once

#include <optional>
#include <string>

#include "sources/cuda/cuda_session.h"

namespace gw::active {

using cuda::Calls;
using Failure = std::optional<std::string>;

struct CopyFigures {
  std::optional<double> h2d_gb_s, d2h_gb_s, bidir_gb_s;
};
// `bytes` per copy, `reps` copies per direction; timed with CUDA events.
Failure measure_copies(Calls& c, size_t bytes, int reps, CopyFigures& out);

struct PeerFigures {
  bool access = false;
  std::optional<double> gb_s;
};
// Runs with `from`'s context current; allocates on both, enables peer access when the driver
// says it can, and times copies from `from` to `to` (staged through the host without access).
Failure measure_peer(Calls& c, const cuda::CudaDevice& from, const cuda::CudaDevice& to,
                     size_t bytes, int reps, PeerFigures& out);

// The load kernel, set up once per device and launched in chunks between NVML samples.
struct LoadState {
  cuda::CUmodule module = nullptr;
  cuda::CUfunction fn = nullptr;
  cuda::CUstream stream = nullptr;
  cuda::CUdeviceptr buf = 0;
  unsigned elements = 0;
  unsigned blocks = 0;
};
// `share` of the device's free memory (never all of it), at most `cap` bytes.
Failure load_setup(Calls& c, int ordinal, double share, size_t cap, LoadState& s);
Failure load_chunk(Calls& c, const LoadState& s, int launches);
void load_teardown(Calls& c, const LoadState& s);

}  // namespace gw::active
