// Captured outputs: detect each file's format by content and parse it into the same
// model the live sources produce. Parsers are pure functions over text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/observation.h"

namespace gw {

enum class CaptureFormat {
  kUnknown,
  kSmiQueryText,  // nvidia-smi -q
  kSmiQueryXml,   // nvidia-smi -q -x
  kSmiCsv,        // nvidia-smi --query-gpu=... --format=csv (one-shot or -l series)
  kSmiDmon,       // nvidia-smi dmon
  kSmiTopo,       // nvidia-smi topo -m
  kSmiTable,      // plain nvidia-smi
  kKernelLog,     // dmesg (any time format), journalctl -k, syslog, kern.log
};

std::string_view capture_format_name(CaptureFormat f);
CaptureFormat detect_capture_format(std::string_view text);

// Parses one file's text (named `origin` in errors: "file:line: expected ...") and merges
// what it holds into `obs`. A file that cannot be read adds to obs.input_errors; it never
// throws and never discards what other files gave.
void add_capture(std::string_view text, std::string_view origin, Observation& obs);

// Reads each file from disk and calls add_capture. Missing files become input_errors.
Observation load_captures(const std::vector<std::string>& paths);

// Kernel log lines -> events (Xid, SXid, fallen off the bus). Lines that are not GPU-related
// are skipped silently; malformed GPU lines add to `errors`.
std::vector<Event> parse_kernel_log(std::string_view text, std::string_view origin,
                                    std::vector<Error>* errors);

}  // namespace gw
