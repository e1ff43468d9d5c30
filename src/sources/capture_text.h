// Line-level evidence used by the capture reader: which line starts which block format, which
// lines still fit a block, prompts, dates. Pure functions over one line (and, for the table's
// date line, a look at the next one).
#pragma once

#include <string>
#include <string_view>

#include "sources/captures.h"

namespace gw::capture_text {

struct Line {
  size_t begin = 0, next = 0;  // offsets of the line and of the one after it
  size_t no = 0;               // 1-based, set by the caller
  std::string_view raw;        // without the line end ("\n" or "\r\n")
  std::string_view trimmed;    // raw without surrounding whitespace
};

Line line_at(std::string_view text, size_t pos);

// "file:12" -> "file:17" for shift 5, when `where` names `origin`.
void shift_line(std::string& where, std::string_view origin, size_t shift);

bool looks_like_csv_header(std::string_view trimmed);
bool is_dmesg_bracket(std::string_view trimmed);  // "[  12.345678] ..." / "[Mon Dec ...] ..."
// A syslog/journal line of the kernel: "Mar  3 10:00:00 host kernel: ...", ISO-dated too.
bool is_syslog_kernel(std::string_view trimmed);
// is_syslog_kernel's verdict, kept as a pattern for the lines after it.
struct SyslogKernelPrefix {
  size_t end = 0;         // just past the line's first " kernel: "; 0: no syslog kernel line
  std::string_view line;  // the line, when end <= 64 (else no pattern)
  uint64_t digits = 0;    // bit i: line[i] is a digit after the month word, before `end`
};
SyslogKernelPrefix syslog_kernel_prefix(std::string_view trimmed);
// A line with the known line's bytes up to its tag, but for digits in digits' places after its
// month word (the clock, the day): a syslog kernel line too, found at a fraction of
// is_syslog_kernel's cost (a journal's lines mostly differ from the last there). False says
// nothing: ask syslog_kernel_prefix.
bool like_syslog_kernel(std::string_view trimmed, const SyslogKernelPrefix& known);
bool is_prompt(std::string_view trimmed);
// A command typed without its prompt ("nvidia-smi -q", "dcgmi diag -r 2", "sudo dmesg", a
// markdown fence "```"): it names what follows, nothing to judge.
bool is_command_echo(std::string_view trimmed);
// An nvidia-smi command (typed after a prompt or alone) that asks for some GPUs only ("-i 0",
// "--id=0,1"): its -q output lists fewer GPUs than "Attached GPUs".
bool smi_selects_gpus(std::string_view trimmed);
// A prompt, command or banner that shows WSL 2 ("PS C:\> wsl -d Ubuntu", "user@h:/mnt/c/...$",
// "microsoft-standard-WSL2", "/usr/lib/wsl/lib").
bool shows_wsl(std::string_view trimmed);
// A person's words around a paste that judge nothing: a sentence with no number and no word of
// trouble ("When upgrading my nvidia drivers, I noticed that the output changed:"), or a banner
// ("=== NVIDIA GPU report ==="). It names the GPU stack without being a GPU line nobody read.
bool is_decorative_prose(std::string_view trimmed);
bool is_date_line(std::string_view trimmed);  // "Tue Dec  1 08:14:02 2026" (nvidia-smi, date)
// Only a process tag, the rest of the line empty: Ray's "(pid=909608) " before an empty line
// of that worker's output, "(RayTrainWorker pid=12, ip=10.0.0.2)". Read as a blank line.
bool is_bare_process_tag(std::string_view trimmed);
// A Markdown table's separator row, "|---|:---:|" (pipes, dashes, colons and blanks only; an
// nvidia-smi rule has '+' or '=').
bool is_markdown_separator(std::string_view trimmed);

// The key of an nvidia-smi -q "Key   : value" line ("" when the line is not one).
std::string_view query_key(std::string_view trimmed);

// The block format `l` starts, kUnknown for none (CSV is handled by its own parser).
CaptureFormat block_start(const Line& l, std::string_view text);
using FitsFn = bool (*)(const Line&);
FitsFn block_fits(CaptureFormat f);

// A line some other reader claims: ends a CSV table in a mixed file.
bool claimed_by_other_format(std::string_view trimmed);

}  // namespace gw::capture_text
