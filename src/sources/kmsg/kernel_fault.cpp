// Fault reports in the NVIDIA modules (kernel_fault.h): one small reader per marker.
#include "sources/kmsg/kernel_fault.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace gw::kmsg {
namespace {

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}

bool is_symbol_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                        s.back() == '\n' || s.back() == '*'))
    s.remove_suffix(1);
  return s;
}

// "nvidia", "nvidia_uvm", "nvidia_modeset", ...: a module of the NVIDIA driver.
bool nvidia_module(std::string_view m) {
  if (m.substr(0, 6) != "nvidia") return false;
  for (char c : m.substr(6))
    if (!(std::islower(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-')) return false;
  return true;
}

// The resource manager's obfuscated functions: "_nv031695rm".
bool rm_symbol(std::string_view s) {
  if (s.size() < 6 || s.substr(0, 3) != "_nv" || s.substr(s.size() - 2) != "rm") return false;
  for (char c : s.substr(3, s.size() - 5))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// "0xHEX" at the start of s: its length, 0 if none.
size_t hex_number(std::string_view s) {
  if (s.substr(0, 2) != "0x") return 0;
  size_t n = 2;
  while (n < s.size() && is_hex(s[n])) ++n;
  return n > 2 ? n : 0;
}

// Drops what may stand before a frame's symbol: blanks, "? ", "[<ffffffffc075549f>]" (old
// traces, one or two), a segment "0010:".
std::string_view skip_frame_lead(std::string_view t) {
  for (bool more = true; more;) {
    more = false;
    t = trim(t);
    if (t.substr(0, 2) == "? ") {
      t.remove_prefix(2);
      more = true;
    } else if (t.substr(0, 2) == "[<") {
      const size_t close = t.find(">]");
      if (close == std::string_view::npos) return {};
      t.remove_prefix(close + 2);
      more = true;
    } else if (t.size() > 5 && t[4] == ':' && is_hex(t[0]) && is_hex(t[1]) && is_hex(t[2]) &&
               is_hex(t[3])) {
      t.remove_prefix(5);
      more = true;
    }
  }
  return t;
}

// "sym+0x79/0x940 [nvidia]" (the module optional) -> the site, when the text is just that.
std::optional<FaultSite> parse_frame(std::string_view t) {
  t = skip_frame_lead(t);
  size_t n = 0;
  while (n < t.size() && is_symbol_char(t[n])) ++n;
  if (n == 0 || n >= t.size() || t[n] != '+') return std::nullopt;
  FaultSite site{std::string(t.substr(0, n)), {}};
  std::string_view rest = t.substr(n + 1);
  const size_t off = hex_number(rest);
  if (off == 0 || off >= rest.size() || rest[off] != '/') return std::nullopt;
  rest.remove_prefix(off + 1);
  const size_t len = hex_number(rest);
  if (len == 0) return std::nullopt;
  rest = trim(rest.substr(len));
  if (rest.empty()) return site;
  if (rest.front() != '[' || rest.back() != ']') return std::nullopt;
  site.module = std::string(rest.substr(1, rest.size() - 2));
  return site;
}

bool in_nvidia(const std::optional<FaultSite>& s) {
  return s && (nvidia_module(s->module) || (s->module.empty() && rm_symbol(s->symbol)));
}

// The frame that ends the line: from the blank before its symbol.
std::optional<FaultSite> trailing_frame(std::string_view line) {
  line = trim(line);
  if (line.empty() || line.back() != ']') return std::nullopt;
  const size_t open = line.rfind('[');
  if (open == std::string_view::npos) return std::nullopt;
  const std::string_view head = trim(line.substr(0, open));  // "... ? sym+0x1a2/0x270"
  const size_t sp = head.find_last_of(" \t]>");
  const size_t token =
      static_cast<size_t>(head.data() - line.data()) + (sp == std::string_view::npos ? 0 : sp + 1);
  return parse_frame(line.substr(token));
}

// The driver's code: a module tag or a source path ("build/nvidia/535.171.04/...",
// "nvidia-uvm/uvm_pmm_gpu.c"); not a process name such as "nvidia-smi:2024380".
bool names_nvidia_code(std::string_view s) {
  for (std::string_view w : {"[nvidia", "nvidia/", "/nvidia", "nvidia-uvm/"})
    if (s.find(w) != std::string_view::npos) return true;
  return false;
}

}  // namespace

// Where the instruction-pointer text starts: after "RIP: ", "EIP: ", "pc : " or a lone "IP: ".
// The first of each: "RIP: ", "EIP: ", "pc : ", and "IP: " with what stands before it. One walk
// over the line's colons (every marker ends in ": "), not four searches: this runs on every
// line that names the driver.
std::optional<size_t> ip_marker(std::string_view line) {
  constexpr size_t npos = std::string_view::npos;
  size_t rip = npos, eip = npos, pc = npos, ip = npos;
  const char* d = line.data();
  const size_t n = line.size();
  for (const char* c = static_cast<const char*>(std::memchr(d, ':', n)); c;
       c = static_cast<const char*>(std::memchr(c + 1, ':', n - static_cast<size_t>(c + 1 - d)))) {
    const size_t at = static_cast<size_t>(c - d);
    if (at + 1 >= n || d[at + 1] != ' ' || at < 2) continue;
    if (d[at - 2] == 'I' && d[at - 1] == 'P') {
      if (ip == npos) ip = at - 2;
      if (at >= 3 && d[at - 3] == 'R' && rip == npos) rip = at + 2;
      if (at >= 3 && d[at - 3] == 'E' && eip == npos) eip = at + 2;
    } else if (at >= 3 && d[at - 3] == 'p' && d[at - 2] == 'c' && d[at - 1] == ' ' && pc == npos) {
      pc = at + 2;
    }
  }
  if (rip != npos) return rip;
  if (eip != npos) return eip;
  if (pc != npos) return pc;
  if (ip != npos && (ip == 0 || d[ip - 1] == ' ' || d[ip - 1] == ']')) return ip + 4;
  return std::nullopt;
}

std::optional<FaultSite> fault_site(std::string_view line) {
  if (const auto at = ip_marker(line)) return parse_frame(trim(line.substr(*at)));
  return trailing_frame(line);
}

FaultLine classify_fault_line(std::string_view line) {
  // Every kind names the driver ("nvidia", an "_nvNNNNNNrm" function) and is longer than
  // this: the common line is turned away without a search per marker.
  if (line.size() < 16 || line.find("nv") == std::string_view::npos) return FaultLine::kNone;
  // Every frame is "sym+0xOFF/0xLEN": a line without '+' holds no IP line's or trace's frame.
  const bool may_hold_frame = line.find('+') != std::string_view::npos;
  if (const auto at = may_hold_frame ? ip_marker(line) : std::nullopt) {
    if (in_nvidia(parse_frame(trim(line.substr(*at))))) return FaultLine::kIp;
  }
  if (line.find("Modules linked in:") != std::string_view::npos)
    return line.find("nvidia") != std::string_view::npos ? FaultLine::kModules : FaultLine::kNone;
  if (const size_t u = line.find("UBSAN: "); u != std::string_view::npos) {
    const size_t in = line.find(" in ", u);
    return in != std::string_view::npos && names_nvidia_code(line.substr(in))
               ? FaultLine::kSanitizer
               : FaultLine::kNone;
  }
  if (const size_t w = line.find("WARNING: "); w != std::string_view::npos) {
    const size_t at = line.find(" at ", w);
    return at != std::string_view::npos && names_nvidia_code(line.substr(at)) ? FaultLine::kWarning
                                                                              : FaultLine::kNone;
  }
  return may_hold_frame && in_nvidia(trailing_frame(line)) ? FaultLine::kFrame : FaultLine::kNone;
}

namespace {

struct Marker {
  std::string_view text;
  FaultKind kind;
  int weight;  // the most telling header of a report wins; "Oops: 0000 [#1]" says least
};
constexpr std::array<Marker, 8> kMarkers = {{
    {"BUG: ", FaultKind::kCrash, 2},
    {"general protection fault", FaultKind::kCrash, 2},
    {"kernel BUG at", FaultKind::kCrash, 2},
    {"Unable to handle kernel", FaultKind::kCrash, 2},
    {"WARNING: ", FaultKind::kWarning, 2},
    {"UBSAN: ", FaultKind::kWarning, 2},
    {"Oops: ", FaultKind::kCrash, 1},
    {"Kernel panic", FaultKind::kCrash, 1},
}};

void read_task(std::string_view line, FaultHeader& h) {
  const size_t pid = line.find("PID: ");
  const size_t comm = line.find(" Comm: ");
  if (pid == std::string_view::npos || comm == std::string_view::npos || h.pid) return;
  uint32_t v = 0;
  size_t n = pid + 5;
  for (; n < line.size() && std::isdigit(static_cast<unsigned char>(line[n])) && v < 100'000'000;
       ++n)
    v = v * 10 + static_cast<uint32_t>(line[n] - '0');
  if (n == pid + 5) return;
  h.pid = v;
  std::string_view name = line.substr(comm + 7);
  h.comm = std::string(name.substr(0, name.find(' ')));
}

}  // namespace

bool is_fault_header(std::string_view line) {
  return std::any_of(kMarkers.begin(), kMarkers.end(),
                     [&](const Marker& m) { return line.find(m.text) != std::string_view::npos; });
}

FaultHeader fault_header_before(std::string_view before) {
  FaultHeader h;
  int best = 0;
  size_t end = before.size();
  for (int lines = 0; lines < 60 && end > 0; ++lines) {
    const size_t nl = before.rfind('\n', end - 1);
    const size_t start = nl == std::string_view::npos ? 0 : nl + 1;
    const std::string_view line = before.substr(start, end - start);
    end = nl == std::string_view::npos ? 0 : nl;
    if (line.find("---[ end trace") != std::string_view::npos) break;
    read_task(line, h);
    for (const Marker& m : kMarkers) {
      const size_t p = line.find(m.text);
      if (p == std::string_view::npos || m.weight < best) continue;
      best = m.weight;  // earlier in the file, at least as telling: this report's header
      h.kind = m.kind;
      h.text = std::string(trim(line.substr(p)).substr(0, 160));
      break;
    }
  }
  return h;
}

}  // namespace gw::kmsg
