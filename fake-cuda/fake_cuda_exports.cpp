// The extern "C" exports of the fake libcuda.so.1: the driver API symbols gpuwarden's loader
// resolves (versioned names included) and the gwfake_cuda_* controls.
#include <cctype>
#include <cstdlib>
#include <cstring>

#include "fake-cuda/fake_cuda.h"

#define GWFAKE_API extern "C" __attribute__((visibility("default")))

using namespace gwfakecuda;  // NOLINT

namespace {

FakeCuda& fake() {
  return FakeCuda::instance();
}

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrors[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {kNotInitialized, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {kNoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kInvalidDevice, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {kInvalidContext, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {kPeerAccessUnsupported, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
     "peer access is not supported between these two devices"},
    {kInvalidHandle, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {kPeerAccessAlreadyEnabled, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
     "peer access is already enabled"},
    {kLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {kUnknown, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* find_error(CUresult r) {
  for (const auto& e : kErrors)
    if (e.code == r) return &e;
  return nullptr;
}

}  // namespace

GWFAKE_API int gwfake_cuda_attach(const char* nvml_path, const char* scenario_path) {
  return fake().attach(nvml_path, scenario_path);
}
GWFAKE_API const char* gwfake_cuda_last_error() {
  return fake().last_error();
}

GWFAKE_API CUresult cuGetErrorName(CUresult r, const char** out) {
  const ErrorText* e = find_error(r);
  if (out == nullptr) return kInvalidValue;
  *out = e != nullptr ? e->name : nullptr;
  return e != nullptr ? kSuccess : kInvalidValue;
}
GWFAKE_API CUresult cuGetErrorString(CUresult r, const char** out) {
  const ErrorText* e = find_error(r);
  if (out == nullptr) return kInvalidValue;
  *out = e != nullptr ? e->text : nullptr;
  return e != nullptr ? kSuccess : kInvalidValue;
}

GWFAKE_API CUresult cuInit(unsigned flags) {
  return flags != 0 ? kInvalidValue : fake().init();
}
GWFAKE_API CUresult cuDriverGetVersion(int* v) {
  if (v == nullptr) return kInvalidValue;
  *v = 12040;
  return kSuccess;
}
GWFAKE_API CUresult cuDeviceGetCount(int* n) {
  return fake().count(n);
}
GWFAKE_API CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (d == nullptr) return kInvalidValue;
  if (CUresult r = fake().check_device(ordinal); r != kSuccess) return r;
  *d = ordinal;
  return kSuccess;
}
GWFAKE_API CUresult cuDeviceGetName(char* out, int len, CUdevice d) {
  if (CUresult r = fake().check_device(d); r != kSuccess) return r;
  const std::string& name = fake().device(d).gpu.state.info.name;
  if (out == nullptr || len <= 0) return kInvalidValue;
  std::strncpy(out, name.c_str(), static_cast<size_t>(len) - 1);
  out[len - 1] = 0;
  return kSuccess;
}
GWFAKE_API CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
  if (CUresult r = fake().check_device(d); r != kSuccess) return r;
  if (v == nullptr) return kInvalidValue;
  switch (attr) {
    case kAttrMultiprocessorCount:
      *v = 132;
      return kSuccess;
    case kAttrComputeCapabilityMajor:
      *v = 9;
      return kSuccess;
    case kAttrComputeCapabilityMinor:
      *v = 0;
      return kSuccess;
    default:
      return kInvalidValue;
  }
}
GWFAKE_API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  if (CUresult r = fake().check_device(d); r != kSuccess) return r;
  *bytes = fake().device(d).gpu.state.info.mem_total_bytes.value_or(0);
  return kSuccess;
}
GWFAKE_API CUresult cuDeviceGetPCIBusId(char* out, int len, CUdevice d) {
  return fake().bus_id(d, out, len);
}
GWFAKE_API CUresult cuDeviceGetByPCIBusId(CUdevice* d, const char* bus) {
  return d == nullptr ? kInvalidValue : fake().by_bus_id(d, bus);
}
// The UUID's 32 hex digits ("GPU-5b2d3c1e-8f4a-...") as its 16 bytes.
GWFAKE_API CUresult cuDeviceGetUuid_v2(CUuuid* out, CUdevice d) {
  if (CUresult r = fake().check_device(d); r != kSuccess) return r;
  if (out == nullptr) return kInvalidValue;
  std::memset(out->bytes, 0, sizeof out->bytes);
  size_t n = 0;
  for (char c : fake().device(d).gpu.state.info.uuid) {
    const int v = std::isxdigit(static_cast<unsigned char>(c)) == 0  ? -1
                  : std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0'
                                                                     : (c | 0x20) - 'a' + 10;
    if (v < 0 || n >= 32) continue;
    out->bytes[n / 2] = static_cast<char>(out->bytes[n / 2] | (n % 2 ? v : v << 4));
    ++n;
  }
  return kSuccess;
}
GWFAKE_API CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  if (CUresult r = fake().check_device(d); r != kSuccess) return r;
  *c = FakeCuda::ctx_of(d);
  return kSuccess;
}
GWFAKE_API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  return fake().check_device(d);
}
GWFAKE_API CUresult cuCtxSetCurrent(CUcontext c) {
  FakeCuda::current() = c == nullptr ? -1 : FakeCuda::dev_of(c);
  return kSuccess;
}
GWFAKE_API CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
  return flags != 0 ? kInvalidValue : fake().enable_peer(peer);
}
GWFAKE_API CUresult cuDeviceCanAccessPeer(int* ok, CUdevice a, CUdevice b) {
  return ok == nullptr ? kInvalidValue : fake().can_access(ok, a, b);
}
GWFAKE_API CUresult cuMemGetInfo_v2(size_t* free_b, size_t* total_b) {
  return free_b == nullptr || total_b == nullptr ? kInvalidValue : fake().mem_info(free_b, total_b);
}
GWFAKE_API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  return fake().alloc(p, n);
}
GWFAKE_API CUresult cuMemFree_v2(CUdeviceptr p) {
  return fake().free(p);
}
// Host memory is real: the caller writes into it.
GWFAKE_API CUresult cuMemHostAlloc(void** p, size_t n, unsigned) {
  if (p == nullptr || n == 0) return kInvalidValue;
  *p = std::malloc(n);
  return *p != nullptr ? kSuccess : kOutOfMemory;
}
GWFAKE_API CUresult cuMemFreeHost(void* p) {
  std::free(p);
  return kSuccess;
}
GWFAKE_API CUresult cuMemsetD32_v2(CUdeviceptr, unsigned, size_t) {
  return kSuccess;
}
GWFAKE_API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void*, size_t n, CUstream s) {
  return fake().copy(dst, n, s, 0);
}
GWFAKE_API CUresult cuMemcpyDtoHAsync_v2(void*, CUdeviceptr src, size_t n, CUstream s) {
  return fake().copy(src, n, s, 1);
}
GWFAKE_API CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext,
                                      size_t n, CUstream s) {
  return fake().peer_copy(dst, src, n, s);
}
GWFAKE_API CUresult cuStreamCreate(CUstream* s, unsigned) {
  return s == nullptr ? kInvalidValue : fake().stream_create(s);
}
GWFAKE_API CUresult cuStreamDestroy_v2(CUstream s) {
  return fake().stream_destroy(s);
}
GWFAKE_API CUresult cuStreamSynchronize(CUstream s) {
  return fake().sync(s);
}
GWFAKE_API CUresult cuEventCreate(CUevent* e, unsigned) {
  return e == nullptr ? kInvalidValue : fake().event_create(e);
}
GWFAKE_API CUresult cuEventDestroy_v2(CUevent e) {
  return fake().event_destroy(e);
}
GWFAKE_API CUresult cuEventRecord(CUevent e, CUstream s) {
  return fake().record(e, s);
}
GWFAKE_API CUresult cuEventSynchronize(CUevent e) {
  return fake().event_sync(e);
}
GWFAKE_API CUresult cuEventElapsedTime(float* ms, CUevent a, CUevent b) {
  return ms == nullptr ? kInvalidValue : fake().elapsed(ms, a, b);
}
// Any module loads: the fake has no JIT (the PTX is checked by tests and on real GPUs).
GWFAKE_API CUresult cuModuleLoadData(CUmodule* m, const void* image) {
  if (m == nullptr || image == nullptr) return kInvalidValue;
  *m = reinterpret_cast<CUmodule>(0x1000);
  return kSuccess;
}
GWFAKE_API CUresult cuModuleUnload(CUmodule) {
  return kSuccess;
}
GWFAKE_API CUresult cuModuleGetFunction(CUfunction* f, CUmodule, const char* name) {
  if (f == nullptr || name == nullptr) return kInvalidValue;
  *f = reinterpret_cast<CUfunction>(0x2000);
  return kSuccess;
}
GWFAKE_API CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                   unsigned, unsigned, CUstream s, void**, void**) {
  return fake().launch(s);
}
