// GPM (GPU performance monitoring, Hopper and later): the profiling ratios behind DCGM's
// DCGM_FI_PROF_* fields (tensor, SM, DRAM, FP pipes). NVML computes them from two samples
// taken some time apart, so a reader keeps the previous sample between readings.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "sources/nvml/deadline_runner.h"
#include "sources/nvml/nvml_library.h"

namespace gw::nvml {

// One GPU's GPM state. Owned and used by one thread (the GPU's sampler worker).
class GpmReader {
 public:
  GpmReader() = default;
  GpmReader(const GpmReader&) = delete;
  GpmReader& operator=(const GpmReader&) = delete;
  ~GpmReader();  // frees nothing: see release()

  // Takes a GPM sample and fills `out.sample.gpm` with the ratios over the interval since the
  // previous one. The first call asks whether the GPU supports GPM; a driver without the
  // symbols or a GPU that says no leaves gpm empty from then on, without further calls.
  // A failed sample (errors go to out.errors) restarts the interval: nothing is reported for
  // a span that was not measured.
  void read(const NvmlLibrary& lib, CallTracker& t, nvmlDevice_t dev, GpuState& out);

  // Frees the two sample buffers through the library (before nvmlShutdown).
  void release(const NvmlLibrary& lib, CallTracker& t);

  // False once the GPU or the driver was found without GPM.
  bool maybe_supported() const { return state_ != State::kUnsupported; }

 private:
  enum class State { kUnknown, kUnsupported, kReady };
  State state_ = State::kUnknown;
  nvmlGpmSample_t prev_ = nullptr;
  nvmlGpmSample_t next_ = nullptr;
  bool have_prev_ = false;
  std::unique_ptr<nvmlGpmMetricsGet_t> request_;  // 13 KB: kept, not rebuilt every second
};

// The GPM metrics gpuwarden asks for, in request order, with where each value goes.
struct GpmMetricSlot {
  unsigned id;
  std::optional<double> GpmMetrics::*field;
};
const std::vector<GpmMetricSlot>& gpm_metric_slots();

}  // namespace gw::nvml
