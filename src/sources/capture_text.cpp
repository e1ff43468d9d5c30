// Evidence per line for the capture reader. Each test looks at what the line itself shows
// (its key, its shape, the tool's own wording), so a format is found wherever it starts.
#include "sources/capture_text.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/event.h"
#include "sources/app/app_messages.h"
#include "sources/env/env_reports.h"
#include "sources/kmsg/kernel_log.h"
#include "sources/smi/csv_fields.h"
#include "sources/smi/smi_parsers.h"
#include "sources/smi/text_util.h"

namespace gw::capture_text {

namespace {

using text::is_digit;

// Section headers and keys of nvidia-smi -q (any driver generation), enough to tell a
// fragment that starts inside a GPU section.
constexpr std::array<std::string_view, 40> kQuerySections = {
    "ECC Errors",
    "ECC Mode",
    "Clocks Event Reasons",
    "Clocks Throttle Reasons",
    "Clocks_Event_Reasons",
    "Clocks_Throttle_Reasons",
    "Clocks Event Reasons Counters",
    "Temperature",
    "GPU Power Readings",
    "Power Readings",
    "Module Power Readings",
    "FB Memory Usage",
    "BAR1 Memory Usage",
    "Conf Compute Protected Memory Usage",
    "GPU Link Info",
    "PCIe Generation",
    "Link Width",
    "Retired Pages",
    "Remapped Rows",
    "Bank Remap Availability Histogram",
    "Performance",
    "Utilization",
    "Clocks",
    "Applications Clocks",
    "Default Applications Clocks",
    "Max Clocks",
    "Max Customer Boost Clocks",
    "Clock Policy",
    "Supported Clocks",
    "Processes",
    "PCI",
    "MIG Mode",
    "GPU Reset Status",
    "Volatile",
    "Aggregate",
    "Inforom Version",
    "GPU Operation Mode",
    "Voltage",
    "Fabric",
    "Encoder Stats",
};

constexpr std::array<std::string_view, 24> kQueryKeys = {
    "Timestamp",
    "Driver Version",
    "CUDA Version",
    "Attached GPUs",
    "Product Name",
    "Product Brand",
    "GPU UUID",
    "Performance State",
    "GPU Current Temp",
    "GPU Shutdown Temp",
    "GPU Slowdown Temp",
    "Power Draw",
    "Average Power Draw",
    "Instantaneous Power Draw",
    "Current Power Limit",
    "Power Limit",
    "Bus Id",
    "Fan Speed",
    "Persistence Mode",
    "SRAM Correctable",
    "DRAM Correctable",
    "Pending",
    "Remapping Failure Occurred",
    "Idle",
};

bool in(std::string_view s, const auto& list) {
  // Lengths first: most lines asked are no name of the list, and longer than any.
  for (std::string_view x : list)
    if (x.size() == s.size() && text::iequals(s, x)) return true;
  return false;
}

}  // namespace

// "    Key          : Value" -> key; empty when the line has no " : " (or a trailing " :").
std::string_view query_key(std::string_view trimmed) {
  const size_t colon = text::find(trimmed, " :");
  if (colon == std::string_view::npos || colon == 0) return {};
  if (colon + 2 < trimmed.size() && trimmed[colon + 2] != ' ') return {};
  return text::trim(trimmed.substr(0, colon));
}

namespace {

// A value-less -q header line: a short name of words ("ECC Errors", "GPU 00000000:07:00.0").
bool looks_like_query_header(std::string_view t) {
  if (t.size() > 48 || !std::isalpha(static_cast<unsigned char>(t.front()))) return false;
  if (text::starts_with(t, "GPU ") && normalize_pci_bus_id(text::trim(t.substr(4)))) return true;
  size_t words = 1;
  for (char c : t) {
    if (c == ' ') ++words;
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '_' || c == '-' ||
          c == '(' || c == ')' || c == '/' || c == '.'))
      return false;
  }
  return words <= 6;
}

bool query_start(const Line& l) {
  const std::string_view t = l.trimmed;
  if (t.find("NVSMI LOG") != std::string_view::npos) return true;
  if (text::starts_with(t, "GPU ") && normalize_pci_bus_id(text::trim(t.substr(4)))) return true;
  if (in(t, kQuerySections)) return true;
  const std::string_view key = query_key(t);
  if (key.empty()) return false;
  if (in(key, kQueryKeys)) return true;
  // nvidia-smi pads keys to one column: "Key<2+ spaces>: value".
  return t.find("  :") != std::string_view::npos && looks_like_query_header(key);
}

bool query_fits(const Line& l) {
  const std::string_view t = l.trimmed;
  if (text::is_elision_line(t) || t.find("NVSMI LOG") != std::string_view::npos) return true;
  if (!query_key(t).empty()) return !looks_like_kernel_log_line(t);
  return looks_like_query_header(t) && !is_prompt(t);
}

bool table_line(std::string_view t) {
  return (t.front() == '+' && t.size() > 2 && (t[1] == '-' || t[1] == '=')) || t.front() == '|' ||
         (text::starts_with(t, "NVIDIA-SMI ") &&
          t.find("Driver Version") != std::string_view::npos);
}

// "# gpu   pwr  temp ..." / "#Date  Time  gpu ...": '#' then column names only.
bool is_dmon_header(std::string_view t) {
  if (t.front() != '#') return false;
  bool named = false;
  size_t words = 0, i = 1;
  while (i < t.size()) {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
    size_t e = i;
    while (e < t.size() && t[e] != ' ' && t[e] != '\t') ++e;
    if (e == i) break;
    const std::string_view w = t.substr(i, e - i);
    for (char c : w)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '%' && c != '/') return false;
    if (w == "gpu" || w == "Idx" || w == "Date") named = true;
    ++words;
    i = e;
  }
  return named && words >= 3;
}

// dcgmi's result tables put '|' or '+' at column 28 (a 27-character name field); no
// nvidia-smi table row does, so a DCGM table after an nvidia-smi table is not swallowed.
bool dcgm_row(std::string_view t) {
  return t.size() > 28 && (t[28] == '|' || t[28] == '+') && (t[0] == '|' || t[0] == '+');
}

bool table_fits(const Line& l) {
  return table_line(l.trimmed) && !dcgm_row(l.trimmed);
}

bool dmon_fits(const Line& l) {
  return smi_dmon_line(l.trimmed);
}

bool topo_fits(const Line& l) {
  const std::string_view t = l.trimmed;
  if (text::starts_with(t, "Legend") || text::starts_with(t, "NIC Legend")) return true;
  auto numbered = [&](std::string_view p) {
    return text::starts_with(t, p) && t.size() > p.size() && is_digit(t[p.size()]);
  };
  if (numbered("GPU") || numbered("NIC")) return true;
  // Legend entries: "X    = Self", "NV#  = Connection traversing ...".
  const size_t eq = t.find(" = ");
  return eq != std::string_view::npos && eq <= 6;
}

bool xml_fits(const Line&) {
  return true;  // ends at </nvidia_smi_log>, see block_start
}

// The capability lines a `lspci -vv` paste keeps when its indentation is lost.
bool lspci_key_line(std::string_view t) {
  for (std::string_view k : {"LnkCap:", "LnkSta:", "LnkCtl:", "LnkCap2:", "LnkSta2:", "LnkCtl2:",
                             "DevCap:", "DevSta:", "DevCtl:", "ACSCap:", "ACSCtl:"})
    if (text::starts_with(t, k)) return true;
  return false;
}

bool lspci_fits(const Line& l) {
  // Tab-led lines are the device's details, except a `topo -m` header ("\tGPU0\tGPU1...")
  // pasted right after it. The cheap tests first: this runs on every line of a block.
  if (l.raw.front() == '\t')
    return !text::starts_with(l.trimmed, "GPU0") || !looks_like_topo_header(l.trimmed);
  if (l.raw.front() == ' ') return true;
  return looks_like_lspci_device_line(l.raw) || lspci_key_line(l.trimmed) ||
         lspci_selected_device(l.trimmed);
}

}  // namespace

Line line_at(std::string_view text, size_t pos) {
  Line l;
  l.begin = pos;
  const size_t nl = text.find('\n', pos);
  const size_t end = nl == std::string_view::npos ? text.size() : nl;
  l.next = nl == std::string_view::npos ? text.size() : nl + 1;
  l.raw = text.substr(pos, end - pos);
  if (!l.raw.empty() && l.raw.back() == '\r') l.raw.remove_suffix(1);
  l.trimmed = text::trim(l.raw);
  return l;
}

void shift_line(std::string& where, std::string_view origin, size_t shift) {
  if (where.size() <= origin.size() + 1 || where.compare(0, origin.size(), origin) != 0 ||
      where[origin.size()] != ':')
    return;
  size_t used = 0;
  const uint64_t n = text::leading_digits(std::string_view(where).substr(origin.size() + 1), used);
  if (used == 0) return;
  where = std::string(origin) + ":" + std::to_string(n + shift) +
          where.substr(origin.size() + 1 + used);
}

bool looks_like_csv_header(std::string_view line) {
  if (line.find(',') == std::string_view::npos) return false;
  size_t known = 0, fields = 0;
  size_t b = 0;
  while (b <= line.size()) {
    size_t e = line.find(',', b);
    if (e == std::string_view::npos) e = line.size();
    const auto f = text::trim(line.substr(b, e - b));
    ++fields;
    for (char c : f)  // field names: identifiers with dots, optional " [unit]"
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ' ' ||
            c == '[' || c == ']' || c == '%' || c == '/'))
        return false;
    if (smi::csv_column_for(f).field != smi::CsvField::kIgnore) ++known;
    b = e + 1;
  }
  return known > 0 && fields >= 2;
}

bool is_dmesg_bracket(std::string_view t) {
  if (t.size() < 4 || t.front() != '[') return false;
  const char c = t[1];
  if (is_digit(c) || c == ' ') {
    // "[ 1234.567890]": a '.' before the ']' (an MPI rank tag "[0]" has none).
    const size_t close = t.find(']');
    return close != std::string_view::npos && close < 24 &&
           t.substr(0, close).find('.') != std::string_view::npos;
  }
  if (c == '+') return t.size() > 2;
  // "[Thu Jun  2 21:32:25 2022] ..." (dmesg -T); not fabricmanager.log's "[Jun 02 2022
  // 21:32:25] [ERROR] [tid 841] ...", which is no kernel line.
  const size_t close = t.find(']');
  return std::isupper(static_cast<unsigned char>(c)) && close < 40 && t.substr(1, 3) != "..." &&
         (t.compare(close + 1, 2, " [") != 0 || t.find("] [tid ", close) == std::string_view::npos);
}

namespace {

// Just past the first " kernel: " in the line (0: none), found by its ": " (16 positions a step
// where SSE2 is there): string_view::find stops at every space (a memchr and a memcmp each), and
// glibc's memmem costs ~250 instructions a line, on every line of a journal.
size_t kernel_tag_end(std::string_view t) {
  const char* d = t.data();
  const size_t n = t.size();
  const auto tag_at = [&](size_t i) { return i >= 7 && t.substr(i - 7, 7) == " kernel"; };
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 17 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i + 1));
    auto m = static_cast<unsigned>(_mm_movemask_epi8(_mm_and_si128(
        _mm_cmpeq_epi8(a, _mm_set1_epi8(':')), _mm_cmpeq_epi8(b, _mm_set1_epi8(' ')))));
    for (; m != 0; m &= m - 1)
      if (const size_t at = i + static_cast<size_t>(__builtin_ctz(m)); tag_at(at)) return at + 2;
  }
#endif
  for (; i + 1 < n; ++i)
    if (d[i] == ':' && d[i + 1] == ' ' && tag_at(i)) return i + 2;
  return 0;
}

}  // namespace

namespace {

// is_syslog_kernel's test: just past the line's first " kernel: " (0: no syslog or journal
// kernel line), and the length of its month word in `word` (0 for an ISO date).
size_t syslog_kernel_end(std::string_view t, size_t& word) {
  word = 0;
  if (t.size() < 20) return 0;
  size_t m = 0;
  const bool syslog_date =
      text::month_word(t, m) != 0 && m + 9 < t.size() && t[m + 6] == ':' && t[m + 9] == ':';
  const bool iso_date = is_digit(t[0]) && is_digit(t[3]) && t[4] == '-' && t[7] == '-';
  if (!syslog_date && !iso_date) return 0;
  word = syslog_date ? m : 0;
  return kernel_tag_end(t);
}

}  // namespace

SyslogKernelPrefix syslog_kernel_prefix(std::string_view t) {
  SyslogKernelPrefix out;
  size_t word = 0;
  out.end = syslog_kernel_end(t, word);
  if (out.end < 16 || out.end > 64) return out;  // as a pattern: one to four 16-byte steps
  out.line = t;
  for (size_t i = word; i < out.end; ++i)
    if (is_digit(t[i])) out.digits |= uint64_t{1} << i;
  return out;
}

bool is_syslog_kernel(std::string_view t) {
  size_t word = 0;
  return syslog_kernel_end(t, word) != 0;
}

// Nothing is_syslog_kernel reads of a line changes when a digit takes a digit's place after the
// month word: not the month (its bytes must be equal), the colons, a date's digits being digits,
// or where " kernel: " stands. A line at least as long as the tag's end and 20 bytes, with the
// known line's bytes up to there but for such digits, is a syslog kernel line too.
bool like_syslog_kernel(std::string_view t, const SyslogKernelPrefix& known) {
  const size_t end = known.end;
  if (known.line.empty() || t.size() < std::max<size_t>(end, 20)) return false;
  const char* a = t.data();
  const char* b = known.line.data();
#if defined(__SSE2__)
  // 16 bytes a step, the last step ending at `end` (it may read bytes again).
  const __m128i below = _mm_set1_epi8('0' - 1), above = _mm_set1_epi8('9' + 1);
  for (size_t i = 0; i < end; i += 16) {
    const size_t at = std::min(i, end - 16);
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + at));
    const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at));
    const auto differ = ~static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(x, y))) & 0xFFFFu;
    if (differ == 0) continue;
    const auto digits = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpgt_epi8(x, below), _mm_cmplt_epi8(x, above))));
    if ((differ & ~(static_cast<unsigned>(known.digits >> at) & digits)) != 0) return false;
  }
  return true;
#else
  for (size_t i = 0; i < end; ++i)
    if (a[i] != b[i] && !(((known.digits >> i) & 1) != 0 && is_digit(a[i]))) return false;
  return true;
#endif
}

bool is_prompt(std::string_view t) {
  if (t.size() < 2) return false;
  // "$ cmd", "# cmd", "> cmd" (a bare prompt char then a space).
  if ((t[0] == '$' || t[0] == '#' || t[0] == '>') && t.size() > 2 && t[1] == ' ') return true;
  if (text::starts_with(t, "PS ") && t.find(">") != std::string_view::npos) return true;
  // bash's default "bash-5.1# cmd", "sh-4.4$ cmd": a shell's name, its version, the prompt.
  if (const size_t dash = t.find('-'); dash >= 2 && dash <= 4 && dash != std::string_view::npos) {
    size_t v = dash + 1;
    while (v < t.size() && (is_digit(t[v]) || t[v] == '.')) ++v;
    const std::string_view shell = t.substr(0, dash);
    if (v > dash + 1 && v + 1 < t.size() && (t[v] == '#' || t[v] == '$') && t[v + 1] == ' ' &&
        (shell == "sh" || shell == "bash" || shell == "zsh" || shell == "ksh" || shell == "dash"))
      return true;
  }
  // A bracketed prompt without a user: "[gpu6000 ~]# cmd", "[node12 work]$ cmd" (host, one
  // directory, then the prompt char).
  if (t[0] == '[') {
    const size_t close = t.find(']');
    if (close != std::string_view::npos && close <= 64 && close + 1 < t.size() &&
        (t[close + 1] == '#' || t[close + 1] == '$') &&
        (close + 2 == t.size() || t[close + 2] == ' ')) {
      const std::string_view inside = t.substr(1, close - 1);
      const size_t sp = inside.find(' ');
      if (sp != std::string_view::npos && sp > 0 &&
          inside.find(' ', sp + 1) == std::string_view::npos)
        return true;
    }
  }
  // "user@host:~/dir$ cmd", "root@node4:~# cmd", "[user@host dir]$ cmd", "(venv) user@h:~$".
  const size_t at = t.find('@');
  if (at == std::string_view::npos || at == 0 || at > 64) return false;
  for (const char* end : {"$ ", "# ", "$", "#"}) {
    const size_t p = t.find(end, at);
    if (p == std::string_view::npos) continue;
    if (std::string_view(end).size() == 1 && p + 1 != t.size()) continue;
    // Between '@' and the prompt char: a host and maybe ":path" or " dir]".
    const std::string_view host = t.substr(at + 1, p - at - 1);
    bool ok = !host.empty();
    for (char c : host)
      if (c == '"' || c == '\'' || c == ',' || c == '(') ok = false;
    if (ok) return true;
  }
  return false;
}

bool is_command_echo(std::string_view t) {
  if (text::starts_with(t, "```")) return true;
  // A query command cut at its start ("gpu=memory.total,... --format=csv,noheader"): its field
  // list and options, no output.
  if (t.find(" --format=csv") != std::string_view::npos && t.find(", ") == std::string_view::npos &&
      (t.find("--query-") != std::string_view::npos || text::starts_with(t, "gpu=")))
    return true;
  if (text::starts_with(t, "sudo ")) t = text::trim(t.substr(5));
  for (std::string_view cmd : {"nvidia-smi", "dcgmi", "nvcc", "dmesg", "journalctl", "systemctl",
                               "nvidia-bug-report.sh", "lspci", "nvidia-debugdump"}) {
    if (!text::starts_with(t, cmd)) continue;
    auto rest = t.substr(cmd.size());
    if (text::starts_with(rest, ".exe")) rest.remove_prefix(4);  // Windows
    // Options only: an error message ("nvidia-smi: command not found") is not an echo.
    if (rest.empty() || (rest.front() == ' ' && rest.find(": ") == std::string_view::npos))
      return true;
  }
  return false;
}

bool shows_wsl(std::string_view t) {
  for (std::string_view k : {"wsl.exe", "wsl -d ", "wsl --", ":/mnt/c/", "microsoft-standard-WSL",
                             "/usr/lib/wsl/", "WSL version", "WSL 版本"})
    if (t.find(k) != std::string_view::npos) return true;
  return text::starts_with(t, "PS ") && t.find("> wsl") != std::string_view::npos;
}

bool smi_selects_gpus(std::string_view t) {
  const size_t smi = t.find("nvidia-smi");
  if (smi == std::string_view::npos) return false;
  const std::string_view args = t.substr(smi);
  for (std::string_view opt : {" -i ", " -i=", " --id=", " --id "})
    if (args.find(opt) != std::string_view::npos) return true;
  return false;
}

namespace {

// Words that make a sentence a report of trouble, lowered (matched at a word's start); a line
// holding one is never decoration.
constexpr std::array<std::string_view, 38> kTroubleWords = {
    "error",  "fail",     "fault",   "lost",     "timeout", "timed out",  "xid",     "unable",
    "cannot", "can't",    "not ",    "no ",      "crash",   "hang",       "stuck",   "slow",
    "thrott", "degrad",   "warn",    "critical", "panic",   "oops",       "bug",     "mismatch",
    "unsupp", "insuffic", "kill",    "oom",      "memory",  "reset",      "nothing", "missing",
    "wrong",  "broken",   "problem", "issue",    "hot",     "off the bus"};

}  // namespace

bool is_decorative_prose(std::string_view t) {
  if (t.size() < 12 || t.size() > 200) return false;
  size_t letters = 0, words = 0;
  bool in_word = false;
  for (const char c : t) {
    if (is_digit(c)) return false;  // a figure is a value someone may need read
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    letters += letter ? 1 : 0;
    if (letter && !in_word) ++words;
    in_word = letter || c == '-' || c == '\'';
  }
  if (words < 3 || letters * 10 < t.size() * 6) return false;  // mostly words
  // At the start of a word: "hang" is trouble, "changed" is not.
  const std::string low = text::ascii_lower(t);
  for (std::string_view w : kTroubleWords)
    for (size_t p = low.find(w); p != std::string::npos; p = low.find(w, p + 1))
      if (p == 0 || !(low[p - 1] >= 'a' && low[p - 1] <= 'z')) return false;
  // A banner: words between runs of '=', '#', '*' or '-'.
  const auto rule_char = [](char c) { return c == '=' || c == '#' || c == '*' || c == '-'; };
  if (rule_char(t.front()) && rule_char(t.back())) return true;
  // A sentence: a capital or a quote first, no "key: value" or "NVRM" of a tool's line.
  const char first = t.front();
  if (!((first >= 'A' && first <= 'Z') || first == '`' || first == '"')) return false;
  if (t.find("NVRM") != std::string_view::npos) return false;
  const size_t colon = t.find(": ");
  if (colon != std::string_view::npos && colon + 2 < t.size()) return false;
  // A person speaking, not a tool's status line ("Mounting NVIDIA driver rootfs..."): the
  // words people use around what they paste.
  for (std::string_view w : {"i ", "i'", "my ", "me ", "we ", "our ", "you", "here", "below",
                             "following", "attached", "this is", "output"})
    for (size_t p = low.find(w); p != std::string::npos; p = low.find(w, p + 1))
      if (p == 0 || !(low[p - 1] >= 'a' && low[p - 1] <= 'z')) return true;
  return false;
}

bool is_markdown_separator(std::string_view t) {
  if (t.size() < 5 || t.front() != '|') return false;
  size_t dashes = 0;
  for (char c : t) {
    if (c == '-')
      ++dashes;
    else if (c != '|' && c != ':' && c != ' ')
      return false;
  }
  return dashes >= 3;
}

bool is_bare_process_tag(std::string_view t) {
  if (t.size() < 7 || t.size() > 120 || t.front() != '(' || t.back() != ')') return false;
  const std::string_view in = t.substr(1, t.size() - 2);
  if (in.find_first_of("()") != std::string_view::npos) return false;
  const size_t p = in.find("pid=");
  return p != std::string_view::npos && (p == 0 || in[p - 1] == ' ') && p + 4 < in.size() &&
         is_digit(in[p + 4]);
}

bool is_date_line(std::string_view t) {
  if (t.size() < 20 || t.size() > 40) return false;
  if (text::parse_ctime_ms(t)) return true;
  // date(1): "Tue Dec  1 08:14:02 UTC 2026".
  return text::month_from_abbrev(t.substr(4, 3)) != 0 && t[3] == ' ' && t.find(':') == 13 &&
         is_digit(t.back());
}

CaptureFormat block_start(const Line& l, std::string_view text) {
  const std::string_view t = l.trimmed;
  if (text::starts_with(t, "<?xml") || text::starts_with(t, "<nvidia_smi_log") ||
      text::starts_with(t, "<!DOCTYPE nvidia_smi_log"))
    return CaptureFormat::kSmiQueryXml;
  if (is_dmon_header(t)) return CaptureFormat::kSmiDmon;
  if (text::starts_with(t, "GPU0") && looks_like_topo_header(t)) return CaptureFormat::kSmiTopo;
  // A table row ("|   0  NVIDIA A10 ... |") starts a table too: pastes cut its top off.
  if (table_line(t) && (t.front() == '+' || t.find("NVIDIA-SMI") != std::string_view::npos ||
                        t.find('|', 1) != std::string_view::npos))
    return CaptureFormat::kSmiTable;
  if (is_date_line(t)) {  // nvidia-smi prints the date above its table
    const Line next = line_at(text, l.next);
    if (!next.trimmed.empty() && table_line(next.trimmed)) return CaptureFormat::kSmiTable;
  }
  if (looks_like_lspci_device_line(l.raw)) return CaptureFormat::kLspci;
  // "# lspci -vvv -s ADDR" with the device's indented lines after it (no device line). A
  // first-byte test first: this runs on every line outside the kernel log's fast path.
  const char c0 = t.front();
  if ((c0 == '#' || c0 == '$' || c0 == 'l' || c0 == 's') && lspci_selected_device(t)) {
    const Line next = line_at(text, l.next);
    if (!next.raw.empty() &&
        (next.raw.front() == '\t' || next.raw.front() == ' ' || lspci_key_line(next.trimmed)))
      return CaptureFormat::kLspci;
  }
  if (query_start(l)) return CaptureFormat::kSmiQueryText;
  return CaptureFormat::kUnknown;
}

FitsFn block_fits(CaptureFormat f) {
  switch (f) {
    case CaptureFormat::kSmiQueryText:
      return query_fits;
    case CaptureFormat::kSmiTable:
      return table_fits;
    case CaptureFormat::kSmiDmon:
      return dmon_fits;
    case CaptureFormat::kSmiTopo:
      return topo_fits;
    case CaptureFormat::kLspci:
      return lspci_fits;
    default:
      return xml_fits;
  }
}

bool claimed_by_other_format(std::string_view t) {
  if (t.empty()) return false;
  if (is_dmesg_bracket(t) || is_prompt(t) || looks_like_kernel_log_line(t)) return true;
  Line l;
  l.raw = l.trimmed = t;
  if (looks_like_csv_header(t)) return true;
  if (parse_app_message_line(t, "").has_value()) return true;
  return block_start(l, {}) != CaptureFormat::kUnknown;
}

}  // namespace gw::capture_text
