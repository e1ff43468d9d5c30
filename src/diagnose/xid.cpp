// Kernel-log rules: every Xid through the catalog (meaning, likely cause, action), counted and
// split into bursts per GPU; NVSwitch SXids; and GPUs lost, hung or needing a reset.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "diagnose/context.h"
#include "diagnose/kernel_events.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// Xids closer together than this belong to one incident (the driver prints 13/31/119 in
// bursts: one fault, many lines).
constexpr double kBurstGapS = 60.0;
// A follow-up Xid (45 after a fatal one, 137 beside an NVLink Xid) within this of its root is
// part of the root's incident; without comparable times, within this many log events.
constexpr double kFollowS = 60.0;
constexpr size_t kFollowEvents = 50;
constexpr unsigned kXidGraphics = 13;
constexpr unsigned kXidStopped = 43;
constexpr unsigned kXidCleanup = 45;
constexpr unsigned kXidFallenOffBus = 79;
constexpr unsigned kXidNvlinkPriv = 137;
constexpr unsigned kXidRecovery = 154;

std::optional<double> event_time_s(const Event& e) {
  if (e.time_ms) return static_cast<double>(*e.time_ms) / 1000.0;
  if (e.uptime_s) return *e.uptime_s;
  if (e.time_in_year_ms) return static_cast<double>(*e.time_in_year_ms) / 1000.0;
  return std::nullopt;
}

size_t count_bursts(const EventGroup& g) {
  size_t bursts = 0;
  std::optional<double> prev;
  for (const Event* e : g.events) {
    const auto t = event_time_s(*e);
    if (!t) return 0;  // no times: bursts unknown
    if (!prev || *t - *prev > kBurstGapS) ++bursts;
    prev = t;
  }
  return bursts;
}

std::string who(const EventGroup& g) {
  return gpu_words(g.gpu, g.pci_bus_id);
}

std::string processes(const EventGroup& g) {
  std::set<std::string> names;
  // A big log keeps thousands of lines of one process: each (name, pid) is formatted once.
  std::set<std::pair<std::string_view, std::optional<uint32_t>>> seen;
  for (const Event* e : g.events) {
    if (e->process_name && *e->process_name != "<unknown>" &&
        seen.emplace(*e->process_name, e->pid).second) {
      names.insert(e->pid ? fmt::format("{} (pid {})", *e->process_name, *e->pid)
                          : *e->process_name);
    }
    if (names.size() > 5) break;
  }
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string action_text(std::string_view action) {
  if (action == "none") return "No action needed on its own.";
  if (action == "monitor") return "Keep watching; act if it repeats or grows.";
  if (action == "restart app") return "Restart the affected job.";
  if (action == "check app") return "Check the application (its CUDA version and code).";
  if (action == "reset GPU")
    return "Reset the GPU once no job uses it (sudo nvidia-smi -r -i <gpu>) or reboot the node.";
  if (action == "reboot") return "Reboot the node.";
  if (action == "drain node & reset GPU")
    return "Drain the node (stop scheduling jobs on it), restart the affected jobs elsewhere, "
           "then reset the GPU (sudo nvidia-smi -r -i <gpu>).";
  if (action == "drain node & reboot") return "Drain the node, then reboot or power-cycle it.";
  if (action == "drain node & RMA")
    return "Drain the node and open a replacement (RMA) case with the vendor.";
  if (action == "check cabling/power") return "Check the GPU's power cables and the PSU.";
  if (action == "contact support") return "Contact NVIDIA or the system vendor's support.";
  return fmt::format("Recommended action: {}.", action);
}

std::string remedy_for(const XidInfo* x, XidCause cause, const EventGroup& g) {
  std::string r = action_text(x ? x->action : "monitor");
  if (cause == XidCause::kApplication) {
    r += " This is usually a bug in the program (bad address, illegal instruction): run it under "
         "compute-sanitizer or with CUDA_LAUNCH_BLOCKING=1 to find the kernel.";
    if (g.total > 1)
      r += " If it keeps recurring on this GPU with different programs, run DCGM diagnostics "
           "(dcgmi diag -r 3) or move the job to another GPU to rule out the hardware.";
  } else if (cause == XidCause::kMemory) {
    r += " Then check ECC and row-remapping status (nvidia-smi -q -d ECC,ROW_REMAPPER); a "
         "remapping failure (Xid 64) means replace the GPU.";
  } else if (cause == XidCause::kHardware || cause == XidCause::kNvLink) {
    r += " If it recurs after a reset, run dcgmi diag -r 3 and contact the vendor.";
  }
  return r;
}

Severity xid_severity(const XidInfo* x, const EventGroup& g) {
  if (!x) return Severity::kWarning;  // unknown Xid: warn rather than drop it
  if (x->xid >= 144 && x->xid <= 149) {
    // NVLink5: the kernel's line says Fatal or Nonfatal; a reading that says neither (another
    // monitor's restatement, a cut line) is a warning until the kernel's line is seen.
    const auto says = [&](std::string_view word) {
      return std::any_of(g.events.begin(), g.events.end(), [&](const Event* e) {
        return e->message.find(word) != std::string::npos;
      });
    };
    if (says(" Fatal")) return Severity::kCritical;
    return says(" Nonfatal") ? Severity::kInfo : Severity::kWarning;
  }
  if (x->severity == "critical") return Severity::kCritical;
  if (x->severity == "warning" || x->severity == "error") return Severity::kWarning;
  return Severity::kInfo;
}

// "Solo: RESTART_FM; Not Solo: IGNORE (follow other Xid)" -> the part for this case.
std::string_view solo_part(std::string_view text, bool solo) {
  const size_t not_solo = text.find("Not Solo:");
  if (not_solo == std::string_view::npos) return text;
  if (!solo) return trim_text(text.substr(not_solo + 9));
  const size_t s = text.find("Solo:");
  if (s == std::string_view::npos || s >= not_solo) return text;
  auto part = trim_text(text.substr(s + 5, not_solo - s - 5));
  if (!part.empty() && part.back() == ';') part.remove_suffix(1);
  return part;
}

// NVIDIA's catalog for this Xid: what to do now and after, and its notes.
void add_catalog(const XidInfo* x, bool solo, std::vector<std::string>& ev) {
  if (!x) return;
  auto bucket = [](std::string_view b) {
    b = trim_text(b);
    const size_t sp = b.find_first_of(" (");
    const auto head = b.substr(0, sp);
    return nvidia_action_words(head) + " (" + std::string(b) + ")";
  };
  std::string line = "NVIDIA catalog: now " + bucket(solo_part(x->immediate_action, solo));
  const auto then = solo_part(x->investigatory_action, solo);
  if (!trim_text(then).empty() && trim_text(then) != "N/A" &&
      trim_text(then) != trim_text(solo_part(x->immediate_action, solo)))
    line += "; then " + bucket(then);
  ev.push_back(std::move(line));
  if (!x->notes.empty()) ev.push_back("notes: " + std::string(x->notes.substr(0, 240)));
}

// Driver lines about the same GPU that say it needs a reset ("The GPU likely needs to be
// reset").
void add_driver_notes(const DiagnoseContext& c, const EventGroup& g, std::vector<std::string>& ev) {
  for (const EventGroup& d : c.groups) {
    if (d.kind != EventKind::kDriverMessage || d.gpu != g.gpu || d.pci_bus_id != g.pci_bus_id)
      continue;
    for (const Event* e : d.events) {
      if (e->driver_kind == DriverMessageKind::kResetRequired) {
        ev.push_back("driver: " + e->message.substr(0, 160));
        return;
      }
    }
  }
}

// Xid 94/95 say whether the driver wants a reset: "RST: No, D-RST: No".
void add_reset_flags(const EventGroup& g, std::vector<std::string>& ev) {
  for (const Event* e : g.events) {
    const size_t r = e->message.find("RST: ");
    if (r == std::string::npos || (r > 0 && e->message[r - 1] == '-')) continue;
    const bool yes = e->message.compare(r + 5, 3, "Yes") == 0;
    ev.push_back(yes ? "driver: GPU reset required (RST: Yes)"
                     : "driver: no GPU reset required for it (RST: No)");
    return;
  }
}

// Xid 13 names the SM: "(GPC 8, TPC 5, SM 0)". NVIDIA's Xid 13 workflow: one location that
// keeps failing (across programs) points at the hardware, scattered locations at the program.
void add_sm_locations(const EventGroup& g, std::vector<std::string>& ev) {
  std::map<std::string, size_t> where;
  for (const Event* e : g.events) {
    const size_t p = e->message.find("(GPC ");
    if (p == std::string::npos) continue;
    const size_t q = e->message.find(')', p);
    if (q == std::string::npos) continue;
    ++where[e->message.substr(p, q - p + 1)];
  }
  if (where.empty()) return;
  const auto top = std::max_element(
      where.begin(), where.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string line = fmt::format("SM locations: {} distinct; most often {} ({} line(s))",
                                 where.size(), top->first, top->second);
  if (where.size() == 1 && g.events.size() > 3)
    line +=
        ": one location in every line; if different programs hit it, NVIDIA's Xid 13 "
        "workflow treats it as the GPU (run dcgmi diag -r 3)";
  else if (where.size() > 1)
    line += ": scattered locations point at the program rather than the GPU";
  ev.push_back(std::move(line));
}

Finding xid_finding(const DiagnoseContext& c, const EventGroup& g, const XidInfo* x, XidCause cause,
                    bool solo = true) {
  const std::string name = x ? std::string(x->short_name) : "unknown Xid";
  std::vector<std::string> ev;
  const size_t bursts = count_bursts(g);
  const bool trimmed = g.total > g.events.size();
  std::string burst_text;
  if (bursts > 0 && !trimmed) burst_text = fmt::format(" in {} burst(s)", bursts);
  if (bursts > 0 && trimmed)
    burst_text = fmt::format(" ({} burst(s) in the first {} kept)", bursts, g.events.size());
  Event last = *g.events.back();
  if (trimmed && (g.last_time_ms || g.last_uptime_s)) {
    last.time_ms = g.last_time_ms;
    last.uptime_s = g.last_uptime_s;
  }
  if (event_time_s(*g.events.front()))
    ev.push_back(fmt::format("{} line(s){}, first {}, last {}", g.total, burst_text,
                             event_when(*g.events.front()), event_when(last)));
  else
    ev.push_back(fmt::format("{} line(s) (no times in the log), first at {}", g.total,
                             g.events.front()->origin));
  if (x) ev.push_back(fmt::format("meaning: {}", x->meaning));
  ev.push_back(fmt::format("likely cause: {}", xid_cause_name(cause)));
  if (auto p = processes(g); !p.empty()) ev.push_back("processes: " + p);
  ev.push_back(fmt::format("log: {}", g.events.front()->message.substr(0, 160)));
  add_reset_flags(g, ev);
  add_driver_notes(c, g, ev);
  if (g.code == kXidGraphics) add_sm_locations(g, ev);
  add_catalog(x, solo, ev);
  Finding f;
  f.code =
      fmt::format("xid.{}", cause == XidCause::kThermalPower ? "thermal_power"
                                                             : std::string(xid_cause_name(cause)));
  f.severity = xid_severity(x, g);
  f.gpu = g.gpu;
  f.pci_bus_id = g.pci_bus_id;
  f.title = fmt::format("Xid {} on {}: {}", g.code, who(g), name);
  f.evidence = std::move(ev);
  f.remedy = remedy_for(x, cause, g);
  return f;
}

// ---- follow-up Xids: 45 after another Xid, 137 beside an NVLink Xid --------------------

struct XidIndex {
  const DiagnoseContext& c;
  DriverGpuMap drivers;
  std::vector<std::string> keys;  // per obs.events index (Xid events only)

  explicit XidIndex(const DiagnoseContext& ctx) : c(ctx), drivers(driver_gpu_map(ctx)) {
    keys.resize(c.obs.events.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (c.obs.events[i].kind == EventKind::kXid) keys[i] = gpu_key(c, c.obs.events[i], drivers);
    }
  }
  size_t index(const Event* e) const { return static_cast<size_t>(e - c.obs.events.data()); }
};

struct Root {
  unsigned code = 0;
  const Event* ev = nullptr;  // the root's line, when the log has it
  bool stated = false;        // the line itself says "caused by previous Xid N"
};

// "... caused by previous Xid 149" -> 149.
std::optional<unsigned> stated_root(std::string_view msg) {
  const size_t p = msg.find("caused by previous Xid ");
  if (p == std::string_view::npos) return std::nullopt;
  return leading_uint(msg.substr(p + 23));
}

bool can_be_root(const Event& e) {
  if (e.kind != EventKind::kXid || !e.code) return false;
  const unsigned x = *e.code;
  if (x == kXidCleanup || x == kXidStopped || x == kXidRecovery || x == kXidNvlinkPriv)
    return false;
  const XidInfo* info = lookup_xid(x);
  return !info || info->severity != "info";
}

bool is_nvlink(const Event& e) {
  if (e.kind != EventKind::kXid || !e.code) return false;
  const XidInfo* info = lookup_xid(*e.code);
  return info && info->cause == XidCause::kNvLink;
}

// "Link 08" / "link 1" -> the link number.
std::optional<int> link_of(std::string_view msg) {
  for (std::string_view tag : {"Link ", "link "}) {
    for (size_t p = msg.find(tag); p != std::string_view::npos; p = msg.find(tag, p + 1)) {
      if (auto v = leading_int(msg.substr(p + tag.size()))) return v;
    }
  }
  return std::nullopt;
}

bool near_in_time(const Event& root, const Event& e, bool before_only) {
  const auto gap = seconds_between(root, e);
  if (!gap) return true;  // no comparable times: the event window decides
  return (before_only ? *gap >= -1.0 : *gap >= -kFollowS) && *gap <= kFollowS;
}

std::optional<Root> root_of(const XidIndex& ix, const Event& e) {
  const auto& events = ix.c.obs.events;
  const size_t i = ix.index(&e);
  if (e.code == kXidCleanup) {
    if (auto n = stated_root(e.message)) {
      Root r{*n, nullptr, true};
      for (size_t j = i; j-- > (i > kFollowEvents * 20 ? i - kFollowEvents * 20 : 0);) {
        if (events[j].code == *n && events[j].kind == EventKind::kXid) {
          r.ev = &events[j];
          break;
        }
      }
      return r;
    }
    for (size_t j = i, k = 0; j-- > 0 && k < kFollowEvents; ++k) {
      const Event& o = events[j];
      if (ix.keys[j] != ix.keys[i] || !can_be_root(o)) continue;
      if (!near_in_time(o, e, true)) return std::nullopt;
      return Root{*o.code, &o, false};
    }
    return std::nullopt;
  }
  if (e.code == kXidNvlinkPriv) {
    const auto link = link_of(e.message);
    const size_t lo = i > kFollowEvents ? i - kFollowEvents : 0;
    const size_t hi = std::min(events.size(), i + kFollowEvents);
    for (size_t j = lo; j < hi; ++j) {
      const Event& o = events[j];
      if (j == i || ix.keys[j] != ix.keys[i] || !is_nvlink(o) || !near_in_time(o, e, false))
        continue;
      const auto olink = link_of(o.message);
      if (link && olink && *link != *olink) continue;
      return Root{*o.code, &o, false};
    }
  }
  return std::nullopt;
}

// Splits a 45/137 group into lines with a root and solo lines.
void split_follow_ups(const XidIndex& ix, const EventGroup& g, EventGroup& solo,
                      std::map<unsigned, std::pair<EventGroup, Root>>* by_root) {
  solo = g;
  solo.events.clear();
  for (const Event* e : g.events) {
    auto r = root_of(ix, *e);
    if (!r) {
      solo.events.push_back(e);
      continue;
    }
    if (!by_root) continue;
    auto [it, fresh] = by_root->try_emplace(r->code);
    if (fresh) {
      it->second.first = g;
      it->second.first.events.clear();
      it->second.second = *r;
    }
    it->second.first.events.push_back(e);
    if (!it->second.second.ev && r->ev) it->second.second.ev = r->ev;
  }
  const bool all_solo = solo.events.size() == g.events.size();
  solo.total = all_solo ? g.total : solo.events.size();
  if (by_root) {
    for (auto& [code, gr] : *by_root) gr.first.total = gr.first.events.size();
    if (solo.events.empty() && by_root->size() == 1) by_root->begin()->second.first.total = g.total;
  }
}

// A solo Xid 45: a process was stopped while its work was on the GPU; nothing is wrong with
// the GPU or, by this alone, the program.
Finding solo_cleanup_finding(const DiagnoseContext& c, const EventGroup& g, const XidInfo* x) {
  Finding f = xid_finding(c, g, x, XidCause::kApplication, true);
  f.severity = Severity::kInfo;
  f.title =
      fmt::format("Xid 45 on {}: a process was stopped (its GPU channels were torn down)", who(g));
  f.remedy =
      "Nothing is wrong with the GPU: a process was killed or exited (Ctrl-C, OOM killer, "
      "scheduler preemption, a crash elsewhere) while it had work on the GPU. If the job was not "
      "meant to stop, find out why it was killed. On NVSwitch systems, repeated solo Xid 45 "
      "lines call for restarting the Fabric Manager (sudo systemctl restart nvidia-fabricmanager).";
  return f;
}

// An unrecovered PCIe error ("AER: can't recover", "device recovery failed", a fatal one) on
// the group's own GPU before its first line: what the GPU did after its link failed (a page
// fault of a process, channels torn down) is that failure's consequence, not the program's.
const Event* link_failure_before(const DiagnoseContext& c, const EventGroup& g) {
  if (!g.pci_bus_id || g.events.empty()) return nullptr;
  const std::string dev = pci_device(*g.pci_bus_id);
  const Event& first = *g.events.front();
  const auto line_of = [](const Event& e) {
    const size_t colon = e.origin.rfind(':');
    return std::make_pair(e.origin.substr(0, colon), leading_uint(e.origin.substr(colon + 1)));
  };
  for (const Event& e : c.obs.events) {
    if (e.kind != EventKind::kDriverMessage || e.driver_kind != DriverMessageKind::kPcieAer ||
        !e.pci_bus_id || pci_device(*e.pci_bus_id) != dev)
      continue;
    if (!aer_unrecovered(e.message)) continue;
    if (const auto gap = seconds_between(e, first)) {
      if (*gap >= 0 && *gap <= 600) return &e;
      continue;
    }
    const auto [ef, el] = line_of(e);
    const auto [gf, gl] = line_of(first);
    if (ef == gf && el && gl && *el < *gl) return &e;
  }
  return nullptr;
}

void xids_of(const DiagnoseContext& c, XidCause want, Findings& out) {
  std::optional<XidIndex> ix;
  for (const EventGroup& g : c.groups) {
    if (g.kind != EventKind::kXid || g.code == kXidFallenOffBus || g.code == kXidRecovery) continue;
    const XidInfo* x = lookup_xid(g.code);
    const XidCause cause = x ? x->cause : XidCause::kOther;
    if (cause != want) continue;
    if (g.code == kXidCleanup || g.code == kXidNvlinkPriv) {
      if (!ix) ix.emplace(c);
      EventGroup solo;
      split_follow_ups(*ix, g, solo, nullptr);
      if (solo.events.empty()) continue;  // all of them belong to another Xid (xid.consequence)
      out.push_back(g.code == kXidCleanup ? solo_cleanup_finding(c, solo, x)
                                          : xid_finding(c, solo, x, cause));
      continue;
    }
    Finding f = xid_finding(c, g, x, cause);
    if (const Event* link = cause == XidCause::kApplication ? link_failure_before(c, g) : nullptr) {
      f.severity = Severity::kInfo;
      f.title += " (after the GPU's PCIe link failed)";
      f.evidence.insert(f.evidence.begin(),
                        fmt::format("follows an unrecovered PCIe error on the same GPU at {}: "
                                    "{}; the link failure, not the program, is the likely cause "
                                    "(see pcie.aer_errors)",
                                    event_when(*link), link->message.substr(0, 120)));
    }
    out.push_back(std::move(f));
  }
}

}  // namespace

void rule_xid_application(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kApplication, out);
}
void rule_xid_driver(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kDriver, out);
}
void rule_xid_hardware(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kHardware, out);
}
void rule_xid_memory(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kMemory, out);
}
void rule_xid_nvlink(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kNvLink, out);
}
void rule_xid_thermal_power(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kThermalPower, out);
}
void rule_xid_other(const DiagnoseContext& c, Findings& out) {
  xids_of(c, XidCause::kOther, out);
}

namespace {

// A root the log names but does not hold (the driver says "caused by previous Xid 149", the
// 149 line was cut or rotated away): the consequence is then the only evidence of the root, so
// it carries the root's weight. NVLink5 roots (144-149) say Fatal/Nonfatal only in their own
// line; channels torn down by one mean work was lost, so at least a warning.
Severity absent_root_severity(const XidInfo* rx) {
  if (rx && rx->severity == "critical" && !(rx->xid >= 144 && rx->xid <= 149))
    return Severity::kCritical;
  return Severity::kWarning;
}

Finding consequence_finding(const EventGroup& g, const EventGroup& sub, unsigned root_code,
                            const Root& root) {
  const XidInfo* rx = lookup_xid(root_code);
  const std::string root_name =
      fmt::format("Xid {} ({})", root_code, rx ? rx->short_name : "unknown Xid");
  const bool cleanup = g.code == kXidCleanup;
  Finding f;
  f.code = "xid.consequence";
  f.severity = root.ev ? Severity::kInfo : absent_root_severity(rx);
  f.gpu = g.gpu;
  f.pci_bus_id = g.pci_bus_id;
  if (!root.ev)
    f.title = fmt::format("{} on {}: the root of Xid {} ({} line(s)); its own line is not here",
                          root_name, who(g), g.code, sub.total);
  else if (cleanup)
    f.title = fmt::format("Xid 45 on {}: channels torn down because of {}", who(g), root_name);
  else
    f.title = fmt::format("Xid 137 on {}: part of the NVLink incident of {}", who(g), root_name);
  f.evidence.push_back(fmt::format("{} line(s), first {}, last {}", sub.total,
                                   event_when(*sub.events.front()),
                                   event_when(*sub.events.back())));
  if (root.stated)
    f.evidence.push_back(fmt::format("the driver says: caused by previous Xid {}", root_code));
  if (root.ev)
    f.evidence.push_back(fmt::format("root: {} at {}: {}", root_name, event_when(*root.ev),
                                     root.ev->message.substr(0, 120)));
  else
    f.evidence.push_back("root: " + root_name + " (its line is not in this log)");
  if (rx && !root.ev) f.evidence.push_back(fmt::format("meaning of the root: {}", rx->meaning));
  if (auto p = processes(sub); !p.empty()) f.evidence.push_back("processes: " + p);
  if (!cleanup) {
    if (auto l = link_of(sub.events.front()->message))
      f.evidence.push_back(fmt::format("link {}", *l));
  }
  if (!root.ev) {
    f.remedy = fmt::format(
        "Treat it as {}: {} Find that Xid's own line in the full log (journalctl -k, "
        "nvidia-bug-report.sh) for its details; Xid {} itself needs nothing.",
        root_name, rx ? action_text(rx->action) : action_text("monitor"), g.code);
  } else if (cleanup) {
    f.remedy = fmt::format(
        "Nothing to do for Xid 45 itself: the driver stopped these channels because of {}. "
        "Act on that Xid's finding for this GPU; the program is not at fault for this line.",
        root_name);
  } else {
    f.remedy = fmt::format(
        "Treat it with the NVLink incident ({}): follow the NVLink finding for this GPU, not an "
        "application fix.",
        root_name);
  }
  return f;
}

}  // namespace

// Follow-up Xids (45, 137) reported with their root, one finding per GPU and root.
void rule_xid_consequence(const DiagnoseContext& c, Findings& out) {
  std::optional<XidIndex> ix;
  for (const EventGroup& g : c.groups) {
    if (g.kind != EventKind::kXid || (g.code != kXidCleanup && g.code != kXidNvlinkPriv)) continue;
    if (!ix) ix.emplace(c);
    EventGroup solo;
    std::map<unsigned, std::pair<EventGroup, Root>> by_root;
    split_follow_ups(*ix, g, solo, &by_root);
    for (const auto& [root_code, gr] : by_root)
      out.push_back(consequence_finding(g, gr.first, root_code, gr.second));
  }
}

}  // namespace gw
