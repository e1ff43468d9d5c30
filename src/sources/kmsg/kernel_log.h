// Kernel log -> Events (Xid, SXid, GPU fallen off the bus). Pure functions over text.
// Accepts dmesg ("[ 1234.567890]", -T "[Sun Feb 23 16:24:18 2025]", --time-format=iso,
// --ctime, --decode "kern  :warn  : "), journalctl -k (short, short-iso), syslog/kern.log
// ("Mar  3 10:00:00 host kernel: ...") and raw /dev/kmsg records ("6,123,456789,-;...").
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "core/result.h"

namespace gw {

using EventSink = std::function<void(Event&&)>;

struct KernelLogStats {
  size_t lines = 0;      // lines in the text
  size_t events = 0;     // events given to the sink
  size_t bad_lines = 0;  // GPU lines that could not be parsed (first few are in errors)
};

// Streams events in file order. Non-GPU lines are skipped without being split into lines:
// the scan jumps between "NVRM: " and "SXid (" anchors.
KernelLogStats parse_kernel_log_stream(std::string_view text, std::string_view origin,
                                       const EventSink& sink, std::vector<Error>* errors);

// One line (any supported prefix) -> an Event, or nullopt when it is not a GPU event line.
// `line_no` only names the origin ("origin:line_no").
std::optional<Event> parse_kernel_log_line(std::string_view line, std::string_view origin,
                                           size_t line_no, Error* error);

// True when the text looks like a kernel log (used by format detection).
bool looks_like_kernel_log_line(std::string_view line);

}  // namespace gw
