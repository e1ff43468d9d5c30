// The CUDA error enum, runtime (cudaError_t) and driver (CUresult), as data: since CUDA 10.1 the
// two share their numbers for the errors they share, so one row holds a code, both names, the
// text cudaGetErrorString prints, and what kind of trouble it is. Pure lookups over text.
#pragma once

#include <optional>
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

// The CUDA error a line names: by enum name anywhere, by code in the shapes programs print
// ("code=802(cudaErrorSystemNotReady)", "Error 802: system not yet initialized", "cuda runtime
// error (802) : ...", "returned 802", "CUDA error 802"), or by its text after "CUDA error: ".
// A code alone is taken only in those shapes, never a bare number.
const CudaErrorInfo* cuda_error_in_line(std::string_view line);

// Every row, for the tests and the docs.
struct CudaErrorTable {
  const CudaErrorInfo* begin;
  const CudaErrorInfo* end;
};
CudaErrorTable cuda_error_table();

}  // namespace gw
