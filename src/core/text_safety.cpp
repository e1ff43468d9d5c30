#include "core/text_safety.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "core/finding.h"
#include "core/observation.h"

namespace gw {
namespace {

struct Decoded {
  uint32_t cp = 0;
  size_t len = 1;  // bytes consumed: the sequence, or the maximal invalid prefix
  bool ok = false;
};

bool cont(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

// One code point at s[i], per the Unicode "maximal subpart" rule for what an invalid
// sequence consumes (so replacement is the same as in browsers and Python).
Decoded decode(std::string_view s, size_t i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) return {b0, 1, true};
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  uint32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 1;
    cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 2;
    cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;  // overlong
    if (b0 == 0xED) hi = 0x9F;  // surrogates
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 3;
    cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;  // overlong
    if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return {0xFFFD, 1, false};
  }
  size_t k = 1;
  for (; k <= need; ++k) {
    if (i + k >= s.size()) return {0xFFFD, k, false};
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (c < lo || c > hi) : !cont(c)) return {0xFFFD, k, false};
    cp = (cp << 6) | (c & 0x3Fu);
  }
  return {cp, k, true};
}

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the escape sequence starting with ESC at s[i] (at least 1).
size_t escape_length(std::string_view s, size_t i) {
  size_t j = i + 1;
  if (j >= s.size()) return 1;
  const char c = s[j];
  if (c == '[') {  // CSI: parameters, intermediates, one final byte
    ++j;
    while (j < s.size() && s[j] >= 0x20 && s[j] <= 0x3F) ++j;
    if (j < s.size() && s[j] >= 0x40 && s[j] <= 0x7E) ++j;
    return j - i;
  }
  if (c == ']' || c == 'P' || c == 'X' || c == '^' || c == '_') {  // strings to BEL or ST
    for (++j; j < s.size(); ++j) {
      if (s[j] == '\a') return j + 1 - i;
      if (s[j] == '\x1b' && j + 1 < s.size() && s[j + 1] == '\\') return j + 2 - i;
    }
    return s.size() - i;
  }
  while (j < s.size() && s[j] >= 0x20 && s[j] <= 0x2F) ++j;  // nF intermediates
  if (j < s.size() && s[j] >= 0x30 && s[j] <= 0x7E) ++j;
  return j - i;
}

void append_utf8(std::string& out, std::string_view s, size_t i, const Decoded& d) {
  if (d.ok)
    out.append(s.substr(i, d.len));
  else
    out.append(kReplacement);
}

void fix(std::string& s) {
  s = terminal_safe(s);
}
void fix(std::optional<std::string>& s) {
  if (s) fix(*s);
}
void fix(Error& e) {
  fix(e.code);
  fix(e.message);
  fix(e.where);
}
template <class T>
void fix_all(std::vector<T>& v) {
  for (auto& x : v) fix(x);
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const Decoded d = decode(s, i);
    if (!d.ok) return false;
    i += d.len;
  }
  return true;
}

std::string repair_utf8(std::string_view s) {
  if (valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 8);
  for (size_t i = 0; i < s.size();) {
    const Decoded d = decode(s, i);
    append_utf8(out, s, i, d);
    i += d.len;
  }
  return out;
}

std::string terminal_safe(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const Decoded d = decode(s, i);
    if (d.ok && d.cp == 0x1B) {
      i += escape_length(s, i);
      continue;
    }
    const bool control = d.ok && ((d.cp < 0x20 && d.cp != '\t' && d.cp != '\n') || d.cp == 0x7F ||
                                  (d.cp >= 0x80 && d.cp <= 0x9F));
    if (!control) append_utf8(out, s, i, d);
    i += d.len;
  }
  return out;
}

std::string dump_json(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}
std::string dump_json(const nlohmann::ordered_json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void make_terminal_safe(Snapshot& s) {
  fix(s.source);
  fix(s.hostname);
  fix(s.driver_version);
  fix(s.nvml_version);
  for (GpuState& g : s.gpus) {
    fix(g.info.name);
    fix(g.info.uuid);
    fix(g.info.serial);
    fix(g.info.pci_bus_id);
    fix(g.info.architecture);
    fix(g.info.vbios_version);
    fix_all(g.errors);
    if (g.sample.processes)
      for (ProcessInfo& p : *g.sample.processes) fix(p.name);
  }
}

void make_terminal_safe(Finding& f) {
  fix(f.code);
  fix(f.pci_bus_id);
  fix(f.title);
  fix_all(f.evidence);
  fix(f.remedy);
}

void make_terminal_safe(Observation& o) {
  for (Snapshot& s : o.samples) make_terminal_safe(s);
  for (Event& e : o.events) {
    fix(e.pci_bus_id);
    fix(e.process_name);
    fix(e.message);
    fix(e.origin);
  }
  if (o.host) {
    HostFacts& h = *o.host;
    fix(h.kernel_module_version);
    for (PciDeviceFacts& p : h.nvidia_pci_devices) {
      fix(p.pci_bus_id);
      fix(p.device_id);
      fix(p.driver);
    }
    for (ProcessCpuFacts& p : h.gpu_processes) fix(p.name);
    for (CudaInstall& c : h.cuda_toolkits) {
      fix(c.path);
      fix(c.version);
    }
    for (FrameworkRuntime& f : h.frameworks) {
      fix(f.name);
      fix(f.version);
      fix(f.cuda);
      fix(f.path);
    }
    for (auto& [k, v] : h.env) fix(v);
  }
  if (o.topology) {
    fix_all(o.topology->gpu_names);
    for (auto& row : o.topology->links) fix_all(row);
    for (auto& a : o.topology->cpu_affinity) fix(a);
  }
  if (o.source_error) fix(*o.source_error);
  fix_all(o.input_errors);
  for (EventCount& c : o.event_counts) fix(c.pci_bus_id);
  fix_all(o.notes);
  for (AppMessage& m : o.app_messages) {
    fix(m.framework);
    fix(m.cuda_runtime_version);
    fix(m.driver_version);
    fix(m.text);
    fix(m.origin);
  }
  for (InputCoverage& c : o.coverage) {
    fix(c.origin);
    fix_all(c.formats);
    fix_all(c.incomplete_reasons);
  }
}

}  // namespace gw
