// What an active check measured (gpuwarden doctor --stress): copies between host and each GPU,
// copies between GPU pairs, and how long each GPU was loaded. The NVML samples taken during the
// load are ordinary Snapshots in the Observation; this is what only the load could tell.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw {

struct ActiveGpu {
  unsigned gpu = 0;  // NVML index
  std::string name;  // model, for comparing a GPU with its siblings
  // Why this GPU was not loaded ("runs 2 other processes: python3 (pid 4711), ...").
  std::optional<std::string> refused;
  std::optional<double> h2d_gb_s, d2h_gb_s, bidir_gb_s;  // pinned memory, per direction / both
  // The PCIe link NVML reported right after the copies, and the most it can train to.
  std::optional<unsigned> link_gen, link_width, max_gen, max_width;
  std::optional<std::string> error;  // the CUDA call that failed on this GPU, with its error
  double load_s = 0;                 // seconds the load kernel ran
};

struct ActivePeer {
  unsigned a = 0, b = 0;  // NVML indexes, copy from a to b
  bool access = false;    // cuDeviceCanAccessPeer and cuCtxEnablePeerAccess both succeeded
  std::optional<double> gb_s;
  std::string expected;  // what the topology says the path is: "NVLink", "PCIe" ("" unknown)
  std::optional<std::string> error;
};

struct ActiveReport {
  double planned_s = 0;         // the DURATION asked for
  int64_t load_start_ms = 0;    // wall clock when the load kernels started
  std::vector<ActiveGpu> gpus;  // every GPU asked for, loaded or not
  std::vector<ActivePeer> peers;
  std::optional<std::string> stopped;     // why the load ended early ("Ctrl-C", "GPU 3 at ...")
  std::optional<std::string> cuda_error;  // the CUDA driver could not be used at all
  std::string cuda_source;                // "CUDA 12.4 via libcuda.so.1", "fake CUDA"
  std::string xid_watch;  // "Xid events registered on 4 of 4 GPUs", or why Xids are not watched
};

}  // namespace gw
