// GPU reachability rules (fallen off the bus, hung, reset required, access errors) and NVSwitch
// SXid lines. A missing or broken GPU is a finding, never a crash.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

constexpr unsigned kXidFallenOffBus = 79;

struct Lost {
  std::optional<unsigned> gpu;
  std::optional<std::string> pci;
  std::vector<std::string> evidence;
};

std::string key_of(std::optional<unsigned> gpu, const std::optional<std::string>& pci) {
  return gpu ? "g" + std::to_string(*gpu) : "p" + pci.value_or("?");
}

bool any_fallen(const DiagnoseContext& c) {
  for (const EventGroup& g : c.groups) {
    if ((g.kind == EventKind::kXid && g.code == kXidFallenOffBus) ||
        g.kind == EventKind::kFallenOffBus || g.kind == EventKind::kGpuLost)
      return true;
  }
  return std::any_of(c.gpus.begin(), c.gpus.end(), [](const GpuSeries& g) {
    return std::count(g.accesses.begin(), g.accesses.end(), GpuAccess::kLost) > 0;
  });
}

void access_rule(const DiagnoseContext& c, Findings& out, GpuAccess want, std::string_view code,
                 Severity sev, const char* what) {
  for (const GpuSeries& g : c.gpus) {
    const auto hits = static_cast<size_t>(std::count(g.accesses.begin(), g.accesses.end(), want));
    if (hits == 0) continue;
    std::vector<std::string> ev{fmt::format("{} {}", what, share_text(hits, g.accesses.size()))};
    for (size_t i = 0; i < g.errors.size() && i < 4; ++i) ev.push_back(g.errors[i]);
    out.push_back(
        make_finding(code, sev, &g, fmt::format("{}: {}", gpu_label(g), what), std::move(ev)));
  }
}

}  // namespace

void rule_gpu_fallen_off_bus(const DiagnoseContext& c, Findings& out) {
  std::map<std::string, Lost> lost;
  auto at = [&lost](std::optional<unsigned> gpu, const std::optional<std::string>& pci) -> Lost& {
    Lost& l = lost[key_of(gpu, pci)];
    l.gpu = gpu;
    if (pci) l.pci = pci;
    return l;
  };
  for (const EventGroup& g : c.groups) {
    const Event& first = *g.events.front();
    if (g.kind == EventKind::kXid && g.code == kXidFallenOffBus) {
      at(g.gpu, g.pci_bus_id)
          .evidence.push_back(fmt::format("Xid 79 logged {} time(s) ({})", g.total, first.origin));
    } else if (g.kind == EventKind::kFallenOffBus) {
      at(g.gpu, g.pci_bus_id).evidence.push_back("kernel: " + first.message.substr(0, 120));
    } else if (g.kind == EventKind::kGpuLost) {
      at(g.gpu, g.pci_bus_id).evidence.push_back("NVML answered GPU_IS_LOST");
    }
  }
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kNvmlGpuLost)) {
    Lost& l = at(m->gpu_index, std::nullopt);
    if (l.evidence.size() < 4)
      l.evidence.push_back(
          fmt::format("{}: NVML answered GPU_IS_LOST: {}", m->origin, m->text.substr(0, 120)));
  }
  for (const GpuSeries& g : c.gpus) {
    const auto hits =
        static_cast<size_t>(std::count(g.accesses.begin(), g.accesses.end(), GpuAccess::kLost));
    if (hits == 0) continue;
    std::optional<std::string> pci;
    if (!g.pci().empty()) pci = g.pci();
    at(g.index, pci)
        .evidence.push_back(
            fmt::format("NVML reported the GPU lost {}", share_text(hits, g.accesses.size())));
  }
  for (auto& [key, l] : lost) {
    const std::string name =
        l.gpu ? (l.pci ? fmt::format("GPU {} ({})", *l.gpu, *l.pci) : fmt::format("GPU {}", *l.gpu))
        : l.pci ? "GPU at PCI " + *l.pci
                : std::string("A GPU (the log names no PCI address)");
    Finding f;
    f.code = "gpu.fallen_off_bus";
    f.severity = Severity::kCritical;
    f.gpu = l.gpu;
    f.pci_bus_id = l.pci;
    f.title = name + " has fallen off the bus: it is lost and every job on it is dead";
    f.evidence = std::move(l.evidence);
    f.remedy = std::string(find_rule("gpu.fallen_off_bus")->remedy);
    out.push_back(std::move(f));
  }
}

void rule_gpu_hung(const DiagnoseContext& c, Findings& out) {
  access_rule(c, out, GpuAccess::kHung, "gpu.hung", Severity::kCritical,
              "NVML calls to it did not return in time");
}

void rule_gpu_reset_required(const DiagnoseContext& c, Findings& out) {
  access_rule(c, out, GpuAccess::kResetRequired, "gpu.reset_required", Severity::kCritical,
              "the driver says it needs a reset");
}

void rule_gpu_access_error(const DiagnoseContext& c, Findings& out) {
  access_rule(c, out, GpuAccess::kNoPermission, "gpu.access_error", Severity::kWarning,
              "reading it was refused (no permission)");
  access_rule(c, out, GpuAccess::kError, "gpu.access_error", Severity::kWarning,
              "reading it failed");
}

namespace {

// "fan.speed: [Unknown Error]" -> "fan.speed".
std::string_view field_of(const std::string& failed) {
  return std::string_view(failed).substr(0, failed.find(": "));
}

// Enough of the GPU unreadable that the driver, not one sensor, is the problem: its name, or
// four fields and more (the table's all-ERR! row).
bool mostly_unreadable(const GpuSeries& g) {
  std::set<std::string_view> fields;
  for (const std::string& f : g.failed_readings) fields.insert(field_of(f));
  return fields.count("name") > 0 || fields.size() >= 4;
}

std::string fields_text(const GpuSeries& g) {
  std::set<std::string_view> seen;
  std::string out;
  for (const std::string& f : g.failed_readings) {
    if (!seen.insert(field_of(f)).second) continue;
    if (seen.size() > 6) {
      out += ", ...";
      break;
    }
    out += (out.empty() ? "" : ", ") + std::string(field_of(f));
  }
  return out;
}

}  // namespace

void rule_gpu_reading_failed(const DiagnoseContext& c, Findings& out) {
  for (const GpuSeries& g : c.gpus) {
    if (g.failed_readings.empty()) continue;
    const bool most = mostly_unreadable(g);
    std::vector<std::string> ev;
    for (size_t i = 0; i < g.failed_readings.size() && i < 8; ++i)
      ev.push_back("printed instead of a value: " + g.failed_readings[i]);
    // share_text says "in the snapshot" for one snapshot, "3 of 10 samples (30%)" for more.
    const std::string share = share_text(g.samples_with_failures, g.accesses.size());
    ev.push_back(g.accesses.size() <= 1 ? share : "in " + share);
    if (!most)
      ev.push_back(
          "the GPU's other readings are values: one sensor or one query failed, not the "
          "whole GPU");
    const std::string title =
        most ? fmt::format("{}: most readings failed ({}): the driver cannot talk to it",
                           gpu_label(g), fields_text(g))
             : fmt::format("{}: reading {} failed", gpu_label(g), fields_text(g));
    out.push_back(make_finding("gpu.reading_failed",
                               most ? Severity::kCritical : Severity::kWarning, &g, title,
                               std::move(ev)));
  }
}

void rule_nvswitch_sxid(const DiagnoseContext& c, Findings& out) {
  struct Agg {
    size_t lines = 0;
    bool fatal = false;
    std::set<std::string> switches;
    std::set<std::string> links;
    std::string sample;
  };
  std::map<unsigned, Agg> by_code;
  for (const EventGroup& g : c.groups) {
    if (g.kind != EventKind::kSXid) continue;
    Agg& a = by_code[g.code];
    a.lines += g.total - g.events.size();  // lines the loader counted but did not keep
    for (const Event* e : g.events) {
      ++a.lines;
      if (e->pci_bus_id) a.switches.insert(*e->pci_bus_id);
      const auto pos = e->message.find("Link ");
      if (pos != std::string::npos) {
        const auto end = e->message.find_first_not_of("0123456789", pos + 5);
        const std::string num = e->message.substr(pos + 5, end - (pos + 5));
        if (!num.empty()) a.links.insert(num);
      }
      if (e->message.find("Fatal") != std::string::npos &&
          e->message.find("Non-fatal") == std::string::npos)
        a.fatal = true;
      if (a.sample.empty()) a.sample = e->message.substr(0, 120);
    }
  }
  const bool lost_gpu = any_fallen(c);
  for (const auto& [code, a] : by_code) {
    std::vector<std::string> ev{
        fmt::format("{} SXid {} line(s) from {} NVSwitch(es)", a.lines, code, a.switches.size())};
    if (!a.links.empty()) {
      std::string l;
      for (const auto& n : a.links) l += (l.empty() ? "" : ", ") + n;
      ev.push_back("links: " + l);
    }
    ev.push_back("log: " + a.sample);
    if (lost_gpu)
      ev.push_back(
          "a GPU fell off the bus in the same log: these switch links most likely went "
          "down because of it (secondary)");
    out.push_back(
        make_finding("nvswitch.sxid", a.fatal ? Severity::kCritical : Severity::kWarning, nullptr,
                     fmt::format("NVSwitch reported SXid {}{}", code, a.fatal ? " (fatal)" : ""),
                     std::move(ev)));
  }
}

}  // namespace gw
