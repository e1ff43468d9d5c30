// Kernel log -> Events: Xid, SXid, GPU fallen off the bus, and the driver messages that are
// not Xids (DriverMessageKind: adapter init failures, open-module requirement, reset required,
// GSP timeouts, API mismatch, devices not probed, PCIe AER, hung tasks). Pure functions over
// text. Every prefix in sources/kmsg/log_prefix.h is read, the time optional; a GPU line is
// found wherever it stands (among shell prompts, lsmod output, application errors), so a file
// need not be a kernel log as a whole.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/event.h"
#include "core/result.h"

namespace gw {

using EventSink = std::function<void(Event&&)>;

struct KernelLogStats {
  size_t lines = 0;      // lines in the text
  size_t events = 0;     // events given to the sink
  size_t bad_lines = 0;  // GPU lines that could not be parsed (first few are in errors)
  // Lines that made an event or were part of one (continuation lines of a multi-line driver
  // message included). Always counted.
  size_t gpu_lines = 0;
  // Only with KernelLogParseOptions::classify_lines: non-blank lines that carry a kernel-log prefix
  // (or an NVRM/SXid/AER text) and so were read as kernel log, GPU lines included ...
  size_t kernel_lines = 0;
  // ... and the non-blank lines that are not kernel log (shell prompts, lsmod, app output).
  size_t unread_lines = 0;
  std::optional<size_t> first_unread_line;  // 1-based
  // Lines read without a time because their time bracket was impossible ("[+1e300]", an
  // uptime over a century; LogPrefix::time_refused). GPU lines always, others when walked.
  size_t untimed_lines = 0;
};

struct KernelLogParseOptions {
  // Walk every line (not only the GPU lines) and count kernel_lines / unread_lines. Costs
  // about one prefix check per line; off, the scan jumps between GPU anchors.
  bool classify_lines = false;
  // With classify_lines: called for each non-blank line that is not kernel log, in order
  // (line_no 1-based, the line without its end), so the caller can offer it to other parsers.
  std::function<void(size_t line_no, std::string_view line)> on_unread;
  // Called for each line that names a GPU, the NVIDIA driver, CUDA, NCCL or DCGM and that the
  // parser took nothing from (no event, no continuation, not a routine driver message): the
  // caller lists it as not read. Set, the scan also stops at those names (a few more anchors).
  std::function<void(size_t line_no, std::string_view line)> on_unread_gpu_line;
  // The text just before `text` in the caller's input (a reader that cut the kernel-log run
  // out of a larger paste): where a fault report's header may stand when only its RIP line
  // was taken for kernel log (bare pasted traces, quoted lines).
  std::string_view preceding;
  // Called with the bytes of the text scanned so far, about every MiB (a progress line).
  std::function<void(size_t bytes)> on_progress;
  // The (GPU, Xid) pairs of the kernel's Xid lines read so far, for a caller that parses one
  // log in pieces: a monitor's restatement of an Xid in an earlier piece is no second event
  // either. Null: the parse keeps its own.
  std::unordered_set<uint64_t>* xids_seen = nullptr;
};

// Streams events in file order. Without classify_lines, non-GPU lines are skipped without
// being split into lines: the scan jumps between the anchors "NVRM", "SXid (", "AER: " and
// "INFO: task ". Multi-line driver messages (continuation lines with or without their own
// prefix) are joined into one event named after their first line.
KernelLogStats parse_kernel_log_stream(std::string_view text, std::string_view origin,
                                       const EventSink& sink, std::vector<Error>* errors);
KernelLogStats parse_kernel_log_stream(std::string_view text, std::string_view origin,
                                       const EventSink& sink, std::vector<Error>* errors,
                                       const KernelLogParseOptions& options);

// One line (any supported prefix) -> an Event, or nullopt when it is not a GPU event line.
// `line_no` only names the origin ("origin:line_no"). Continuation lines are not joined here.
std::optional<Event> parse_kernel_log_line(std::string_view line, std::string_view origin,
                                           size_t line_no, Error* error);

// A kernel fault report's event (DriverMessageKind::kKernelFault / kKernelWarning) from its
// instruction-pointer line in an NVIDIA module, or a UBSAN line about the driver; `before` is
// the text before the line (the report's header and task are found there, 60 lines at most).
// nullopt for any other line. The stream and the live kernel-log follower both use it.
std::optional<Event> parse_fault_line(std::string_view line, std::string_view before,
                                      std::string_view origin, size_t line_no);

// True when the line names a GPU, the NVIDIA driver (NVRM, nvidia*), CUDA, NCCL, DCGM, NVLink
// or NVSwitch (any case): a line that must be read or said to be unread.
bool names_gpu_stack(std::string_view line);

// A routine driver message that says nothing is wrong (module loaded, UVM loaded, the GPU's
// identity line, the persistence daemon started): read, and nothing to report.
bool is_routine_driver_line(std::string_view line);

// True when a line may start a piece of a kernel log as far as the line itself tells: it has a
// prefix with its own time (not a dmesg -H delta or minute line, whose clock runs on from the
// lines before) and no GPU anchor, so no multi-line driver message can go on through it (what
// the lines around it hold: kernel_log_may_cut).
bool kernel_log_piece_may_start(std::string_view line);

// Whether a kernel log may be cut before the line at `at` of `text` with what the whole gives,
// so that a reader can parse a huge log in pieces, each resident only while it is read:
// nothing gathered over a span reaches across the line (no kernel fault report or firmware
// error record within 100 lines before, no driver dump line waiting within 40 lines either
// side), and the line is kernel_log_piece_may_start's; or, for a run of GPU lines alone (an
// Xid storm, an Xid 119 flood with the driver's dumps, a PCIe AER or firmware-error flood),
// a line with its own time that joins nothing and that nothing waits for: an Xid line with
// another within 40 lines before it, a firmware error record's first line, an AER report's
// first line after another report's line, or a line after driver text that joins nothing.
bool kernel_log_may_cut(std::string_view text, size_t at);

// True when the line carries a kernel-log prefix or kernel GPU text (format detection and
// coverage counting).
bool looks_like_kernel_log_line(std::string_view line);

}  // namespace gw
