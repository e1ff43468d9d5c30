// CudaSession: the CUDA driver opened, initialised and enumerated, every call under a deadline
// like the NVML source: each device has its own worker (DeadlineRunner), work is handed over one
// task at a time, and a call past the deadline marks that device hung (its worker abandoned).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sources/cuda/cuda_library.h"
#include "sources/nvml/deadline_runner.h"

namespace gw::cuda {

struct CudaSessionOptions {
  std::string library_path = "libcuda.so.1";
  // For the fake CUDA driver: the fake NVML library (same path the NVML source loaded) and the
  // scenario both play (gwfake_cuda_attach).
  std::optional<std::string> fake_nvml_path;
  std::optional<std::string> scenario_path;
  std::chrono::milliseconds call_deadline{20000};
};

struct CudaDevice {
  int ordinal = 0;
  std::string name;
  std::string pci_bus_id;   // normalised like NVML's ("00000000:18:00.0"); "" when unknown
  CUcontext ctx = nullptr;  // the device's primary context, once a task ran on it
};

// Runs one CUDA call with the worker's tracker, so an overrun names the call.
class Calls {
 public:
  Calls(const CudaLibrary& lib, nvml::CallTracker& t) : lib_(lib), api_(lib.api()), t_(t) {}
  template <class F, class... A>
  CUresult operator()(const Sym<F>& s, A... args) {
    if (!s) return kNotFound;
    t_.begin(s.name);
    const CUresult r = s.fn(args...);
    t_.end();
    return r;
  }
  const CudaApi& api() const { return api_; }
  // "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY: out of memory (2)"
  template <class F>
  std::string fail(const Sym<F>& s, CUresult r) const {
    return std::string(s.name) + ": " + lib_.describe(r);
  }

 private:
  const CudaLibrary& lib_;
  const CudaApi& api_;
  nvml::CallTracker& t_;
};

class CudaSession {
 public:
  // Errors: cuda.library_not_found, cuda.incompatible_library, cuda.not_fake, cuda.init_failed
  // (with the driver's error), cuda.init_hung, cuda.no_devices.
  static Result<std::unique_ptr<CudaSession>> open(const CudaSessionOptions& o);

  const std::vector<CudaDevice>& devices() const { return devices_; }
  const CudaLibrary& library() const { return *lib_; }
  std::string describe() const;  // "CUDA driver 12.4 via libcuda.so.1"

  // Runs `task` on the device's worker with its context current. Returns the error text when
  // the task reported one, or "<call> did not return within N s" when it overran (the device is
  // then hung: every later run fails at once).
  using Task = std::function<std::optional<std::string>(Calls&)>;
  std::optional<std::string> run(size_t device, Task task);
  bool hung(size_t device) const { return hung_.at(device) != 0; }

 private:
  CudaSession() = default;
  std::shared_ptr<const CudaLibrary> lib_;
  std::vector<CudaDevice> devices_;
  std::vector<std::unique_ptr<nvml::DeadlineRunner>> runners_;
  std::vector<unsigned char>
      hung_;  // one byte per device: workers of different devices write at once
  std::chrono::milliseconds deadline_{20000};
  int driver_version_ = 0;
};

}  // namespace gw::cuda
