#include "core/cuda_errors.h"

#include <array>
#include <cctype>

namespace gw {
namespace {

using C = CudaErrorClass;

// CUDA 12.x and 13.0 (driver_types.h, cuda.h); texts as cudaGetErrorString prints them. A
// driver-only error (202, 916) has no runtime name and no text (cudaGetErrorString has none).
constexpr std::array kErrors = {
    CudaErrorInfo{1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument",
                  C::kProgram},
    CudaErrorInfo{2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory",
                  C::kResource},
    CudaErrorInfo{3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED",
                  "initialization error", C::kSetup},
    CudaErrorInfo{4, "cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED", "driver shutting down",
                  C::kProgram},
    CudaErrorInfo{5, "cudaErrorProfilerDisabled", "CUDA_ERROR_PROFILER_DISABLED",
                  "profiler disabled while using external profiling tool", C::kProgram},
    CudaErrorInfo{6, "cudaErrorProfilerNotInitialized", "CUDA_ERROR_PROFILER_NOT_INITIALIZED",
                  "profiler not initialized: call cudaProfilerInitialize()", C::kProgram},
    CudaErrorInfo{7, "cudaErrorProfilerAlreadyStarted", "CUDA_ERROR_PROFILER_ALREADY_STARTED",
                  "profiler already started", C::kProgram},
    CudaErrorInfo{8, "cudaErrorProfilerAlreadyStopped", "CUDA_ERROR_PROFILER_ALREADY_STOPPED",
                  "profiler already stopped", C::kProgram},
    CudaErrorInfo{9, "cudaErrorInvalidConfiguration", "", "invalid configuration argument",
                  C::kProgram},
    CudaErrorInfo{12, "cudaErrorInvalidPitchValue", "", "invalid pitch argument", C::kProgram},
    CudaErrorInfo{13, "cudaErrorInvalidSymbol", "", "invalid device symbol", C::kProgram},
    CudaErrorInfo{16, "cudaErrorInvalidHostPointer", "", "invalid host pointer", C::kProgram},
    CudaErrorInfo{17, "cudaErrorInvalidDevicePointer", "", "invalid device pointer", C::kProgram},
    CudaErrorInfo{18, "cudaErrorInvalidTexture", "", "invalid texture reference", C::kProgram},
    CudaErrorInfo{19, "cudaErrorInvalidTextureBinding", "", "texture is not bound to a pointer",
                  C::kProgram},
    CudaErrorInfo{20, "cudaErrorInvalidChannelDescriptor", "", "invalid channel descriptor",
                  C::kProgram},
    CudaErrorInfo{21, "cudaErrorInvalidMemcpyDirection", "", "invalid copy direction for memcpy",
                  C::kProgram},
    CudaErrorInfo{22, "cudaErrorAddressOfConstant", "", "invalid address of constant", C::kProgram},
    CudaErrorInfo{23, "cudaErrorTextureFetchFailed", "", "fetch from texture failed", C::kProgram},
    CudaErrorInfo{24, "cudaErrorTextureNotBound", "",
                  "cannot fetch from a texture that is not bound", C::kProgram},
    CudaErrorInfo{25, "cudaErrorSynchronizationError", "", "incorrect use of __syncthreads()",
                  C::kProgram},
    CudaErrorInfo{26, "cudaErrorInvalidFilterSetting", "",
                  "linear filtering not supported for non-float type", C::kProgram},
    CudaErrorInfo{27, "cudaErrorInvalidNormSetting", "",
                  "read as normalized float not supported for data type", C::kProgram},
    CudaErrorInfo{28, "cudaErrorMixedDeviceExecution", "",
                  "device emulation mode and device execution mode cannot be mixed", C::kProgram},
    CudaErrorInfo{31, "cudaErrorNotYetImplemented", "", "feature not yet implemented", C::kProgram},
    CudaErrorInfo{32, "cudaErrorMemoryValueTooLarge", "",
                  "memory size or pointer value too large to fit in 32 bit", C::kProgram},
    CudaErrorInfo{34, "cudaErrorStubLibrary", "CUDA_ERROR_STUB_LIBRARY",
                  "CUDA driver is a stub library", C::kSetup},
    CudaErrorInfo{35, "cudaErrorInsufficientDriver", "",
                  "CUDA driver version is insufficient for CUDA runtime version", C::kSetup},
    CudaErrorInfo{36, "cudaErrorCallRequiresNewerDriver", "",
                  "API call requires a newer CUDA driver", C::kSetup},
    CudaErrorInfo{37, "cudaErrorInvalidSurface", "", "invalid surface reference", C::kProgram},
    CudaErrorInfo{43, "cudaErrorDuplicateVariableName", "",
                  "duplicate global variable looked up by string name", C::kProgram},
    CudaErrorInfo{44, "cudaErrorDuplicateTextureName", "",
                  "duplicate texture looked up by string name", C::kProgram},
    CudaErrorInfo{45, "cudaErrorDuplicateSurfaceName", "",
                  "duplicate surface looked up by string name", C::kProgram},
    CudaErrorInfo{46, "cudaErrorDevicesUnavailable", "CUDA_ERROR_DEVICE_UNAVAILABLE",
                  "CUDA-capable device(s) is/are busy or unavailable", C::kResource},
    CudaErrorInfo{49, "cudaErrorIncompatibleDriverContext", "", "incompatible driver context",
                  C::kSetup},
    CudaErrorInfo{52, "cudaErrorMissingConfiguration", "",
                  "__global__ function call is not configured", C::kProgram},
    CudaErrorInfo{53, "cudaErrorPriorLaunchFailure", "",
                  "unspecified launch failure in prior launch", C::kProgram},
    CudaErrorInfo{65, "cudaErrorLaunchMaxDepthExceeded", "",
                  "launch would exceed maximum depth of nested launches", C::kProgram},
    CudaErrorInfo{66, "cudaErrorLaunchFileScopedTex", "",
                  "launch failed because kernel uses unsupported, file-scoped textures (texture "
                  "objects are supported)",
                  C::kBuild},
    CudaErrorInfo{67, "cudaErrorLaunchFileScopedSurf", "",
                  "launch failed because kernel uses unsupported, file-scoped surfaces (surface "
                  "objects are supported)",
                  C::kBuild},
    CudaErrorInfo{68, "cudaErrorSyncDepthExceeded", "",
                  "cudaDeviceSynchronize failed because caller's grid depth exceeds "
                  "cudaLimitDevRuntimeSyncDepth",
                  C::kProgram},
    CudaErrorInfo{69, "cudaErrorLaunchPendingCountExceeded", "",
                  "launch failed because launch would exceed cudaLimitDevRuntimePendingLaunchCount",
                  C::kProgram},
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
    CudaErrorInfo{202, "", "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "", C::kProgram},
    CudaErrorInfo{205, "cudaErrorMapBufferObjectFailed", "CUDA_ERROR_MAP_FAILED",
                  "mapping of buffer object failed", C::kProgram},
    CudaErrorInfo{206, "cudaErrorUnmapBufferObjectFailed", "CUDA_ERROR_UNMAP_FAILED",
                  "unmapping of buffer object failed", C::kProgram},
    CudaErrorInfo{207, "cudaErrorArrayIsMapped", "CUDA_ERROR_ARRAY_IS_MAPPED", "array is mapped",
                  C::kProgram},
    CudaErrorInfo{208, "cudaErrorAlreadyMapped", "CUDA_ERROR_ALREADY_MAPPED",
                  "resource already mapped", C::kProgram},
    CudaErrorInfo{209, "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU",
                  "no kernel image is available for execution on the device", C::kBuild},
    CudaErrorInfo{210, "cudaErrorAlreadyAcquired", "CUDA_ERROR_ALREADY_ACQUIRED",
                  "resource already acquired", C::kProgram},
    CudaErrorInfo{211, "cudaErrorNotMapped", "CUDA_ERROR_NOT_MAPPED", "resource not mapped",
                  C::kProgram},
    CudaErrorInfo{212, "cudaErrorNotMappedAsArray", "CUDA_ERROR_NOT_MAPPED_AS_ARRAY",
                  "resource not mapped as array", C::kProgram},
    CudaErrorInfo{213, "cudaErrorNotMappedAsPointer", "CUDA_ERROR_NOT_MAPPED_AS_POINTER",
                  "resource not mapped as pointer", C::kProgram},
    CudaErrorInfo{214, "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE",
                  "uncorrectable ECC error encountered", C::kHardware},
    CudaErrorInfo{215, "cudaErrorUnsupportedLimit", "CUDA_ERROR_UNSUPPORTED_LIMIT",
                  "limit is not supported on this architecture", C::kProgram},
    CudaErrorInfo{216, "cudaErrorDeviceAlreadyInUse", "CUDA_ERROR_CONTEXT_ALREADY_IN_USE",
                  "exclusive-thread device already in use by a different thread", C::kResource},
    CudaErrorInfo{217, "cudaErrorPeerAccessUnsupported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
                  "peer access is not supported between these two devices", C::kSetup},
    CudaErrorInfo{218, "cudaErrorInvalidPtx", "CUDA_ERROR_INVALID_PTX",
                  "a PTX JIT compilation failed", C::kBuild},
    CudaErrorInfo{219, "cudaErrorInvalidGraphicsContext", "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT",
                  "invalid OpenGL or DirectX context", C::kProgram},
    CudaErrorInfo{220, "cudaErrorNvlinkUncorrectable", "CUDA_ERROR_NVLINK_UNCORRECTABLE",
                  "uncorrectable NVLink error detected during the execution", C::kHardware},
    CudaErrorInfo{221, "cudaErrorJitCompilerNotFound", "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
                  "PTX JIT compiler library not found", C::kSetup},
    CudaErrorInfo{222, "cudaErrorUnsupportedPtxVersion", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
                  "the provided PTX was compiled with an unsupported toolchain.", C::kBuild},
    CudaErrorInfo{223, "cudaErrorJitCompilationDisabled", "CUDA_ERROR_JIT_COMPILATION_DISABLED",
                  "PTX JIT compilation was disabled", C::kBuild},
    CudaErrorInfo{224, "cudaErrorUnsupportedExecAffinity", "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY",
                  "the provided execution affinity is not supported", C::kBuild},
    CudaErrorInfo{225, "cudaErrorUnsupportedDevSideSync", "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC",
                  "the provided PTX contains unsupported call to cudaDeviceSynchronize", C::kBuild},
    CudaErrorInfo{226, "cudaErrorContained", "CUDA_ERROR_CONTAINED",
                  "Invalid access of peer GPU memory over nvlink or a hardware error",
                  C::kHardware},
    CudaErrorInfo{300, "cudaErrorInvalidSource", "CUDA_ERROR_INVALID_SOURCE",
                  "device kernel image is invalid", C::kBuild},
    CudaErrorInfo{301, "cudaErrorFileNotFound", "CUDA_ERROR_FILE_NOT_FOUND", "file not found",
                  C::kProgram},
    CudaErrorInfo{302, "cudaErrorSharedObjectSymbolNotFound",
                  "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "shared object symbol not found",
                  C::kProgram},
    CudaErrorInfo{303, "cudaErrorSharedObjectInitFailed", "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",
                  "shared object initialization failed", C::kSetup},
    CudaErrorInfo{304, "cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM",
                  "OS call failed or operation not supported on this OS", C::kSetup},
    CudaErrorInfo{400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE",
                  "invalid resource handle", C::kProgram},
    CudaErrorInfo{401, "cudaErrorIllegalState", "CUDA_ERROR_ILLEGAL_STATE",
                  "the operation cannot be performed in the present state", C::kProgram},
    CudaErrorInfo{402, "cudaErrorLossyQuery", "CUDA_ERROR_LOSSY_QUERY",
                  "attempted introspection would be semantically lossy", C::kProgram},
    CudaErrorInfo{500, "cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND", "named symbol not found",
                  C::kProgram},
    CudaErrorInfo{600, "cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "device not ready",
                  C::kProgram},
    CudaErrorInfo{700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
                  "an illegal memory access was encountered", C::kDeviceFault},
    CudaErrorInfo{701, "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
                  "too many resources requested for launch", C::kProgram},
    CudaErrorInfo{702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT",
                  "the launch timed out and was terminated", C::kDeviceFault},
    CudaErrorInfo{703, "cudaErrorLaunchIncompatibleTexturing",
                  "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING",
                  "launch uses incompatible texturing mode", C::kProgram},
    CudaErrorInfo{704, "cudaErrorPeerAccessAlreadyEnabled",
                  "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled",
                  C::kProgram},
    CudaErrorInfo{705, "cudaErrorPeerAccessNotEnabled", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED",
                  "peer access has not been enabled", C::kProgram},
    CudaErrorInfo{708, "cudaErrorSetOnActiveProcess", "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE",
                  "cannot set while device is active in this process", C::kProgram},
    CudaErrorInfo{709, "cudaErrorContextIsDestroyed", "CUDA_ERROR_CONTEXT_IS_DESTROYED",
                  "context is destroyed", C::kProgram},
    CudaErrorInfo{710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "device-side assert triggered",
                  C::kProgram},
    CudaErrorInfo{711, "cudaErrorTooManyPeers", "CUDA_ERROR_TOO_MANY_PEERS",
                  "peer mapping resources exhausted", C::kResource},
    CudaErrorInfo{712, "cudaErrorHostMemoryAlreadyRegistered",
                  "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
                  "part or all of the requested memory range is already mapped", C::kProgram},
    CudaErrorInfo{713, "cudaErrorHostMemoryNotRegistered", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
                  "pointer does not correspond to a registered memory region", C::kProgram},
    CudaErrorInfo{714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR",
                  "hardware stack error", C::kDeviceFault},
    CudaErrorInfo{715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
                  "an illegal instruction was encountered", C::kDeviceFault},
    CudaErrorInfo{716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS",
                  "misaligned address", C::kDeviceFault},
    CudaErrorInfo{717, "cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
                  "operation not supported on global/shared address space", C::kProgram},
    CudaErrorInfo{718, "cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "invalid program counter",
                  C::kDeviceFault},
    CudaErrorInfo{719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED",
                  "unspecified launch failure", C::kDeviceFault},
    CudaErrorInfo{720, "cudaErrorCooperativeLaunchTooLarge",
                  "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
                  "too many blocks in cooperative launch", C::kResource},
    CudaErrorInfo{721, "cudaErrorTensorMemoryLeak", "CUDA_ERROR_TENSOR_MEMORY_LEAK",
                  "tensor memory not completely freed", C::kProgram},
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
    CudaErrorInfo{806, "cudaErrorMpsRpcFailure", "CUDA_ERROR_MPS_RPC_FAILURE",
                  "the remote procedural call between the MPS server and the MPS client failed",
                  C::kResource},
    CudaErrorInfo{807, "cudaErrorMpsServerNotReady", "CUDA_ERROR_MPS_SERVER_NOT_READY",
                  "MPS server is not ready to accept new MPS client requests", C::kResource},
    CudaErrorInfo{808, "cudaErrorMpsMaxClientsReached", "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",
                  "the hardware resources required to create MPS client have been exhausted",
                  C::kResource},
    CudaErrorInfo{
        809, "cudaErrorMpsMaxConnectionsReached", "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED",
        "the hardware resources required to support device connections have been exhausted",
        C::kResource},
    CudaErrorInfo{810, "cudaErrorMpsClientTerminated", "CUDA_ERROR_MPS_CLIENT_TERMINATED",
                  "the MPS client has been terminated by the server", C::kResource},
    CudaErrorInfo{811, "cudaErrorCdpNotSupported", "CUDA_ERROR_CDP_NOT_SUPPORTED",
                  "is using CUDA Dynamic Parallelism, but the current configuration, like MPS, "
                  "does not support it",
                  C::kBuild},
    CudaErrorInfo{812, "cudaErrorCdpVersionMismatch", "CUDA_ERROR_CDP_VERSION_MISMATCH",
                  "unsupported interaction between different versions of CUDA Dynamic Parallelism",
                  C::kBuild},
    CudaErrorInfo{900, "cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
                  "operation not permitted when stream is capturing", C::kProgram},
    CudaErrorInfo{901, "cudaErrorStreamCaptureInvalidated", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
                  "operation failed due to a previous error during capture", C::kProgram},
    CudaErrorInfo{902, "cudaErrorStreamCaptureMerge", "CUDA_ERROR_STREAM_CAPTURE_MERGE",
                  "operation would result in a merge of separate capture sequences", C::kProgram},
    CudaErrorInfo{903, "cudaErrorStreamCaptureUnmatched", "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
                  "capture was not ended in the same stream as it began", C::kProgram},
    CudaErrorInfo{904, "cudaErrorStreamCaptureUnjoined", "CUDA_ERROR_STREAM_CAPTURE_UNJOINED",
                  "capturing stream has unjoined work", C::kProgram},
    CudaErrorInfo{905, "cudaErrorStreamCaptureIsolation", "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
                  "dependency created on uncaptured work in another stream", C::kProgram},
    CudaErrorInfo{906, "cudaErrorStreamCaptureImplicit", "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
                  "operation would make the legacy stream depend on a capturing blocking stream",
                  C::kProgram},
    CudaErrorInfo{907, "cudaErrorCapturedEvent", "CUDA_ERROR_CAPTURED_EVENT",
                  "operation not permitted on an event last recorded in a capturing stream",
                  C::kProgram},
    CudaErrorInfo{
        908, "cudaErrorStreamCaptureWrongThread", "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
        "attempt to terminate a thread-local capture sequence from another thread", C::kProgram},
    CudaErrorInfo{909, "cudaErrorTimeout", "CUDA_ERROR_TIMEOUT", "wait operation timed out",
                  C::kProgram},
    CudaErrorInfo{910, "cudaErrorGraphExecUpdateFailure", "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE",
                  "the graph update was not performed because it included changes which violated "
                  "constraints specific to instantiated graph update",
                  C::kProgram},
    CudaErrorInfo{911, "cudaErrorExternalDevice", "CUDA_ERROR_EXTERNAL_DEVICE",
                  "an async error has occured in external entity outside of CUDA", C::kProgram},
    CudaErrorInfo{912, "cudaErrorInvalidClusterSize", "CUDA_ERROR_INVALID_CLUSTER_SIZE",
                  "a kernel launch error has occurred due to cluster misconfiguration",
                  C::kProgram},
    CudaErrorInfo{
        913, "cudaErrorFunctionNotLoaded", "CUDA_ERROR_FUNCTION_NOT_LOADED",
        "the function handle is not loaded when calling an API that requires a loaded function",
        C::kProgram},
    CudaErrorInfo{914, "cudaErrorInvalidResourceType", "CUDA_ERROR_INVALID_RESOURCE_TYPE",
                  "one or more resources passed in are not valid resource types for the operation",
                  C::kProgram},
    CudaErrorInfo{
        915, "cudaErrorInvalidResourceConfiguration", "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION",
        "one or more resources are insufficient or non-applicable for the operation", C::kProgram},
    CudaErrorInfo{916, "", "CUDA_ERROR_KEY_ROTATION", "", C::kProgram},
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
  if (t.empty()) return nullptr;
  for (const CudaErrorInfo& e : kErrors)
    if (ieq(t, e.text)) return &e;
  return nullptr;
}

const CudaErrorInfo* cuda_error_text_at(std::string_view s) {
  const CudaErrorInfo* best = nullptr;
  for (const CudaErrorInfo& e : kErrors) {
    if (e.text.empty() || s.size() < e.text.size() || (best && best->text.size() >= e.text.size()))
      continue;
    if (ieq(s.substr(0, e.text.size()), e.text)) best = &e;
  }
  return best;
}

CudaErrorTable cuda_error_table() {
  return {kErrors.data(), kErrors.data() + kErrors.size()};
}

}  // namespace gw
