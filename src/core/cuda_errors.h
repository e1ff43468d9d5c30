// The CUDA error enum, runtime (cudaError_t) and driver (CUresult), as data: since CUDA 10.1 the
// two share their numbers for the errors they share, so one row holds a code, both names, the
// text cudaGetErrorString prints, and what kind of trouble it is. Read by the capture parsers
// (sources/app/cuda_errors.h) and judged by diagnose/cuda_errors.cpp.
#pragma once

#include <string_view>

namespace gw {

enum class CudaErrorClass {
  kSetup,        // driver, toolkit, daemons or container setup: the machine, not the program
  kNotVisible,   // no device, or not the one asked for
  kResource,     // memory, a busy or exclusive GPU, MPS
  kBuild,        // the program's GPU code does not suit this GPU or driver (arch, PTX)
  kHardware,     // the GPU reported a fault (ECC, NVLink)
  kDeviceFault,  // a kernel faulted: a bug, or a GPU fault when the kernel log shows one
  kProgram,      // a misuse of the API
  kUnknown,      // 999: the driver gave no reason
};

struct CudaErrorInfo {
  int code = 0;
  std::string_view runtime_name;  // "cudaErrorSystemNotReady"
  std::string_view driver_name;   // "CUDA_ERROR_SYSTEM_NOT_READY" ("" when the driver has none)
  std::string_view text;          // what cudaGetErrorString prints
  CudaErrorClass cls = CudaErrorClass::kProgram;
};

const CudaErrorInfo* cuda_error_by_code(int code);
// "cudaErrorNoDevice" or "CUDA_ERROR_NO_DEVICE".
const CudaErrorInfo* cuda_error_by_name(std::string_view name);
// The exact text cudaGetErrorString prints (case-insensitive).
const CudaErrorInfo* cuda_error_by_text(std::string_view text);
// The row whose text begins `s` (case-insensitive), the longest when several do: "CUDA error:
// invalid device ordinal (...)" is 101, not a shorter text.
const CudaErrorInfo* cuda_error_text_at(std::string_view s);

// Every row, for the tests and the docs.
struct CudaErrorTable {
  const CudaErrorInfo* begin;
  const CudaErrorInfo* end;
};
CudaErrorTable cuda_error_table();

}  // namespace gw
