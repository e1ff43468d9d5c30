// Captured outputs: find every format a file holds by content, line by line (a file may hold
// several: a terminal session), and parse each part into the same model the live sources
// produce. Parsers are pure functions over text.
#pragma once

#include <functional>
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
  kLspci,         // lspci -vv
  kEnvReport,     // collect_env, nvcc -V, /proc/driver/nvidia/version, nvidia-smi banner
  kAppLog,        // application / tool error messages (PyTorch, NCCL, CUDA, Docker, ...)
  kDcgm,          // dcgmi diag / health / nvlink / dmon output, the host engine's health log
  kBugReport,     // nvidia-bug-report.log's own structure (separators, section headers)
  kBenchTool,     // gpu_burn progress and summary, nccl-tests result tables
  kSmiNvlink,     // nvidia-smi nvlink -s / -e / -c
  kSmiMessages,   // nvidia-smi's messages for an action: -r (reset), -pm, ...
};

std::string_view capture_format_name(CaptureFormat f);
// The first format found in the text (kUnknown when none): kept for callers that want one
// answer; add_capture reads every part.
CaptureFormat detect_capture_format(std::string_view text);

// Parses one file's text (named `origin` in errors: "file:line: expected ...") and merges
// what it holds into `obs`, with one InputCoverage entry saying what was found and what was
// not understood. A file in which nothing is recognised adds to obs.input_errors; it never
// throws and never discards what other files gave. GPUs are matched across files by UUID or
// bus id, never by index; captures of different machines are said to be so (notes and
// InputCoverage::incomplete).
void add_capture(std::string_view text, std::string_view origin, Observation& obs);
// The same, telling `progress` now and then how many bytes of `text` are read (done, total),
// about every MiB and once at the end: for a progress line on a large file.
using CaptureProgress = std::function<void(size_t done, size_t total)>;
void add_capture(std::string_view text, std::string_view origin, Observation& obs,
                 const CaptureProgress& progress);

// Reads each file from disk and calls add_capture. Missing files become input_errors.
Observation load_captures(const std::vector<std::string>& paths);

// Kernel log lines -> events (Xid, SXid, fallen off the bus). Lines that are not GPU-related
// are skipped silently; malformed GPU lines add to `errors`.
std::vector<Event> parse_kernel_log(std::string_view text, std::string_view origin,
                                    std::vector<Error>* errors);

}  // namespace gw
