// GpuSource: anything that yields Snapshots of this machine's GPUs. The live NVML source and
// the fake NVML (demo fleet, scenarios) both come through the same NVML loader.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/event.h"
#include "core/result.h"
#include "core/snapshot.h"

namespace gw {

// Events (Xids) delivered as they happen, on the watcher's own thread; destroying it stops it.
class EventWatch {
 public:
  virtual ~EventWatch() = default;
  // "Xid events registered on 8 of 8 GPUs", or which GPUs were skipped and why.
  virtual const std::string& status() const = 0;
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // One full sample of every GPU. Per-GPU failures (lost, hung call) stay inside the
  // Snapshot; only a failure of the whole source is an Error.
  virtual Result<Snapshot> sample() = 0;
  // "NVML 12.580.65.06 via /usr/lib/.../libnvidia-ml.so.1", "demo fleet (fake NVML)", ...
  virtual std::string describe() const = 0;
  // Xid events of this source's GPUs as they happen, to `sink` (called on another thread).
  // An error when the source has no event API (a library without it).
  // The closest PCIe ancestor GPUs a and b (NVML indexes) share, in `nvidia-smi topo -m`'s words:
  // "PIX", "PXB", "PHB", "NODE", "SYS" ("X" for the same board); nullopt when the source
  // cannot tell (no such call, a GPU it cannot read).
  virtual std::optional<std::string> pcie_path(unsigned a, unsigned b) {
    (void)a;
    (void)b;
    return std::nullopt;
  }
  virtual Result<std::unique_ptr<EventWatch>> watch_events(std::function<void(Event&&)> sink) {
    (void)sink;
    return make_error("nvml.events_unsupported", "this GPU source delivers no events");
  }
};

struct GpuSourceOptions {
  bool demo = false;                              // the bundled demo fleet through the fake NVML
  std::optional<std::string> scenario;            // a scenario file played by the fake NVML
  std::optional<std::string> nvml_library;        // path overriding libnvidia-ml.so.1
  std::chrono::milliseconds call_deadline{2000};  // every NVML call runs under it

  // The caller named a source (fake or library) instead of leaving it to the default search.
  bool named() const { return demo || scenario || nvml_library; }
};

// The running binary's folder: what it ships beside itself (the fake NVML and CUDA, the
// scenarios, the HTTP commands' plugin) is looked for from there. nullopt without /proc.
std::optional<std::filesystem::path> exe_dir();

// Which library (and scenario) open_gpu_source would load, without opening it: for callers
// that drive the NVML loader themselves (the daemon's per-GPU sampler).
struct ResolvedGpuSource {
  std::string library_path;
  std::optional<std::string> scenario_path;  // set for the fake NVML
  std::string label;                         // Snapshot::source
};
Result<ResolvedGpuSource> resolve_gpu_source(const GpuSourceOptions& options);

// The CUDA driver that goes with the source: the real libcuda.so.1 (or `cuda_library`), or for
// the demo and scenarios the fake CUDA driver, told which fake NVML and scenario it plays with.
struct ResolvedCudaLibrary {
  std::string library_path;
  std::optional<std::string> fake_nvml_path;  // set with the fake
  std::optional<std::string> scenario_path;
};
Result<ResolvedCudaLibrary> resolve_cuda_library(const GpuSourceOptions& options,
                                                 const std::optional<std::string>& cuda_library);

// Opens the requested source. With neither demo nor scenario it loads the real NVML.
Result<std::unique_ptr<GpuSource>> open_gpu_source(const GpuSourceOptions& options);

}  // namespace gw
