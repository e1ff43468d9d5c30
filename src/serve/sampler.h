// Sampler: one thread per GPU reading NVML at the sampling interval. A round waits for the
// GPUs only until its own deadline, so a GPU whose call hangs is reported hung while the others
// (and the HTTP server, and shutdown) go on. A hung thread is never duplicated: its GPU is
// skipped until the stuck call returns, then sampled again.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/snapshot.h"
#include "sources/nvml/nvml_library.h"

namespace gw::serve {

struct SamplerOptions {
  std::string library_path = "libnvidia-ml.so.1";
  std::optional<std::string> scenario_path;  // for the fake NVML
  std::string label = "nvml";
  std::chrono::milliseconds deadline{2000};  // one NVML call longer than this: GPU hung
};

// What the daemon knows about one GPU beyond its newest reading.
struct GpuFreshness {
  unsigned index = 0;
  std::optional<int64_t> last_sample_ms;  // newest reading of any kind
  std::optional<int64_t> last_ok_ms;      // newest reading with access kOk
  uint64_t samples = 0;
  uint64_t hangs = 0;  // calls that overran the deadline
};

struct Round {
  Snapshot snapshot;                // every GPU, in NVML order
  std::vector<GpuFreshness> fresh;  // parallel to snapshot.gpus
};

class Sampler {
 public:
  // Opens the library, loads the scenario into the fake, runs nvmlInit and enumeration under
  // the deadline, and starts one thread per GPU. Errors as nvml::open_nvml_source.
  static Result<std::unique_ptr<Sampler>> open(const SamplerOptions& options);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Asks every idle GPU thread for a reading and waits for them until `wait` passes; GPUs
  // still in a call then keep their previous reading (and are hung once the call overran the
  // deadline). `now_ms` stamps the snapshot.
  Round sample(int64_t now_ms, std::chrono::milliseconds wait);

  size_t gpu_count() const;
  std::shared_ptr<const nvml::NvmlLibrary> library() const;
  // Device handles by NVML index (null for a GPU whose handle could not be opened).
  std::vector<nvmlDevice_t> handles() const;
  // Stops the threads; a thread stuck in a call is left to finish on its own.
  void stop();

  struct Shared;

 private:
  Sampler() = default;
  std::shared_ptr<Shared> shared_;
};

}  // namespace gw::serve
