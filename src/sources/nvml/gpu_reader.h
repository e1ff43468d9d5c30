// Reading one GPU through the NVML table: a probe (identity, static limits, which
// capabilities answer) and then cheap per-sample reads that skip what the probe found absent.
#pragma once

#include <functional>
#include <vector>

#include "core/snapshot.h"
#include "sources/nvml/deadline_runner.h"
#include "sources/nvml/nvml_library.h"

namespace gw::nvml {

// What sampling knows about one GPU between samples. Immutable once published, so a worker
// that was abandoned mid-read can keep a reference without racing the next sample.
struct GpuPlan {
  nvmlDevice_t handle = nullptr;
  DeviceInfo info;  // index, identity, static limits and caps (valid once probed)
  bool probed = false;
  std::vector<unsigned> links;          // NVLinks that answered at the probe
  std::vector<unsigned> link_versions;  // parallel to links; 0 = unknown
};

// Probe: fills `plan` (static facts and caps) and `out` with a first sample. `out.access`
// says whether the GPU answered; a lost or reset GPU leaves plan->probed false.
// `on_identity` (optional) gets the identity and static limits as soon as they are read, so a
// GPU that hangs later in the probe can still be reported by name.
void probe_gpu(const NvmlLibrary& lib, CallTracker& tracker, GpuPlan& plan, GpuState& out,
               const std::function<void(const DeviceInfo&)>& on_identity = {});

// One sample of a probed GPU. Capabilities the probe found absent are not asked again.
void sample_gpu(const NvmlLibrary& lib, CallTracker& tracker, const GpuPlan& plan, GpuState& out);

// "Hopper" for 9; nullopt for values NVML has not defined.
std::optional<std::string> architecture_name(unsigned arch);
// The inverse, for the fake and the scenario reader (case-insensitive).
std::optional<unsigned> architecture_from_name(std::string_view name);

}  // namespace gw::nvml
