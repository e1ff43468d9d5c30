// Reads one captured text that may hold several formats (a terminal session: prompts, an
// nvidia-smi table, dmesg lines, a Python traceback). Each line is claimed by evidence: a block
// format (nvidia-smi -q / -q -x / CSV / dmon / topo -m / table / lspci) from the line that
// starts it to the line that no longer fits it; line formats (kernel log, application errors,
// environment reports, shell prompts) line by line. Lines nothing claims are counted in the
// input's InputCoverage, never a reason to reject the rest.
#pragma once

#include <string_view>
#include <vector>

#include "core/observation.h"
#include "sources/captures.h"

namespace gw {

struct CaptureSegment {
  CaptureFormat format = CaptureFormat::kUnknown;
  size_t first_line = 0;  // 1-based
  size_t lines = 0;       // lines spanned (blank lines inside included)
};

// Parses `text` into `obs` (samples, events, topology, host facts, app messages, notes) and
// returns what was found where. Appends one InputCoverage for `origin` to obs.coverage.
std::vector<CaptureSegment> read_capture(std::string_view text, std::string_view origin,
                                         Observation& obs);
// With `progress` (may be empty): bytes read so far, about every MiB (captures.h).
std::vector<CaptureSegment> read_capture(std::string_view text, std::string_view origin,
                                         Observation& obs, const CaptureProgress& progress);

// Shell prompt lines: "user@host:~$ nvidia-smi", "$ dmesg", "root@node4:~# ...", "PS C:\> ".
bool looks_like_shell_prompt(std::string_view trimmed);

}  // namespace gw
