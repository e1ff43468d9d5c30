#include "sources/kmsg/kernel_log_line.h"

#include <array>
#include <cctype>
#include <optional>
#include <utility>
#include <vector>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sources/smi/text_util.h"

namespace gw::kmsg {

namespace {

using text::has;

constexpr std::string_view kSxid = "SXid (";
constexpr std::string_view kLimited = " Gb/s available PCIe bandwidth, limited by ";

bool digit(char c) {
  return c >= '0' && c <= '9';
}
// "PCI:0000:3b:00" / "0000:3b:00" / "PCI:0000:05:00.0" -> normalised id.
std::optional<std::string> pci_of(std::string_view addr) {
  addr = text::trim(addr);
  if (text::starts_with(addr, "PCI:")) addr.remove_prefix(4);
  return normalize_pci_bus_id(addr);
}

// The address token starting at s[p]: hex digits, ':' and '.'.
std::optional<std::string> address_at(std::string_view s, size_t p) {
  size_t e = p;
  while (e < s.size() &&
         (std::isxdigit(static_cast<unsigned char>(s[e])) || s[e] == ':' || s[e] == '.'))
    ++e;
  auto tok = s.substr(p, e - p);
  while (!tok.empty() && (tok.back() == ':' || tok.back() == '.')) tok.remove_suffix(1);
  if (tok.find(':') == std::string_view::npos) return std::nullopt;
  return normalize_pci_bus_id(tok);
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

void set_driver(Event& ev, DriverMessageKind k) {
  ev.kind = EventKind::kDriverMessage;
  ev.driver_kind = k;
  ev.code = static_cast<unsigned>(k);
}

// "GPU4 _kgsp..." -> 4 (the driver's own numbering).
std::optional<unsigned> driver_gpu_of(std::string_view nv) {
  if (!text::starts_with(nv, "GPU") || nv.size() < 5 || !digit(nv[3])) return std::nullopt;
  size_t i = 3;
  unsigned n = 0;
  while (i < nv.size() && digit(nv[i]) && i < 7) n = n * 10 + static_cast<unsigned>(nv[i++] - '0');
  if (i < nv.size() && nv[i] != ' ' && nv[i] != ':') return std::nullopt;
  return n;
}

void fill_times(const LogPrefix& p, Event& ev) {
  ev.time_ms = p.time_ms;
  ev.uptime_s = p.uptime_s;
  ev.time_in_year_ms = p.time_in_year_ms;
}

bool parse_xid(std::string_view line, size_t at, bool with_address, ParsedLine& r) {
  Event& ev = r.ev;
  ev.kind = EventKind::kXid;
  std::string_view rest = line.substr(at);
  if (with_address) {
    if (!parse_code_part(rest, ev)) {
      r.error = "expected 'Xid (<pci address>): <number>, ...' in a kernel log line";
      return false;
    }
  } else {
    // "NVRM: Xid: 79, ..." names no GPU.
    size_t n = 0;
    while (n < rest.size() && digit(rest[n])) ++n;
    if (n == 0 || n > 6) {
      r.error = "expected 'Xid: <number>, ...' in a kernel log line";
      return false;
    }
    ev.code = text::to_unsigned(text::parse_u64(rest.substr(0, n)));
    rest = rest.substr(n);
    if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
    rest = text::trim(rest);
  }
  parse_pid_name(rest, ev);
  ev.message = std::string(rest);
  return true;
}

// "pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:00:03.0"
void parse_aer(std::string_view body, size_t aer, Event& ev) {
  set_driver(ev, DriverMessageKind::kPcieAer);
  auto head = text::trim(body.substr(0, aer));
  if (!head.empty() && head.back() == ':') head.remove_suffix(1);
  const size_t sp = head.rfind(' ');
  ev.pci_bus_id = normalize_pci_bus_id(sp == std::string_view::npos ? head : head.substr(sp + 1));
  ev.message = std::string(text::trim(body));
}

// "INFO: task python3:1234 blocked for more than 120 seconds."
void parse_hung(std::string_view body, size_t at, Event& ev) {
  set_driver(ev, DriverMessageKind::kHungTask);
  auto rest = body.substr(at + 11);
  const size_t bl = rest.find(" blocked for more than");
  const auto who = rest.substr(0, bl);
  const size_t colon = who.rfind(':');
  if (colon != std::string_view::npos) {
    ev.process_name = std::string(who.substr(0, colon));
    if (auto pid = text::parse_u64(who.substr(colon + 1)); pid && *pid <= 0xffffffffULL)
      ev.pid = static_cast<uint32_t>(*pid);
  }
  ev.message = std::string(text::trim(body.substr(at)));
}

// "pcieport 0000:00:02.0:   device [..." -> device "0000:00:02.0", rest "device [...".
bool split_device_line(std::string_view body, std::string_view& device, std::string_view& rest) {
  const size_t sp = body.find(' ');
  if (sp == std::string_view::npos || sp > 24) return false;
  const std::string_view after = body.substr(sp + 1);
  const size_t colon = after.find(": ");
  if (colon == std::string_view::npos || colon < 7 || colon > 16) return false;
  device = after.substr(0, colon);
  if (!normalize_pci_bus_id(device)) return false;
  rest = text::trim(after.substr(colon + 2));
  return true;
}

bool is_aer_detail(std::string_view rest) {
  return text::starts_with(rest, "PCIe Bus Error:") || text::starts_with(rest, "device [") ||
         (rest.size() > 3 && rest[0] == '[' && rest.find(']') < 5) ||
         text::starts_with(rest, "broadcast error_detected") ||
         text::starts_with(rest, "TLP Header:") || text::starts_with(rest, "Error of this Agent");
}

// Another device's part in the same error: its own report, or its driver's recovery.
bool is_aer_sibling(std::string_view rest) {
  return text::starts_with(rest, "PCIe Bus Error:") ||
         rest.find("AER-aware driver") != std::string_view::npos ||
         rest.find("error_detected callback") != std::string_view::npos;
}

}  // namespace

ParsedLine aer_follow_line(std::string_view line, std::string_view device) {
  ParsedLine r;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  const std::string_view body = strip_log_prefix(line, r.prefix);
  std::string_view dev, rest;
  if (!split_device_line(body, dev, rest) || text::starts_with(rest, "AER: ")) return r;
  if (dev == device && is_aer_detail(rest)) {
    r.role = LineRole::kDriverText;
    r.body = rest;
    return r;
  }
  if (dev != device && is_aer_sibling(rest)) {
    fill_times(r.prefix, r.ev);
    parse_aer(body, static_cast<size_t>(rest.data() - body.data()), r.ev);
    r.role = LineRole::kEvent;
  }
  return r;
}

bool is_aer_line(std::string_view body) {
  std::string_view dev, rest;
  return split_device_line(body, dev, rest) &&
         (text::starts_with(rest, "AER: ") || is_aer_detail(rest) || is_aer_sibling(rest));
}

std::string_view aer_device_of(std::string_view message) {
  std::string_view dev, rest;
  return split_device_line(message, dev, rest) ? dev : std::string_view();
}

std::optional<std::string> gpu_address_in(std::string_view s) {
  size_t p = 0;
  while ((p = s.find("PCI:", p)) != std::string_view::npos) {
    p += 4;
    if (auto id = address_at(s, p)) return id;
  }
  p = 0;
  while ((p = s.find("GPU ", p)) != std::string_view::npos) {
    p += 4;
    if (auto id = address_at(s, p)) return id;
    // The old wording "NVRM: GPU at 0000:01:00.0 has fallen off the bus."
    if (s.substr(p, 3) == "at ")
      if (auto id = address_at(s, p + 3)) return id;
  }
  return std::nullopt;
}

// The status of a failed call to the GSP firmware: "_issueRpcAndWait: rpcSendMessage failed with
// status 0x0000000f for fn 76!", "rpcRmApiFree_GSP: GspRmFree failed: hClient=...;
// status=0x0000000f" (GspRmControl, GspRmAlloc alike).
std::optional<uint64_t> gsp_call_status(std::string_view t) {
  size_t at = t.find("rpcSendMessage failed with status ");
  if (at != std::string_view::npos) {
    at += 34;
  } else if ((has(t, "GspRmFree failed") || has(t, "GspRmControl failed") ||
              has(t, "GspRmAlloc failed")) &&
             (at = t.find("status=0x")) != std::string_view::npos) {
    at += 7;
  } else {
    return std::nullopt;
  }
  const std::string_view hex = t.substr(at, t.find_first_of(" ;!", at) - at);
  return text::parse_hex(hex);
}

void classify_driver_text(std::string_view t, Event& ev) {
  using K = DriverMessageKind;
  if (has(t, "requires use of the NVIDIA open kernel modules"))
    return set_driver(ev, K::kOpenModulesRequired);
  // A call to the GSP that failed says why: NV_ERR_GPU_IS_LOST (0x0f) is a GPU gone from the
  // bus (often the aftermath of an Xid 79), NV_ERR_RESET_REQUIRED (0x62) a GPU to reset,
  // NV_ERR_TIMEOUT (0x65) the firmware not answering; other statuses are driver assertions.
  if (const auto status = gsp_call_status(t)) {
    if (*status == 0x0f) {
      ev.kind = EventKind::kFallenOffBus;
      ev.driver_kind.reset();
      ev.code.reset();
      return;
    }
    if (*status == 0x62) return set_driver(ev, K::kResetRequired);  // NV_ERR_RESET_REQUIRED
    if (*status == 0x65) return set_driver(ev, K::kGspTimeout);
  }
  // "fallen off the bus", and the driver's own word that the GPU is gone
  // ("nvAssertOkFailedNoLog: ... NV_ERR_GPU_IS_LOST").
  if (has(t, "fallen off the bus") || has(t, "NV_ERR_GPU_IS_LOST")) {
    ev.kind = EventKind::kFallenOffBus;
    ev.driver_kind.reset();
    ev.code.reset();
    return;
  }
  if (has(t, "RmInitAdapter failed") || has(t, "rm_init_adapter failed"))
    return set_driver(ev, K::kInitFailed);
  // A memory-subsystem error (the sysmembar did not complete): the GPU cannot go on unreset.
  if (has(t, "NV_ERR_RESET_REQUIRED") || has(t, "Reset required") || has(t, "GspRmAlloc failed") ||
      has(t, "needs to be reset") || has(t, "need to be reset") ||
      has(t, "Memory Subsystem Error detected"))
    return set_driver(ev, K::kResetRequired);
  // GSP firmware stopped answering: its heartbeat, or an RPC (the banner the driver prints
  // before the Xid 119 it logs for it).
  if (has(t, "eartbeat timed out") || has(t, "_kgspLogRpcTimeout") || has(t, "GSP Timeout *"))
    return set_driver(ev, K::kGspTimeout);
  if (has(t, "API mismatch")) return set_driver(ev, K::kApiMismatch);
  if (has(t, "probe routine was not called") || has(t, "probe routine failed") ||
      has(t, "No NVIDIA graphics adapter") || has(t, "No NVIDIA GPU found") ||
      has(t, "No NVIDIA devices"))
    return set_driver(ev, K::kNoDeviceProbed);
  if (has(t, "FailedNoLog") || has(t, "RmInitAdapter:") || has(t, "_kgspProcessRpcEvent") ||
      has(t, "_kgspRpcGspEvent") || has(t, "_kgspBootGspRm") || has(t, "GspRmFree failed") ||
      has(t, "GspRmControl failed") || has(t, "rpcSendMessage failed") ||
      has(t, "Cannot initialize GSP") || has(t, "cannot initialize GSP") || has(t, "kgspInitRm"))
    return set_driver(ev, K::kDriverAssert);
  // Last, being rare: the driver's notice for a GPU its branch dropped or never supported, over
  // several NVRM lines ("The NVIDIA Tesla K80 GPU installed in this system is" / "supported through
  // the NVIDIA 470.xx Legacy drivers. Please" / "visit http://www.nvidia.com/object/unix.html for
  // more" / "information.  The 495.44 NVIDIA driver will ignore" / "this GPU.  Continuing
  // probe..."; older: "... is not supported by the" / "NVIDIA 470.57.02 driver release." /
  // "Please see 'Appendix A - Supported NVIDIA GPU Products'" / "in this release's README, ...").
  if (has(t, "installed in this system is") || has(t, "Legacy drivers") ||
      has(t, "object/unix.html") || has(t, "driver will ignore") || has(t, "Continuing probe") ||
      has(t, "is not supported by the") || has(t, " driver release.") ||
      has(t, "Supported NVIDIA GPU Products") || has(t, "in this release's README") ||
      has(t, "specific graphics driver download page") ||
      (text::starts_with(t, "The NVIDIA ") && text::ends_with(t, " is")))
    return set_driver(ev, K::kGpuUnsupported);
}

namespace {

// The kinds of kernel line parse_line reads, by the anchor that starts their message.
enum class Anchor { kNvrm, kSxidLine, kAer, kHung, kLimitedLine };

// line.find(kLimited), searched by its "Gb/s": a search for the leading blank stops (and
// compares 44 bytes) at every word of every line that names the driver.
size_t find_limited(std::string_view line) {
  const std::string_view tail = kLimited.substr(1);
  for (size_t at = line.find(tail); at != std::string_view::npos; at = line.find(tail, at + 1))
    if (at > 0 && line[at - 1] == ' ') return at - 1;
  return std::string_view::npos;
}

// Whether the line may hold one of anchor_of's words, by two of their bytes ("NV", "SX", "AE",
// "PC", "IN"; the bandwidth line names "PCIe"): one pass over the line, where the searches
// below walked it once each before saying no (a line named by "nvidia" alone, a sixth of a GPU
// node's log).
bool may_hold_anchor(std::string_view line) {
  const char* d = line.data();
  const size_t n = line.size();
  size_t i = 0;
#if defined(__SSE2__)
  const auto pair = [](__m128i a, __m128i b, char x, char y) {
    return _mm_and_si128(_mm_cmpeq_epi8(a, _mm_set1_epi8(x)), _mm_cmpeq_epi8(b, _mm_set1_epi8(y)));
  };
  for (; i + 17 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + i + 1));
    const __m128i m =
        _mm_or_si128(_mm_or_si128(_mm_or_si128(pair(a, b, 'N', 'V'), pair(a, b, 'S', 'X')),
                                  _mm_or_si128(pair(a, b, 'A', 'E'), pair(a, b, 'P', 'C'))),
                     pair(a, b, 'I', 'N'));
    if (_mm_movemask_epi8(m) != 0) return true;
  }
#endif
  for (; i + 1 < n; ++i) {
    const char x = d[i], y = d[i + 1];
    if ((x == 'N' && y == 'V') || (x == 'S' && y == 'X') || (x == 'A' && y == 'E') ||
        (x == 'P' && y == 'C') || (x == 'I' && y == 'N'))
      return true;
  }
  return false;
}

// Where the message starts ("NVRM:", "SXid (", "AER: ", ...) and what kind of line it is.
std::optional<std::pair<Anchor, size_t>> anchor_of(std::string_view line) {
  if (!may_hold_anchor(line)) return std::nullopt;
  size_t at = line.find("NVRM");
  if (at != std::string_view::npos && at + 4 < line.size() &&
      (line[at + 4] == ':' || line[at + 4] == ' '))
    return std::make_pair(Anchor::kNvrm, at);
  if ((at = line.find(kSxid)) != std::string_view::npos)
    return std::make_pair(Anchor::kSxidLine, at);
  if ((at = line.find("AER: ")) != std::string_view::npos ||
      (at = line.find("PCIe Bus Error: ")) != std::string_view::npos)
    return std::make_pair(Anchor::kAer, at);
  if ((at = find_limited(line)) != std::string_view::npos)
    return std::make_pair(Anchor::kLimitedLine, at);
  if ((at = line.find("INFO: task ")) != std::string_view::npos &&
      has(line.substr(at), " blocked for more than"))
    return std::make_pair(Anchor::kHung, at);
  return std::nullopt;
}

// The message after the log prefix; with something before the prefix ("> ", a prompt), tried
// again from the first bracket before the anchor.
std::string_view message_body(std::string_view line, size_t anchor, LogPrefix& prefix) {
  std::string_view body = strip_log_prefix(line, prefix);
  if (prefix.recognised) return body;
  const size_t br = line.find('[');
  if (br == std::string_view::npos || br >= anchor) return body;
  LogPrefix p2;
  const auto b2 = strip_log_prefix(line.substr(br), p2);
  if (!p2.recognised) return body;
  prefix = p2;
  return b2;
}

// "nvidia-nvswitch1: SXid (PCI:...): 20034, ..." (the switch that reported it is kept).
void parse_sxid_line(std::string_view body, size_t bat, ParsedLine& r) {
  r.ev.kind = EventKind::kSXid;
  std::string_view rest = body.substr(bat + kSxid.size());
  if (!parse_code_part(rest, r.ev)) {
    r.role = LineRole::kBad;
    r.error = "expected 'SXid (<pci address>): <number>, ...' in a kernel log line";
    return;
  }
  const auto head = body.substr(0, bat);
  const size_t nv = head.rfind("nvidia-nvswitch");
  std::string sw =
      nv == std::string_view::npos ? std::string() : std::string(text::trim(head.substr(nv)));
  r.ev.message = sw.empty() ? std::string(rest) : sw + " " + std::string(rest);
  r.role = LineRole::kEvent;
}

// "pci 0000:04:00.0: 252.048 Gb/s available PCIe bandwidth, limited by ..."
void parse_limited_line(std::string_view body, size_t bat, ParsedLine& r) {
  set_driver(r.ev, DriverMessageKind::kPcieLinkLimited);
  const auto head = body.substr(0, bat);
  const size_t colon = head.find(": ");
  const auto dev = head.substr(0, colon);
  const size_t sp = dev.rfind(' ');
  r.ev.pci_bus_id = normalize_pci_bus_id(sp == std::string_view::npos ? dev : dev.substr(sp + 1));
  r.ev.message = std::string(body);
  r.role = LineRole::kEvent;
}

// An NVRM line: an Xid, or the driver's own text classified (event, GPU announcement, text).
void parse_nvrm_line(std::string_view line, std::string_view body, size_t bat, ParsedLine& r) {
  std::string_view nv = text::trim(body.substr(bat + 4));
  if (!nv.empty() && nv.front() == ':') nv = text::trim(nv.substr(1));
  if (text::starts_with(nv, "Xid (") || text::starts_with(nv, "Xid: ")) {
    const bool addr = nv[3] == ' ';
    const size_t x = static_cast<size_t>(nv.data() - line.data()) + 5;
    r.role = parse_xid(line, x, addr, r) ? LineRole::kEvent : LineRole::kBad;
    return;
  }
  r.body = nv;
  r.ev.driver_gpu = driver_gpu_of(nv);
  r.ev.pci_bus_id = gpu_address_in(nv);
  r.ev.message = std::string(nv);
  classify_driver_text(nv, r.ev);
  if (r.ev.kind == EventKind::kFallenOffBus || r.ev.driver_kind)
    r.role = LineRole::kEvent;
  else if (text::starts_with(nv, "The NVIDIA GPU ") && r.ev.pci_bus_id)
    r.role = LineRole::kAnnounce;
  else
    r.role = LineRole::kDriverText;
}

}  // namespace

ParsedLine parse_line(std::string_view line) {
  ParsedLine r;
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  const auto anchor = anchor_of(line);
  if (!anchor) return r;
  const auto [kind, at] = *anchor;
  const std::string_view body = message_body(line, at, r.prefix);
  const size_t off = static_cast<size_t>(body.data() - line.data());
  if (at < off) {
    // The prefix swallowed the anchor (a host named "NVRM:x", found by fuzz_kernel_log): only
    // the message after the prefix can hold the GPU text. off > at >= 0, so this ends.
    ParsedLine inner = parse_line(body);
    inner.prefix = r.prefix;
    fill_times(r.prefix, inner.ev);
    return inner;
  }
  const size_t bat = at - off;  // the anchor's position inside body
  fill_times(r.prefix, r.ev);
  switch (kind) {
    case Anchor::kSxidLine:
      parse_sxid_line(body, bat, r);
      break;
    case Anchor::kAer:
      parse_aer(body, bat, r.ev);
      r.role = LineRole::kEvent;
      break;
    case Anchor::kHung:
      parse_hung(body, bat, r.ev);
      r.role = LineRole::kEvent;
      break;
    case Anchor::kLimitedLine:
      parse_limited_line(body, bat, r);
      break;
    case Anchor::kNvrm:
      parse_nvrm_line(line, body, bat, r);
      break;
  }
  return r;
}

namespace {

bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '(' || c == ')' ||
         c == '[' || c == ']' || c == '#' || c == '.';
}

bool is_number(std::string_view v) {
  if (v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
    return v.substr(2).find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
  return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_name(std::string_view v) {
  if (v.empty()) return false;
  for (char c : v)
    if (!is_ident_char(c)) return false;
  return true;
}

// "name:0x1f", "name=0x1f", "name=12": one register or field and its value.
bool is_pair(std::string_view t) {
  const size_t sep = t.find_first_of(":=");
  return sep != std::string_view::npos && sep > 0 && is_name(t.substr(0, sep)) &&
         is_number(t.substr(sep + 1));
}

// Every word a value, a name=value pair, or a name followed by "= value"; at least one value.
bool is_value_list(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
    const size_t b = i;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != ',') ++i;
    if (i > b) words.push_back(s.substr(b, i - b));
  }
  bool value = false;
  for (size_t k = 0; k < words.size(); ++k) {
    const std::string_view w = words[k];
    if (is_pair(w)) {
      value = true;
    } else if (w == "=" && k > 0 && k + 1 < words.size() && is_number(words[k + 1])) {
      value = true;
      ++k;
    } else if (!(is_name(w) && k + 1 < words.size() && words[k + 1] == "=")) {
      return false;
    }
  }
  return value;
}

}  // namespace

bool is_driver_dump_line(std::string_view line) {
  const size_t nvrm = line.find("NVRM: ");
  if (nvrm == std::string_view::npos) return false;
  std::string_view s = text::trim(line.substr(nvrm + 6));
  // "GPU0 " and a function name: "kfspDumpDebugState_GH100: ..."
  if (s.size() > 4 && text::starts_with(s, "GPU") && text::is_digit(s[3]))
    s = text::trim(s.substr(s.find(' ') == std::string_view::npos ? s.size() : s.find(' ')));
  if (const size_t colon = s.find(": "); colon != std::string_view::npos &&
                                         s.substr(0, colon).find(' ') == std::string_view::npos &&
                                         s.substr(0, colon).find('_') != std::string_view::npos)
    s = text::trim(s.substr(colon + 2));
  if (s.empty()) return false;
  // The dump's headers: "RISC-V CSR State:", "Reported by libos partition:2#4 kernel v3.1 ...",
  // "Sent following content to FSP:", the GPU a dump is of ("GPU 0000:01:00").
  if (text::ends_with(s, " State:") || text::starts_with(s, "Reported by libos") ||
      text::starts_with(s, "Sent following content to"))
    return true;
  if (text::starts_with(s, "GPU ") && s.size() <= 20 && gpu_address_in(s)) return true;
  return is_value_list(s);
}

}  // namespace gw::kmsg
