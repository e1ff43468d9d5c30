#include "core/cuda_errors.h"

#include <array>
#include <cctype>

namespace gw {
namespace {

using C = CudaErrorClass;

// CUDA 12.x; texts as cudaGetErrorString prints them.
constexpr std::array kErrors = {
    CudaErrorInfo{1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument",
                  C::kProgram},
    CudaErrorInfo{2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory",
                  C::kResource},
    CudaErrorInfo{3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED",
                  "initialization error", C::kSetup},
    CudaErrorInfo{4, "cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED", "driver shutting down",
                  C::kProgram},
    CudaErrorInfo{9, "cudaErrorInvalidConfiguration", "", "invalid configuration argument",
                  C::kProgram},
    CudaErrorInfo{34, "cudaErrorStubLibrary", "CUDA_ERROR_STUB_LIBRARY",
                  "CUDA driver is a stub library", C::kSetup},
    CudaErrorInfo{35, "cudaErrorInsufficientDriver", "",
                  "CUDA driver version is insufficient for CUDA runtime version", C::kSetup},
    CudaErrorInfo{36, "cudaErrorCallRequiresNewerDriver", "",
                  "API call requires a newer CUDA driver", C::kSetup},
    CudaErrorInfo{46, "cudaErrorDevicesUnavailable", "CUDA_ERROR_DEVICE_UNAVAILABLE",
                  "CUDA-capable device(s) is/are busy or unavailable", C::kResource},
    CudaErrorInfo{98, "cudaErrorInvalidDeviceFunction", "", "invalid device function", C::kBuild},
    CudaErrorInfo{100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE",
                  "no CUDA-capable device is detected", C::kNotVisible},
    CudaErrorInfo{101, "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE",
                  "invalid device ordinal", C::kNotVisible},
    CudaErrorInfo{102, "cudaErrorDeviceNotLicensed", "CUDA_ERROR_DEVICE_NOT_LICENSED",
                  "device doesn't have valid Grid license", C::kSetup},
    CudaErrorInfo{103, "cudaErrorSoftwareValidityNotEstablished", "", "integrity checks failed",
                  C::kSetup},
    CudaErrorInfo{127, "cudaErrorStartupFailure", "", "startup failure in cuda runtime", C::kSetup},
    CudaErrorInfo{200, "cudaErrorInvalidKernelImage", "CUDA_ERROR_INVALID_IMAGE",
                  "device kernel image is invalid", C::kBuild},
    CudaErrorInfo{201, "cudaErrorDeviceUninitialized", "CUDA_ERROR_INVALID_CONTEXT",
                  "invalid device context", C::kProgram},
    CudaErrorInfo{209, "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU",
                  "no kernel image is available for execution on the device", C::kBuild},
    CudaErrorInfo{214, "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE",
                  "uncorrectable ECC error encountered", C::kHardware},
    CudaErrorInfo{216, "cudaErrorDeviceAlreadyInUse", "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
                  "exclusive-thread device already in use by a different thread", C::kResource},
    CudaErrorInfo{217, "cudaErrorPeerAccessUnsupported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
                  "peer access is not supported between these two devices", C::kSetup},
    CudaErrorInfo{218, "cudaErrorInvalidPtx", "CUDA_ERROR_INVALID_PTX",
                  "a PTX JIT compilation failed", C::kBuild},
    CudaErrorInfo{220, "cudaErrorNvlinkUncorrectable", "CUDA_ERROR_NVLINK_UNCORRECTABLE",
                  "uncorrectable NVLink error detected during the execution", C::kHardware},
    CudaErrorInfo{221, "cudaErrorJitCompilerNotFound", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
                  "PTX JIT compiler library not found", C::kSetup},
    CudaErrorInfo{222, "cudaErrorUnsupportedPtxVersion", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                  "the provided PTX was compiled with an unsupported toolchain.", C::kBuild},
    CudaErrorInfo{223, "cudaErrorJitCompilationDisabled", "CUDA_ERROR_JIT_COMPILATION_DISABLED",
                  "PTX JIT compilation was disabled", C::kBuild},
    CudaErrorInfo{304, "cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM",
                  "OS call failed or operation not supported on this OS", C::kSetup},
    CudaErrorInfo{400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE",
                  "invalid resource handle", C::kProgram},
    CudaErrorInfo{700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
                  "an illegal memory access was encountered", C::kDeviceFault},
    CudaErrorInfo{701, "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
                  "too many resources requested for launch", C::kProgram},
    CudaErrorInfo{702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT",
                  "the launch timed out and was terminated", C::kDeviceFault},
    CudaErrorInfo{710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "device-side assert triggered",
                  C::kProgram},
    CudaErrorInfo{714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR",
                  "hardware stack error", C::kDeviceFault},
    CudaErrorInfo{715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                  "an illegal instruction was encountered", C::kDeviceFault},
    CudaErrorInfo{716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS",
                  "misaligned address", C::kDeviceFault},
    CudaErrorInfo{718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "invalid program counter",
                  C::kDeviceFault},
    CudaErrorInfo{719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED",
                  "unspecified launch failure", C::kDeviceFault},
    CudaErrorInfo{800, "cudaErrorNotPermitted", "CUDA_ERROR_NOT_PERMITTED",
                  "operation not permitted", C::kSetup},
    CudaErrorInfo{801, "cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED",
                  "operation not supported", C::kSetup},
    CudaErrorInfo{802, "cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY",
                  "system not yet initialized", C::kSetup},
    CudaErrorInfo{803, "cudaErrorSystemDriverMismatch", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
                  "system has unsupported display driver / cuda driver combination", C::kSetup},
    CudaErrorInfo{804, "cudaErrorCompatNotSupportedOnDevice",
                  "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
                  "forward compatibility was attempted on non supported HW", C::kSetup},
    CudaErrorInfo{805, "cudaErrorMpsConnectionFailed", "CUDA_ERROR_MPS_CONNECTION_FAILED",
                  "MPS client failed to connect to the MPS control daemon or the MPS server",
                  C::kResource},
    CudaErrorInfo{807, "cudaErrorMpsServerNotReady", "CUDA_ERROR_MPS_SERVER_NOT_READY",
                  "MPS server is not ready to accept new MPS client requests", C::kResource},
    CudaErrorInfo{999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "unknown error", C::kUnknown},
};

bool ieq(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

std::string_view trim_spaces(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

const CudaErrorInfo* cuda_error_by_code(int code) {
  for (const CudaErrorInfo& e : kErrors)
    if (e.code == code) return &e;
  return nullptr;
}

const CudaErrorInfo* cuda_error_by_name(std::string_view name) {
  if (name.empty()) return nullptr;
  for (const CudaErrorInfo& e : kErrors)
    if (name == e.runtime_name || (!e.driver_name.empty() && name == e.driver_name)) return &e;
  return nullptr;
}

const CudaErrorInfo* cuda_error_by_text(std::string_view t) {
  t = trim_spaces(t);
  for (const CudaErrorInfo& e : kErrors)
    if (ieq(t, e.text)) return &e;
  return nullptr;
}

CudaErrorTable cuda_error_table() {
  return {kErrors.data(), kErrors.data() + kErrors.size()};
}

}  // namespace gw
