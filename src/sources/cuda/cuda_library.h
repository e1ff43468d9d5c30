// CudaLibrary: libcuda.so.1 (the CUDA driver API, shipped with every NVIDIA driver) opened with
// dlopen, and its ONE table of symbols, each resolved through its versioned names newest first
// (cuMemAlloc_v2 -> cuMemAlloc). No CUDA toolkit is needed to build or run. A symbol the
// library lacks stays null; the required ones missing make it "not a usable libcuda".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/dl_symbols.h"
#include "core/result.h"
#include "sources/cuda/cuda_types.h"

namespace gw::cuda {

using Ctx = CUcontext;
using Ptr = CUdeviceptr;

struct CudaApi {
  // Required: init, devices, contexts, memory, copies, streams, events, modules, launches.
  Sym<CUresult (*)(unsigned)> init;
  Sym<CUresult (*)(int*)> driver_version;
  Sym<CUresult (*)(int*)> device_count;
  Sym<CUresult (*)(CUdevice*, int)> device_get;
  Sym<CUresult (*)(char*, int, CUdevice)> device_name;
  Sym<CUresult (*)(int*, int, CUdevice)> device_attribute;
  Sym<CUresult (*)(size_t*, CUdevice)> device_total_mem;
  Sym<CUresult (*)(Ctx*, CUdevice)> primary_ctx_retain;
  Sym<CUresult (*)(CUdevice)> primary_ctx_release;
  Sym<CUresult (*)(Ctx)> ctx_set_current;
  Sym<CUresult (*)(size_t*, size_t*)> mem_get_info;
  Sym<CUresult (*)(Ptr*, size_t)> mem_alloc;
  Sym<CUresult (*)(Ptr)> mem_free;
  Sym<CUresult (*)(void**, size_t, unsigned)> mem_host_alloc;
  Sym<CUresult (*)(void*)> mem_free_host;
  Sym<CUresult (*)(Ptr, const void*, size_t, CUstream)> memcpy_htod_async;
  Sym<CUresult (*)(void*, Ptr, size_t, CUstream)> memcpy_dtoh_async;
  Sym<CUresult (*)(CUstream*, unsigned)> stream_create;
  Sym<CUresult (*)(CUstream)> stream_destroy;
  Sym<CUresult (*)(CUstream)> stream_synchronize;
  Sym<CUresult (*)(CUevent*, unsigned)> event_create;
  Sym<CUresult (*)(CUevent)> event_destroy;
  Sym<CUresult (*)(CUevent, CUstream)> event_record;
  Sym<CUresult (*)(CUevent)> event_synchronize;
  Sym<CUresult (*)(float*, CUevent, CUevent)> event_elapsed;
  Sym<CUresult (*)(CUmodule*, const void*)> module_load_data;
  Sym<CUresult (*)(CUmodule)> module_unload;
  Sym<CUresult (*)(CUfunction*, CUmodule, const char*)> module_get_function;
  Sym<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   CUstream, void**, void**)>
      launch_kernel;
  // Optional.
  Sym<CUresult (*)(CUresult, const char**)> error_string;
  Sym<CUresult (*)(CUresult, const char**)> error_name;
  Sym<CUresult (*)(char*, int, CUdevice)> device_pci_bus_id;
  Sym<CUresult (*)(CUdevice*, const char*)> device_by_pci_bus_id;
  Sym<CUresult (*)(CUuuid*, CUdevice)> device_uuid;
  Sym<CUresult (*)(Ptr, unsigned, size_t)> memset_d32;
  Sym<CUresult (*)(int*, CUdevice, CUdevice)> can_access_peer;
  Sym<CUresult (*)(Ctx, unsigned)> ctx_enable_peer_access;
  Sym<CUresult (*)(Ptr, Ctx, Ptr, Ctx, size_t, CUstream)> memcpy_peer_async;
};

class CudaLibrary {
 public:
  // dlopen(path, RTLD_NOW | RTLD_LOCAL) and resolve the table. Errors: cuda.library_not_found
  // (no NVIDIA driver, or libcuda.so.1 not on the library path) and cuda.incompatible_library.
  static Result<std::shared_ptr<const CudaLibrary>> open(const std::string& path);

  const CudaApi& api() const { return api_; }
  const std::string& path() const { return path_; }
  void* extra_symbol(const char* name) const;  // the fake's gwfake_cuda_* controls
  std::vector<std::string> missing_symbols() const;
  // "CUDA_ERROR_OUT_OF_MEMORY: out of memory (2)" from cuGetErrorName/String with the number.
  std::string describe(CUresult r) const;

  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;
  // Never dlcloses: an abandoned call past its deadline may still be inside the library.
  ~CudaLibrary() = default;

 private:
  CudaLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  CudaApi api_;
};

}  // namespace gw::cuda
