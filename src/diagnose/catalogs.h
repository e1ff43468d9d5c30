// The two reference tables the rules consult: the Xid catalog and the CUDA -> driver table.
// Both are parsed once from the embedded TSV copies in data/.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gw {

enum class XidCause { kApplication, kDriver, kHardware, kMemory, kNvLink, kThermalPower, kOther };

std::string_view xid_cause_name(XidCause c);  // "application", "driver", ...

struct XidInfo {
  unsigned xid = 0;
  std::string_view short_name;  // "Double Bit ECC Error (DBE)"
  std::string_view mnemonic;    // NVIDIA's
  std::string_view meaning;
  XidCause cause = XidCause::kOther;
  std::string_view severity;  // info / warning / error / critical (catalog words)
  std::string_view action;    // "drain node & reset GPU"
  // NVIDIA's resolution buckets: what to do now ("RESTART_APP", "RESET_GPU", "WORKFLOW_XID_45")
  // and what to investigate after; for some Xids they say "Solo: ...; Not Solo: ...".
  std::string_view immediate_action;
  std::string_view investigatory_action;
  std::string_view notes;
};

std::span<const XidInfo> xid_catalog();
// NVIDIA's bucket names in words: "RESTART_APP" -> "restart the application"; the bucket
// itself when unknown.
std::string nvidia_action_words(std::string_view bucket);
const XidInfo* lookup_xid(unsigned xid);

// Parses "535.129.03" / "418.39" into up to three numbers; nullopt when not a version.
using DriverVersion = std::array<unsigned, 3>;
std::optional<DriverVersion> parse_driver_version(std::string_view text);
std::string driver_version_string(const DriverVersion& v);

// What a CUDA major.minor needs from the Linux driver.
struct CudaDriverNeed {
  std::string cuda;                         // "12.4"
  DriverVersion toolkit_min{};              // full feature set (toolkit driver minimum)
  std::optional<DriverVersion> compat_min;  // minor-version compatibility floor (CUDA 11+)
};

// Looks up "12.4", "12.4.1", "11.8", "cu121" style versions; nullopt when unknown.
std::optional<CudaDriverNeed> cuda_driver_need(std::string_view cuda_version);

}  // namespace gw
