#include "sources/cuda/cuda_library.h"

#include <dlfcn.h>

#include <initializer_list>

namespace gw::cuda {
namespace {

// The one table: every logical call and the exported names to try, newest first. The _v2
// names came with 64-bit device pointers and sizes (CUDA 3.2); the driver keeps the old
// names for old binaries, so the plain name must only be the fallback.
template <class Bind>
void for_each_symbol(CudaApi& a, Bind&& b) {
  b(a.init, {"cuInit"}, true);
  b(a.driver_version, {"cuDriverGetVersion"}, true);
  b(a.device_count, {"cuDeviceGetCount"}, true);
  b(a.device_get, {"cuDeviceGet"}, true);
  b(a.device_name, {"cuDeviceGetName"}, true);
  b(a.device_attribute, {"cuDeviceGetAttribute"}, true);
  b(a.device_total_mem, {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"}, true);
  b(a.primary_ctx_retain, {"cuDevicePrimaryCtxRetain"}, true);
  b(a.primary_ctx_release, {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, true);
  b(a.ctx_set_current, {"cuCtxSetCurrent"}, true);
  b(a.mem_get_info, {"cuMemGetInfo_v2", "cuMemGetInfo"}, true);
  b(a.mem_alloc, {"cuMemAlloc_v2", "cuMemAlloc"}, true);
  b(a.mem_free, {"cuMemFree_v2", "cuMemFree"}, true);
  b(a.mem_host_alloc, {"cuMemHostAlloc"}, true);
  b(a.mem_free_host, {"cuMemFreeHost"}, true);
  b(a.memcpy_htod_async, {"cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync"}, true);
  b(a.memcpy_dtoh_async, {"cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync"}, true);
  b(a.stream_create, {"cuStreamCreate"}, true);
  b(a.stream_destroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}, true);
  b(a.stream_synchronize, {"cuStreamSynchronize"}, true);
  b(a.event_create, {"cuEventCreate"}, true);
  b(a.event_destroy, {"cuEventDestroy_v2", "cuEventDestroy"}, true);
  b(a.event_record, {"cuEventRecord"}, true);
  b(a.event_synchronize, {"cuEventSynchronize"}, true);
  b(a.event_elapsed, {"cuEventElapsedTime"}, true);
  b(a.module_load_data, {"cuModuleLoadData"}, true);
  b(a.module_unload, {"cuModuleUnload"}, true);
  b(a.module_get_function, {"cuModuleGetFunction"}, true);
  b(a.launch_kernel, {"cuLaunchKernel"}, true);
  b(a.error_string, {"cuGetErrorString"}, false);
  b(a.error_name, {"cuGetErrorName"}, false);
  b(a.device_pci_bus_id, {"cuDeviceGetPCIBusId"}, false);
  b(a.device_by_pci_bus_id, {"cuDeviceGetByPCIBusId"}, false);
  b(a.device_uuid, {"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, false);
  b(a.memset_d32, {"cuMemsetD32_v2", "cuMemsetD32"}, false);
  b(a.can_access_peer, {"cuDeviceCanAccessPeer"}, false);
  b(a.ctx_enable_peer_access, {"cuCtxEnablePeerAccess"}, false);
  b(a.memcpy_peer_async, {"cuMemcpyPeerAsync"}, false);
}

}  // namespace

Result<std::shared_ptr<const CudaLibrary>> CudaLibrary::open(const std::string& path) {
  // RTLD_LOCAL: the driver's symbols stay out of the process's global namespace (the fake and
  // a real driver must never interpose on each other).
  auto h =
      open_library(path, RTLD_NOW | RTLD_LOCAL, "cuda.library_not_found", "the CUDA driver library",
                   "; the NVIDIA driver's libcuda.so.1 is not installed or not on the "
                   "library path (try --cuda-lib PATH)");
  if (!h) return h.error();
  std::shared_ptr<CudaLibrary> lib(new CudaLibrary());
  lib->handle_ = *h;
  lib->path_ = path;
  const std::string missing =
      bind_symbols(*h, lib->api_, [](auto& api, auto f) { for_each_symbol(api, f); });
  if (!missing.empty())
    return make_error("cuda.incompatible_library",
                      "the library does not export " + missing + "; it is not a usable libcuda",
                      path);
  return std::shared_ptr<const CudaLibrary>(std::move(lib));
}

void* CudaLibrary::extra_symbol(const char* name) const {
  return dlsym(handle_, name);
}

std::vector<std::string> CudaLibrary::missing_symbols() const {
  return unbound_symbols(api_, [](auto& api, auto f) { for_each_symbol(api, f); });
}

std::string CudaLibrary::describe(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.error_name) (void)api_.error_name.fn(r, &name);
  if (api_.error_string) (void)api_.error_string.fn(r, &text);
  std::string out = name != nullptr ? name : "CUDA error";
  if (text != nullptr) out += std::string(": ") + text;
  return out + " (" + std::to_string(r) + ")";
}

}  // namespace gw::cuda
