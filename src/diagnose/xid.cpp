// Kernel-log rules: every Xid through the catalog (meaning, likely cause, action), counted and
// split into bursts per GPU; NVSwitch SXids; and GPUs lost, hung or needing a reset.
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <set>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// Xids closer together than this belong to one incident (the driver prints 13/31/119 in
// bursts: one fault, many lines).
constexpr double kBurstGapS = 60.0;
constexpr unsigned kXidFallenOffBus = 79;

std::optional<double> event_time_s(const Event& e) {
  if (e.time_ms) return static_cast<double>(*e.time_ms) / 1000.0;
  if (e.uptime_s) return *e.uptime_s;
  return std::nullopt;
}

std::string when(const Event& e) {
  if (e.time_ms) {
    const std::time_t t = static_cast<std::time_t>(*e.time_ms / 1000);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    return buf;
  }
  if (e.uptime_s) return fmt::format("{:.0f} s after boot", *e.uptime_s);
  return e.origin;
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
  if (g.gpu)
    return g.pci_bus_id ? fmt::format("GPU {} ({})", *g.gpu, *g.pci_bus_id)
                        : fmt::format("GPU {}", *g.gpu);
  if (g.pci_bus_id) return "GPU at PCI " + *g.pci_bus_id;
  return "an unidentified GPU";
}

std::string processes(const EventGroup& g) {
  std::set<std::string> names;
  for (const Event* e : g.events) {
    if (e->process_name && *e->process_name != "<unknown>") {
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
    // NVLink5: the line itself says Fatal or Nonfatal.
    const bool fatal = std::any_of(g.events.begin(), g.events.end(), [](const Event* e) {
      return e->message.find(" Fatal") != std::string::npos;
    });
    return fatal ? Severity::kCritical : Severity::kInfo;
  }
  if (x->severity == "critical") return Severity::kCritical;
  if (x->severity == "warning" || x->severity == "error") return Severity::kWarning;
  return Severity::kInfo;
}

// Driver lines about the same GPU that matter for the verdict ("The GPU likely needs to be
// reset").
void add_driver_notes(const DiagnoseContext& c, const EventGroup& g, std::vector<std::string>& ev) {
  for (const EventGroup& d : c.groups) {
    if (d.kind != EventKind::kDriverMessage || d.gpu != g.gpu || d.pci_bus_id != g.pci_bus_id)
      continue;
    for (const Event* e : d.events) {
      if (e->message.find("reset") != std::string::npos) {
        ev.push_back("driver: " + e->message.substr(0, 160));
        return;
      }
    }
  }
}

Finding xid_finding(const DiagnoseContext& c, const EventGroup& g, const XidInfo* x,
                    XidCause cause) {
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
  ev.push_back(fmt::format("{} line(s){}, first {}, last {}", g.total, burst_text,
                           when(*g.events.front()), when(last)));
  if (x) ev.push_back(fmt::format("meaning: {}", x->meaning));
  ev.push_back(fmt::format("likely cause: {}", xid_cause_name(cause)));
  if (auto p = processes(g); !p.empty()) ev.push_back("processes: " + p);
  ev.push_back(fmt::format("log: {}", g.events.front()->message.substr(0, 160)));
  add_driver_notes(c, g, ev);
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

void xids_of(const DiagnoseContext& c, XidCause want, Findings& out) {
  for (const EventGroup& g : c.groups) {
    if (g.kind != EventKind::kXid || g.code == kXidFallenOffBus) continue;
    const XidInfo* x = lookup_xid(g.code);
    const XidCause cause = x ? x->cause : XidCause::kOther;
    if (cause == want) out.push_back(xid_finding(c, g, x, cause));
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

}  // namespace gw
