#include "sources/kmsg/kernel_log.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>

#include "sources/smi/text_util.h"

namespace gw {

namespace {

constexpr size_t kMaxLineErrors = 50;
constexpr std::string_view kNvrm = "NVRM: ";
constexpr std::string_view kSxid = "SXid (";
constexpr std::string_view kFallen = "fallen off the bus";

bool digit(char c) {
  return c >= '0' && c <= '9';
}

// "2024-11-15T05:39:15,491363+00:00", "2025-01-21T02:21:33+0000", "...Z" -> epoch ms.
// Sets `used` to the characters consumed.
std::optional<int64_t> parse_iso_ms(std::string_view s, size_t& used) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') ||
      s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto num = [&](size_t p, size_t n) {
    int64_t v = 0;
    for (size_t i = p; i < p + n; ++i) v = digit(s[i]) ? v * 10 + (s[i] - '0') : -1000000;
    return v;
  };
  const int64_t y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2),
                sec = num(17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || sec < 0)
    return std::nullopt;
  size_t i = 19;
  int64_t ms = 0;
  if (i < s.size() && (s[i] == ',' || s[i] == '.')) {
    ++i;
    int64_t scale = 100;
    for (; i < s.size() && digit(s[i]); ++i, scale /= 10) ms += (s[i] - '0') * scale;
  }
  int64_t offset_min = 0;
  if (i < s.size() && s[i] == 'Z') {
    ++i;
  } else if (i + 5 <= s.size() && (s[i] == '+' || s[i] == '-')) {
    const int sign = s[i] == '-' ? -1 : 1;
    const size_t colon = s[i + 3] == ':' ? 1 : 0;
    if (i + 5 + colon <= s.size()) {
      const int64_t oh = num(i + 1, 2), om = num(i + 3 + colon, 2);
      if (oh >= 0 && om >= 0) {
        offset_min = sign * (oh * 60 + om);
        i += 5 + colon;
      }
    }
  }
  used = i;
  const int64_t days =
      text::days_from_civil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return (((days * 24 + h) * 60 + mi - offset_min) * 60 + sec) * 1000 + ms;
}

// dmesg --decode: "kern  :warn  : " (facility, level, each padded).
std::string_view strip_decode(std::string_view s) {
  size_t i = 0;
  for (int part = 0; part < 2; ++part) {
    const size_t b = i;
    while (i < s.size() && s[i] >= 'a' && s[i] <= 'z') ++i;
    if (i == b || i - b > 8) return s;
    while (i < s.size() && s[i] == ' ') ++i;
    if (i >= s.size() || s[i] != ':') return s;
    ++i;
  }
  return text::trim(s.substr(i));
}

// "[ 1234.567890]" or "[Sun Feb 23 16:24:18 2025]" at the start of s; also drops a
// following "[ T1946]" caller id.
std::string_view strip_bracket_time(std::string_view s, Event& ev) {
  if (s.empty() || s.front() != '[') return s;
  const size_t close = s.find(']');
  if (close == std::string_view::npos || close > 40) return s;
  const auto inner = text::trim(s.substr(1, close - 1));
  if (auto up = text::parse_double(inner); up && !inner.empty() && digit(inner.front())) {
    ev.uptime_s = *up;
  } else if (auto t = text::parse_ctime_ms(inner)) {
    ev.time_ms = *t;
  } else {
    return s;
  }
  s = text::trim(s.substr(close + 1));
  if (s.size() > 3 && s[0] == '[' && (s[1] == 'T' || s[1] == 'C' || s[1] == ' ')) {
    const size_t c2 = s.find(']');
    if (c2 != std::string_view::npos && c2 < 16) s = text::trim(s.substr(c2 + 1));
  }
  return s;
}

// /dev/kmsg record: "6,1234,5678901,-;message".
bool strip_kmsg_record(std::string_view& s, Event& ev) {
  const size_t semi = s.find(';');
  if (semi == std::string_view::npos || semi > 64 || s.empty() || !digit(s.front())) return false;
  const auto head = s.substr(0, semi);
  const size_t c1 = head.find(','), c2 = head.find(',', c1 + 1);
  if (c1 == std::string_view::npos || c2 == std::string_view::npos) return false;
  const size_t c3 = head.find(',', c2 + 1);
  auto usec =
      text::parse_u64(head.substr(c2 + 1, c3 == std::string_view::npos ? head.npos : c3 - c2 - 1));
  if (!usec) return false;
  ev.uptime_s = static_cast<double>(*usec) / 1e6;
  s = s.substr(semi + 1);
  return true;
}

// Fills ev.time_ms / ev.uptime_s from whatever prefix the source wrote.
void parse_prefix(std::string_view s, Event& ev) {
  s = text::trim(s);
  if (strip_kmsg_record(s, ev)) return;
  s = strip_decode(s);
  size_t used = 0;
  if (auto t = parse_iso_ms(s, used)) {
    ev.time_ms = *t;
    s = text::trim(s.substr(used));
  } else if (s.size() > 15 && text::month_from_abbrev(s.substr(0, 3)) != 0 && s[3] == ' ') {
    // syslog "Mar  3 10:00:00 host kernel:": no year in the line, so no wall time.
  } else {
    s = strip_bracket_time(s, ev);
  }
  if (const size_t k = s.find("kernel: "); k != std::string_view::npos && k < 80)
    strip_bracket_time(text::trim(s.substr(k + 8)), ev);
}

// "PCI:0000:3b:00" / "0000:3b:00" / "PCI:0000:05:00.0" -> normalised id.
std::optional<std::string> pci_of(std::string_view addr) {
  addr = text::trim(addr);
  if (text::starts_with(addr, "PCI:")) addr.remove_prefix(4);
  return normalize_pci_bus_id(addr);
}

// After "Xid (" or "SXid (": "<addr>): <code>, rest". False when malformed.
bool parse_code_part(std::string_view& s, Event& ev) {
  const size_t close = s.find("): ");
  if (close == std::string_view::npos || close > 32) return false;
  ev.pci_bus_id = pci_of(s.substr(0, close));
  s = s.substr(close + 3);
  size_t n = 0;
  while (n < s.size() && digit(s[n])) ++n;
  if (n == 0 || n > 6) return false;
  ev.code = text::to_unsigned(text::parse_u64(s.substr(0, n)));
  s = s.substr(n);
  if (!s.empty() && s.front() == ',') s.remove_prefix(1);
  s = text::trim(s);
  return true;
}

// "pid=1234, name=python, rest" (either part optional; '<unknown>' values dropped).
void parse_pid_name(std::string_view& s, Event& ev) {
  if (text::starts_with(s, "pid=")) {
    const size_t comma = s.find(',');
    const auto v = s.substr(4, comma == std::string_view::npos ? s.npos : comma - 4);
    if (auto pid = text::parse_u64(v); pid && *pid <= 0xffffffffULL)
      ev.pid = static_cast<uint32_t>(*pid);
    s = comma == std::string_view::npos ? std::string_view{} : text::trim(s.substr(comma + 1));
  }
  if (text::starts_with(s, "name=")) {
    const size_t comma = s.find(", ");
    const auto v = s.substr(5, comma == std::string_view::npos ? s.npos : comma - 5);
    if (!v.empty() && v != "<unknown>") ev.process_name = std::string(v);
    s = comma == std::string_view::npos ? std::string_view{} : text::trim(s.substr(comma + 2));
  }
}

// "NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus." / "The NVIDIA GPU 0000:18:00.0 ..."
std::optional<std::string> gpu_address_in(std::string_view s) {
  size_t p = 0;
  while ((p = s.find("GPU ", p)) != std::string_view::npos) {
    p += 4;
    size_t e = p;
    while (e < s.size() && (std::isxdigit(static_cast<unsigned char>(s[e])) || s[e] == ':' ||
                            s[e] == '.' || s[e] == 'P' || s[e] == 'C' || s[e] == 'I'))
      ++e;
    auto tok = s.substr(p, e - p);
    while (!tok.empty() && (tok.back() == ':' || tok.back() == '.')) tok.remove_suffix(1);
    if (auto id = pci_of(tok)) return id;
  }
  return std::nullopt;
}

Error line_error(std::string_view origin, size_t line_no, std::string msg) {
  return make_error("capture.kernel_log", std::move(msg),
                    std::string(origin) + ":" + std::to_string(line_no));
}

}  // namespace

std::optional<Event> parse_kernel_log_line(std::string_view line, std::string_view origin,
                                           size_t line_no, Error* error) {
  Event ev;
  std::string_view body;
  if (const size_t x = line.find("NVRM: Xid ("); x != std::string_view::npos) {
    ev.kind = EventKind::kXid;
    body = line.substr(x + 11);
  } else if (const size_t sx = line.find(kSxid); sx != std::string_view::npos) {
    ev.kind = EventKind::kSXid;
    body = line.substr(sx + kSxid.size());
  } else if (line.find(kFallen) != std::string_view::npos &&
             line.find(kNvrm) != std::string_view::npos) {
    ev.kind = EventKind::kFallenOffBus;
    parse_prefix(line.substr(0, line.find(kNvrm)), ev);
    ev.pci_bus_id = gpu_address_in(line);
    ev.message = std::string(text::trim(line.substr(line.find(kNvrm) + kNvrm.size())));
    ev.origin = std::string(origin) + ":" + std::to_string(line_no);
    return ev;
  } else {
    return std::nullopt;
  }
  std::string_view rest = body;
  if (!parse_code_part(rest, ev)) {
    if (error)
      *error =
          line_error(origin, line_no,
                     std::string("expected '") + (ev.kind == EventKind::kXid ? "Xid" : "SXid") +
                         " (<pci address>): <number>, ...' in a kernel log line");
    return std::nullopt;
  }
  const size_t anchor = static_cast<size_t>(body.data() - line.data());
  parse_prefix(line.substr(0, anchor), ev);
  if (ev.kind == EventKind::kXid) {
    parse_pid_name(rest, ev);
    ev.message = std::string(rest);
  } else {
    // Keep which switch reported it: "nvidia-nvswitch1: SXid (...)".
    const auto head = line.substr(0, anchor - kSxid.size());
    const size_t nv = head.rfind("nvidia-nvswitch");
    std::string sw =
        nv == std::string_view::npos ? std::string() : std::string(text::trim(head.substr(nv)));
    ev.message = sw.empty() ? std::string(rest) : sw + " " + std::string(rest);
  }
  ev.origin = std::string(origin) + ":" + std::to_string(line_no);
  return ev;
}

KernelLogStats parse_kernel_log_stream(std::string_view text, std::string_view origin,
                                       const EventSink& sink, std::vector<Error>* errors) {
  KernelLogStats st;
  const char* base = text.data();
  const size_t n = text.size();
  size_t pos = 0, counted = 0, line_no = 1;
  // Multi-line variant: "NVRM: The NVIDIA GPU 0000:18:00.0 ..." then, two lines later,
  // "NVRM: fallen off the bus and is not responding to commands." names no GPU itself.
  std::optional<std::string> announced_gpu;
  size_t announced_line = 0;
  // Next position of the rare byte of each anchor ('V' of "NVRM", 'X' of "SXid"); each is
  // searched again only once the scan has passed it, so the text is read about once.
  auto next_of = [&](char c, size_t from) {
    const void* p = from < n ? std::memchr(base + from, c, n - from) : nullptr;
    return p ? static_cast<size_t>(static_cast<const char*>(p) - base) : n;
  };
  size_t next_v = next_of('V', 0), next_x = next_of('X', 0);
  while (pos < n) {
    if (next_v < pos) next_v = next_of('V', pos);
    if (next_x < pos) next_x = next_of('X', pos);
    const size_t h = std::min(next_v, next_x);
    if (h >= n) break;
    const char* hit = base + h;
    const bool nvrm = *hit == 'V' && h >= 1 && text.substr(h - 1, kNvrm.size()) == kNvrm;
    const bool sxid = *hit == 'X' && h >= 1 && text.substr(h - 1, kSxid.size()) == kSxid;
    if (!nvrm && !sxid) {
      pos = h + 1;
      continue;
    }
    size_t ls = h;
    while (ls > 0 && base[ls - 1] != '\n') --ls;
    const void* nl = std::memchr(base + h, '\n', n - h);
    const size_t le = nl ? static_cast<size_t>(static_cast<const char*>(nl) - base) : n;
    line_no += text::count_newlines(base + counted, ls - counted);
    counted = ls;
    std::string_view line = text.substr(ls, le - ls);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    Error err;
    if (line.find("The NVIDIA GPU ") != std::string_view::npos) {
      announced_gpu = gpu_address_in(line);
      announced_line = line_no;
    }
    if (auto ev = parse_kernel_log_line(line, origin, line_no, &err)) {
      if (ev->kind == EventKind::kFallenOffBus && !ev->pci_bus_id && announced_gpu &&
          line_no - announced_line <= 4)
        ev->pci_bus_id = announced_gpu;
      ++st.events;
      sink(std::move(*ev));
    } else if (!err.message.empty()) {
      if (errors && st.bad_lines < kMaxLineErrors) errors->push_back(std::move(err));
      ++st.bad_lines;
    }
    pos = le + 1;
  }
  st.lines = line_no - 1 + text::count_newlines(base + counted, n - counted) +
             (n > 0 && base[n - 1] != '\n' ? 1 : 0);
  return st;
}

bool looks_like_kernel_log_line(std::string_view line) {
  Event ev;
  std::string_view s = text::trim(line);
  if (s.empty()) return false;
  if (strip_kmsg_record(s, ev)) return true;
  const auto d = strip_decode(s);
  if (d.size() != s.size()) return true;
  size_t used = 0;
  if (parse_iso_ms(s, used)) return true;
  if (s.front() == '[' && strip_bracket_time(s, ev).size() != s.size()) return true;
  // syslog "Mar  3 10:00:00 host ...".
  if (s.size() > 16 && text::month_from_abbrev(s.substr(0, 3)) != 0 && s[3] == ' ' && s[6] == ' ' &&
      s[9] == ':' && s[12] == ':')
    return true;
  return s.find(" kernel: ") != std::string_view::npos || text::starts_with(s, "NVRM: ") ||
         text::starts_with(s, "-- Logs begin") || text::starts_with(s, "-- Journal begins");
}

}  // namespace gw
