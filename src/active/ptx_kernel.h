// The load kernel, shipped as PTX text inside the binary and compiled by the driver's JIT
// (cuModuleLoadData) on whatever GPU it runs on: no CUDA toolkit at build time, no cubin per
// architecture. Written for sm_50 so every GPU since Maxwell can run it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace gw::active {

inline constexpr const char* kLoadKernelName = "gw_load";

// NUL-terminated (cuModuleLoadData reads PTX as a C string).
const char* load_kernel_ptx();

// What the module header and entry points of a PTX text say. A check, not a PTX compiler:
// the directives are read line by line; anything else is left to the driver's JIT.
struct PtxHeader {
  std::string version;  // "6.0"
  std::string target;   // "sm_50"
  int address_size = 0;
  std::vector<std::string> entries;  // .entry names
};
// Errors (ptx.malformed) name the line: a missing or repeated .version/.target, a directive
// before .version, an .entry without a name or an unbalanced brace.
Result<PtxHeader> parse_ptx_header(std::string_view text);

}  // namespace gw::active
