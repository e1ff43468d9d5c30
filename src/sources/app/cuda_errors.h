// How a line names a CUDA error (the catalog: core/cuda_errors.h). Pure over text.
#pragma once

#include <string_view>

#include "core/cuda_errors.h"

namespace gw {

// The CUDA error a line names: by enum name anywhere, by code in the shapes programs print
// ("code=802(cudaErrorSystemNotReady)", "Error 802: system not yet initialized", "cuda runtime
// error (802) : ...", "returned 802", "CUDA error 802"), or by its text after "CUDA error: ".
// A code alone is taken only in those shapes, never a bare number. Failing those, a catalog
// text (or an older wording of one) anywhere in the line as whole words: long texts always,
// short ones only where the line says a call failed.
const CudaErrorInfo* cuda_error_in_line(std::string_view line);

}  // namespace gw
