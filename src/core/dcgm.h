// What DCGM's tools said about the GPUs in a capture: `dcgmi diag` results per test and GPU,
// `dcgmi health` incidents, `dcgmi nvlink` link states, `dcgmi dmon` Xid readings, and the
// plain values of `dmon`, `stats` and `discovery` (kReading). Parsed by sources/dcgm, judged by
// diagnose/dcgm.cpp and diagnose/dcgm_readings.cpp. Statements that something is fine are kept too
// (kPass / kHealthy), so that where two parts disagree the report can say who said what.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gw {

enum class DcgmKind {
  kDiagFail,    // a diag test failed (or a deployment "Error" row)
  kDiagWarn,    // a diag test warned
  kDiagSkip,    // a diag test was skipped (not tested)
  kDiagPass,    // a diag table with results and no failure (one per table)
  kHealth,      // a health incident (text/JSON report or the host engine's log)
  kHealthy,     // a health report saying "Healthy"
  kNvlinkDown,  // links of a GPU reported Down
  kXid,         // a non-zero Xid reading (dcgmi dmon field 230, XIDER)
  kReading,     // one value a tool printed: a dmon field, a stats row, a discovery entry
};

// The `part` of readings from a pasted table of DCGM fields and values (a Markdown or
// two-column table): they name no GPU, and the rules take them as one unnumbered GPU's.
inline constexpr std::string_view kDcgmFieldTablePart = "DCGM field table";

struct DcgmResult {
  DcgmKind kind = DcgmKind::kDiagFail;
  std::optional<unsigned> gpu;  // DCGM GPU id; nullopt = every GPU ("Fail - All") or unknown
  std::string part;             // "dcgmi diag", "dcgmi health", "dcgmi nvlink", "dcgmi dmon"
  std::string test;             // diag test or health system ("GPU Memory", "Thermal")
  std::string text;             // the tool's own words (failure text, incident)
  std::string level;            // health: "Warning" / "Failure"
  unsigned count = 0;           // links down / Xid code
  unsigned of = 0;              // links in all
  std::string origin;           // "file:line"
  // kReading: `test` is the field (dmon's tag, the stats row, "Name" in discovery), `text` the
  // value as printed ("N/A" included), `block` where its table starts ("file:line").
  std::string block;
  // How many times the input holds this result: a repeated table or line is folded into its
  // first copy as it is read (sources/record_fold.h).
  size_t copies = 1;
};

}  // namespace gw
