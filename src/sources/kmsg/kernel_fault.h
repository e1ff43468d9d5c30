// Kernel faults and warnings whose code is in an NVIDIA module, as the kernel prints them: a
// header ("BUG: kernel NULL pointer dereference", "Oops: 0000 [#1]", "general protection
// fault", "WARNING: CPU: 3 PID: 12 at ...", "UBSAN: array-index-out-of-bounds in ..."), the
// task line ("CPU: 33 PID: 4564 Comm: sbatchd"), the instruction pointer ("RIP: 0010:
// _nv031695rm+0x79/0x940 [nvidia]", the old "IP: [<ffffffffc075549f>] _nv011745rm+0x1f/0x170")
// and the call trace ("? uvm_pmm_gpu_alloc+0x2f5/0x6d0 [nvidia_uvm]"). Pure functions over
// text; each marker is found wherever it stands on the line (log prefixes, "> " quotes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gw::kmsg {

enum class FaultLine {
  kNone,
  kIp,         // the instruction pointer is in an NVIDIA module: the fault or warning is there
  kFrame,      // a call-trace frame in an NVIDIA module
  kModules,    // "Modules linked in: ... nvidia_uvm(POE) nvidia(POE) ..."
  kSanitizer,  // "UBSAN: ... in <a path of the NVIDIA driver>": a report with no IP line
  kWarning,    // "WARNING: CPU: N PID: N at <the NVIDIA driver>": its IP line follows
};

struct FaultSite {
  std::string symbol;  // "_nv031695rm", "nvidia_vma_access" (without the offset)
  std::string module;  // "nvidia", "nvidia_uvm"; empty when the line names none (old IP lines)
};

// What an NVIDIA line of a fault report is; kNone for any other line.
FaultLine classify_fault_line(std::string_view line);
// Where an IP line's instruction-pointer text starts: after "RIP: ", "EIP: ", "pc : " (the
// first of them, in that order) or a lone "IP: "; nullopt on any other line.
std::optional<size_t> ip_marker(std::string_view line);
// The function and module of an IP line (kIp), or of a frame.
std::optional<FaultSite> fault_site(std::string_view line);

enum class FaultKind {
  kCrash,    // BUG / Oops / general protection fault / kernel BUG at / soft lockup
  kWarning,  // WARNING: (the kernel goes on)
  kUnknown,  // the report's start is not in the text
};

struct FaultHeader {
  FaultKind kind = FaultKind::kUnknown;
  std::string text;  // the header line without its log prefix, cut to 160 characters
  std::optional<uint32_t> pid;
  std::string comm;  // the task, from "CPU: N PID: N Comm: NAME"
};

// The header of the report an IP line belongs to, from the text before it: the walk goes back
// at most 60 lines and stops at the end of an earlier report ("---[ end trace").
FaultHeader fault_header_before(std::string_view before);
// Whether the line carries one of the headers fault_header_before looks for ("BUG: ",
// "general protection fault", "WARNING: ", ...).
bool is_fault_header(std::string_view line);

}  // namespace gw::kmsg
