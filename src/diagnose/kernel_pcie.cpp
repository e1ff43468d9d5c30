// PCIe lines of the kernel log: AER errors on a GPU or its upstream port, and the PCI core's
// boot-time "available PCIe bandwidth, limited by ... link at <port>".
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "diagnose/context.h"
#include "diagnose/driver_groups.h"
#include "diagnose/kernel_events.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

using K = DriverMessageKind;

// A port's AER line this close to a GPU's (same clock), or this many events apart without
// comparable times, is about the GPU's link.
constexpr double kAerNearS = 2.0;
constexpr size_t kAerNearEvents = 20;
// Corrected errors only: this many lines make a warning (a link that keeps retrying).
constexpr size_t kManyCorrected = 100;
// Corrected errors on a port whose device below is not named: reported from this many on.
constexpr size_t kPortRepeats = 2;

std::string first_word(std::string_view s) {
  return std::string(s.substr(0, s.find(' ')));
}

// A report from a port (root or switch port), natively ("pcieport 0000:00:03.0: AER: ...") or
// from the firmware ("GHES 0000:00:03.0: ... port_type: 4, root port": 4-6 are ports).
bool from_port(const Event& e) {
  const std::string w = first_word(e.message);
  if (w == "pcieport") return true;
  if (w != "GHES") return false;
  for (std::string_view t : {"port_type: 4,", "port_type: 5,", "port_type: 6,"})
    if (e.message.find(t) != std::string::npos) return true;
  return false;
}

// A device the nvidia driver owns, or one a firmware record names by NVIDIA's vendor id.
bool nvidia_device(const Event& e) {
  const std::string w = first_word(e.message);
  return w == "nvidia" || (w == "GHES" && e.message.find("vendor_id: 0x10de") != std::string::npos);
}

// "error received: 0000:00:03.0" / "error message received from 0000:63:00.0" -> device.
std::optional<std::string> source_of(std::string_view msg) {
  for (std::string_view tag : {"received from ", "received: "}) {
    const size_t p = msg.find(tag);
    if (p == std::string_view::npos) continue;
    auto rest = msg.substr(p + tag.size());
    if (rest.substr(0, 3) == "id=") return std::nullopt;
    if (auto n = normalize_pci_bus_id(rest.substr(0, rest.find_first_of(" ,"))))
      return pci_device(*n);
  }
  return std::nullopt;
}

struct AerCounts {
  size_t corrected = 0, nonfatal = 0, fatal = 0, unrecovered = 0, unknown = 0;
  void add(const std::string& t) {
    if (t.find("severity: unknown") != std::string::npos)  // a firmware record cut short
      ++unknown;
    else if (t.find("can't recover") != std::string::npos ||
             t.find("recovery failed") != std::string::npos)
      ++unrecovered;
    else if (t.find("(Fatal)") != std::string::npos)
      ++fatal;
    else if (t.find("Uncorrect") != std::string::npos)
      ++nonfatal;
    else if (t.find("Correct") != std::string::npos)
      ++corrected;
  }
  bool bad() const { return fatal > 0 || unrecovered > 0; }
  std::string text() const {
    return fmt::format(
        "{} fatal, {} uncorrected non-fatal, {} corrected, {} unrecovered ('can't recover' / "
        "'recovery failed'){}",
        fatal, nonfatal, corrected, unrecovered,
        unknown > 0 ? fmt::format(", {} of unknown severity", unknown) : "");
  }
};

struct AerGpu {
  std::string device;  // "00000000:63:00"
  std::vector<const Event*> lines;
  std::set<std::string> ports;
  AerCounts n;
};

// The error bits an AER report names ("[ 5] Surprise Down Error    (First)" -> "Surprise Down
// Error (First)"), in order, each once.
void error_names(std::string_view m, std::vector<std::string>& out) {
  for (size_t p = m.find('['); p != std::string_view::npos; p = m.find('[', p + 1)) {
    const size_t close = m.find(']', p);
    if (close == std::string_view::npos || close - p > 4) continue;
    bool digits = close > p + 1;
    for (size_t i = p + 1; i < close; ++i)
      digits = digits && (m[i] == ' ' || std::isdigit(static_cast<unsigned char>(m[i])));
    if (!digits) continue;
    std::string_view rest = m.substr(close + 1);
    rest = rest.substr(rest.find_first_not_of(' ') == std::string_view::npos
                           ? rest.size()
                           : rest.find_first_not_of(' '));
    const size_t gap = rest.find("  ");
    std::string name(rest.substr(0, std::min(gap, rest.find(" ["))));
    if (gap != std::string_view::npos && rest.find("(First)", gap) < rest.find('[', gap))
      name += " (First)";
    while (!name.empty() && name.back() == ' ') name.pop_back();
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(std::move(name));
  }
}

std::string names_text(const std::vector<const Event*>& lines) {
  std::vector<std::string> names;
  for (const Event* e : lines) error_names(e->message, names);
  std::string out;
  for (size_t i = 0; i < names.size() && i < 8; ++i) out += (i ? ", " : "") + names[i];
  return out;
}

std::string full_address(const std::string& device) {
  return device + ".0";
}

// Gb/s before `tag`: "252.048 Gb/s available" -> 252.048.
std::optional<double> number_before(std::string_view s, size_t at) {
  size_t b = at;
  while (b > 0 && (std::isdigit(static_cast<unsigned char>(s[b - 1])) || s[b - 1] == '.')) --b;
  if (b == at) return std::nullopt;
  try {
    return std::stod(std::string(s.substr(b, at - b)));
  } catch (...) {
    return std::nullopt;
  }
}

unsigned gen_of(double gt_s) {
  if (gt_s >= 60) return 6;
  if (gt_s >= 30) return 5;
  if (gt_s >= 15) return 4;
  if (gt_s >= 7) return 3;
  if (gt_s >= 4) return 2;
  return 1;
}

}  // namespace

namespace {

// The AER events of the inputs and the GPU each is about (its own device, the device it names,
// or a GPU line next to a port line).
struct AerScan {
  std::vector<const Event*> aer;
  std::vector<std::optional<std::string>> target;
  std::set<std::string> gpus;  // devices known as GPUs (inputs, or the nvidia driver's lines)
};

AerScan scan_aer(const DiagnoseContext& c) {
  AerScan s;
  for (const Event& e : c.obs.events)
    if (e.kind == EventKind::kDriverMessage && e.driver_kind == K::kPcieAer) s.aer.push_back(&e);
  s.gpus = gpu_devices(c);
  for (const Event* e : s.aer)  // devices the nvidia driver owns, from the AER lines
    if (nvidia_device(*e) && e->pci_bus_id) s.gpus.insert(pci_device(*e->pci_bus_id));
  const auto& aer = s.aer;
  s.target.resize(aer.size());
  for (size_t i = 0; i < aer.size(); ++i) {
    if (!aer[i]->pci_bus_id) continue;
    const std::string dev = pci_device(*aer[i]->pci_bus_id);
    if (s.gpus.count(dev)) {
      s.target[i] = dev;
    } else if (auto src = source_of(aer[i]->message); src && s.gpus.count(*src)) {
      s.target[i] = src;
    }
  }
  for (size_t i = 0; i < aer.size(); ++i) {
    if (s.target[i] || !from_port(*aer[i])) continue;
    for (size_t j = i >= kAerNearEvents ? i - kAerNearEvents : 0;
         j < std::min(aer.size(), i + kAerNearEvents); ++j) {
      if (j == i || !s.target[j] || pci_device(*aer[j]->pci_bus_id) != *s.target[j]) continue;
      const auto gap = seconds_between(*aer[i], *aer[j]);
      if (gap && std::abs(*gap) > kAerNearS) continue;
      s.target[i] = s.target[j];
      break;
    }
  }
  // A port tied to a GPU once is that GPU's port for the whole capture (its earlier corrected
  // errors included).
  std::map<std::string, std::string> port_gpu;
  for (size_t i = 0; i < aer.size(); ++i)
    if (s.target[i] && from_port(*aer[i])) port_gpu.emplace(*aer[i]->pci_bus_id, *s.target[i]);
  for (size_t i = 0; i < aer.size(); ++i)
    if (!s.target[i] && aer[i]->pci_bus_id && from_port(*aer[i]))
      if (auto it = port_gpu.find(*aer[i]->pci_bus_id); it != port_gpu.end())
        s.target[i] = it->second;
  return s;
}

}  // namespace

void rule_pcie_aer_errors(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kPcieAer)) return;
  const AerScan scan = scan_aer(c);
  const auto& aer = scan.aer;
  const auto& target = scan.target;
  if (aer.empty()) return;
  std::map<std::string, AerGpu> by_gpu;
  for (size_t i = 0; i < aer.size(); ++i) {
    if (!target[i]) continue;
    AerGpu& g = by_gpu[*target[i]];
    g.device = *target[i];
    const Event& e = *aer[i];
    if (g.lines.size() < 1000) g.lines.push_back(&e);
    const std::string dev = pci_device(*e.pci_bus_id);
    if (dev != g.device && from_port(e)) g.ports.insert(*e.pci_bus_id);  // a port's function counts
    g.n.add(e.message);
  }
  for (const auto& [dev, g] : by_gpu) {
    Finding f;
    f.code = "pcie.aer_errors";
    f.pci_bus_id = full_address(dev);
    f.gpu = c.gpu_by_pci(*f.pci_bus_id);
    const bool bad = g.n.bad();
    f.severity = bad ? Severity::kCritical
                     : (g.n.nonfatal > 0 || g.n.unknown > 0 || g.n.corrected >= kManyCorrected
                            ? Severity::kWarning
                            : Severity::kInfo);
    const std::string where =
        g.ports.empty() ? std::string() : " and its upstream port " + *g.ports.begin();
    f.title = fmt::format("PCIe AER errors on {}{}", gpu_words(f.gpu, f.pci_bus_id), where);
    f.evidence.push_back(fmt::format("{} AER line(s): {}; first {}, last {}", g.lines.size(),
                                     g.n.text(), event_when(*g.lines.front()),
                                     event_when(*g.lines.back())));
    if (const std::string names = names_text(g.lines); !names.empty())
      f.evidence.push_back("errors named: " + names);
    for (size_t i = 0; i < g.lines.size() && i < 3; ++i)
      f.evidence.push_back("log: " + g.lines[i]->message.substr(0, 160));
    f.remedy = bad ? "The GPU's PCIe link failed and the driver cannot recover it (it has no AER "
                     "handler): drain the node and reboot. Then reseat the GPU and its riser or "
                     "cable, check the slot and retimers, update the BIOS; if it returns, move "
                     "the GPU to another slot to tell slot from card, then RMA."
                   : "Reseat the GPU and its riser/cable and check the slot; errors reported by "
                     "the upstream port point at the link (slot, riser, retimer) rather than the "
                     "GPU. Watch the count: uncorrected errors usually come before a GPU falls "
                     "off the bus.";
    out.push_back(std::move(f));
  }
}

namespace {

// A port's report that belongs to another device: it names one as the source, or that
// device's own lines stand next to it (an NVMe drive's, a NIC's): not ours to judge.
bool about_other_device(const AerScan& s, size_t i) {
  const Event& e = *s.aer[i];
  const std::string port = pci_device(*e.pci_bus_id);
  if (auto src = source_of(e.message); src && *src != port && *src != "00000000:00:00") return true;
  for (size_t j = i >= kAerNearEvents ? i - kAerNearEvents : 0;
       j < std::min(s.aer.size(), i + kAerNearEvents); ++j) {
    const Event& o = *s.aer[j];
    if (j == i || !o.pci_bus_id || from_port(o)) continue;
    const auto gap = seconds_between(e, o);
    if (!gap || std::abs(*gap) <= kAerNearS) return true;
  }
  return false;
}

}  // namespace

void rule_pcie_aer_port(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kPcieAer)) return;
  const AerScan s = scan_aer(c);
  std::map<std::string, std::vector<const Event*>> by_port;
  for (size_t i = 0; i < s.aer.size(); ++i) {
    const Event& e = *s.aer[i];
    if (s.target[i] || !e.pci_bus_id || !from_port(e)) continue;
    if (!about_other_device(s, i)) by_port[*e.pci_bus_id].push_back(&e);
  }
  for (const auto& [port, lines] : by_port) {
    AerCounts n;
    for (const Event* e : lines) n.add(e->message);
    const bool uncorrected = n.bad() || n.nonfatal > 0;
    // One corrected error on a port with nothing named below is a laptop's Wi-Fi as often as
    // a GPU's link: only a repeated one is worth a line.
    if (!uncorrected && n.corrected < kPortRepeats) continue;
    std::vector<std::string> ev{fmt::format("{} AER line(s): {}; first {}, last {}", lines.size(),
                                            n.text(), event_when(*lines.front()),
                                            event_when(*lines.back()))};
    if (const std::string names = names_text(lines); !names.empty())
      ev.push_back("errors named: " + names);
    for (size_t i = 0; i < lines.size() && i < 2; ++i)
      ev.push_back("log: " + lines[i]->message.substr(0, 200));
    ev.push_back(
        "the device below the port is not named in the log: if it is a GPU (lspci -tv), these "
        "are its link's errors");
    Finding f = make_finding(
        "pcie.aer_port", uncorrected ? Severity::kWarning : Severity::kInfo, nullptr,
        fmt::format("PCIe {} errors on port {}, whose device below is not named",
                    n.bad() ? "fatal" : (uncorrected ? "uncorrected" : "corrected"), port),
        std::move(ev));
    f.pci_bus_id = port;
    out.push_back(std::move(f));
  }
}

void rule_pcie_link_limited(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kPcieLinkLimited)) return;
  const std::set<std::string> gpus = gpu_devices(c);
  const DriverGpuMap m = driver_gpu_map(c);
  const bool inventory = !c.gpus.empty();
  for (const DriverGroup& g : driver_groups(c, m, K::kPcieLinkLimited)) {
    if (!g.pci_bus_id) continue;
    const bool known_gpu = gpus.count(pci_device(*g.pci_bus_id)) > 0;
    // With a GPU list, a device not in it is a NIC or an NVMe drive: not ours to judge.
    if (inventory && !known_gpu) continue;
    const std::string_view t = g.events.front()->message;
    const size_t avail = t.find(" Gb/s available");
    const size_t lim = t.find("limited by ");
    const size_t cap = t.find("capable of ");
    std::optional<double> avail_gb, cap_gb, lim_gt;
    if (avail != std::string_view::npos) avail_gb = number_before(t, avail);
    if (cap != std::string_view::npos) cap_gb = number_before(t, t.find(" Gb/s", cap));
    if (lim != std::string_view::npos) lim_gt = number_before(t, t.find(" GT/s", lim));
    std::string port;
    if (const size_t at = t.find(" link at "); at != std::string_view::npos) {
      auto rest = t.substr(at + 9);
      port = std::string(rest.substr(0, rest.find_first_of(" (")));
    }
    std::vector<std::string> ev;
    if (avail_gb && cap_gb) {
      // Plain copies: GCC 12 -O2 sees the optional's payload as maybe uninitialised here.
      const double av = avail_gb.value_or(0), cp = cap_gb.value_or(0);
      ev.push_back(fmt::format(
          "{:.0f} Gb/s available ({:.1f} GB/s per direction) of {:.0f} Gb/s ({:.1f} GB/s) the "
          "device supports",
          av, av / 8, cp, cp / 8));
    }
    if (lim_gt)
      ev.push_back(fmt::format("limited by the link at {} running {:.1f} GT/s (Gen{})",
                               port.empty() ? "an upstream device" : port, *lim_gt,
                               gen_of(*lim_gt)));
    ev.push_back("log: " + std::string(t.substr(0, 200)));
    ev.push_back(
        "boot-time capability of the path (a switch or root port), not idle power "
        "saving and not a GPU fault; host<->GPU copies are capped, NVLink traffic is not");
    if (!known_gpu) ev.push_back("no GPU list in the inputs: this device is taken to be a GPU");
    const std::string dev =
        known_gpu ? gpu_words(g.gpu, g.pci_bus_id) : "PCIe device " + *g.pci_bus_id;
    out.push_back(make_driver_finding(
        "pcie.link_limited", Severity::kWarning, g,
        fmt::format("{}: PCIe bandwidth limited by its upstream link{}{}", dev,
                    port.empty() ? "" : " at " + port,
                    avail_gb && cap_gb ? fmt::format(" ({:.0f} of {:.0f} Gb/s)", *avail_gb, *cap_gb)
                                       : std::string()),
        std::move(ev),
        "Check the upstream device (lspci -vv -s <port>: LnkCap/LnkSta). If it is a slower "
        "switch or root port, that is the platform's limit: keep bandwidth-heavy host transfers "
        "(data loading, checkpoints, CPU offload) in mind or use a host with a faster path; if it "
        "supports more, check the BIOS PCIe speed setting, risers and retimers."));
  }
}

}  // namespace gw
