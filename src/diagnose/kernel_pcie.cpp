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

std::string first_word(std::string_view s) {
  return std::string(s.substr(0, s.find(' ')));
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

struct AerGpu {
  std::string device;  // "00000000:63:00"
  std::vector<const Event*> lines;
  std::set<std::string> ports;
  size_t corrected = 0, nonfatal = 0, fatal = 0, unrecovered = 0;
};

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

void rule_pcie_aer_errors(const DiagnoseContext& c, Findings& out) {
  if (!any_driver_event(c, K::kPcieAer)) return;
  const std::set<std::string> gpus = gpu_devices(c);
  std::vector<const Event*> aer;
  for (const Event& e : c.obs.events) {
    if (e.kind == EventKind::kDriverMessage && e.driver_kind == K::kPcieAer) aer.push_back(&e);
  }
  if (aer.empty()) return;
  std::set<std::string> nvidia_devs;  // devices the nvidia driver owns, from the AER lines
  for (const Event* e : aer) {
    if (first_word(e->message) == "nvidia" && e->pci_bus_id)
      nvidia_devs.insert(pci_device(*e->pci_bus_id));
  }
  auto is_gpu = [&](const std::string& d) { return gpus.count(d) || nvidia_devs.count(d); };
  // Which GPU each line is about (its own device, the device it names, or a GPU line next
  // to a port line).
  std::vector<std::optional<std::string>> target(aer.size());
  for (size_t i = 0; i < aer.size(); ++i) {
    if (!aer[i]->pci_bus_id) continue;
    const std::string dev = pci_device(*aer[i]->pci_bus_id);
    if (is_gpu(dev)) {
      target[i] = dev;
    } else if (auto src = source_of(aer[i]->message); src && is_gpu(*src)) {
      target[i] = src;
    }
  }
  for (size_t i = 0; i < aer.size(); ++i) {
    if (target[i] || first_word(aer[i]->message) != "pcieport") continue;
    for (size_t j = i >= kAerNearEvents ? i - kAerNearEvents : 0;
         j < std::min(aer.size(), i + kAerNearEvents); ++j) {
      if (j == i || !target[j] || pci_device(*aer[j]->pci_bus_id) != *target[j]) continue;
      const auto gap = seconds_between(*aer[i], *aer[j]);
      if (gap && std::abs(*gap) > kAerNearS) continue;
      target[i] = target[j];
      break;
    }
  }
  std::map<std::string, AerGpu> by_gpu;
  for (size_t i = 0; i < aer.size(); ++i) {
    if (!target[i]) continue;
    AerGpu& g = by_gpu[*target[i]];
    g.device = *target[i];
    const Event& e = *aer[i];
    if (g.lines.size() < 1000) g.lines.push_back(&e);
    const std::string dev = pci_device(*e.pci_bus_id);
    if (dev != g.device && first_word(e.message) == "pcieport") g.ports.insert(full_address(dev));
    const std::string& t = e.message;
    if (t.find("can't recover") != std::string::npos ||
        t.find("recovery failed") != std::string::npos)
      ++g.unrecovered;
    else if (t.find("(Fatal)") != std::string::npos)
      ++g.fatal;
    else if (t.find("Uncorrect") != std::string::npos)
      ++g.nonfatal;
    else if (t.find("Correct") != std::string::npos)
      ++g.corrected;
  }
  for (const auto& [dev, g] : by_gpu) {
    Finding f;
    f.code = "pcie.aer_errors";
    f.pci_bus_id = full_address(dev);
    f.gpu = c.gpu_by_pci(*f.pci_bus_id);
    const bool bad = g.fatal > 0 || g.unrecovered > 0;
    f.severity = bad ? Severity::kCritical
                     : (g.nonfatal > 0 || g.corrected >= kManyCorrected ? Severity::kWarning
                                                                        : Severity::kInfo);
    const std::string where =
        g.ports.empty() ? std::string() : " and its upstream port " + *g.ports.begin();
    f.title = fmt::format("PCIe AER errors on {}{}", gpu_words(f.gpu, f.pci_bus_id), where);
    f.evidence.push_back(fmt::format(
        "{} AER line(s): {} fatal, {} uncorrected non-fatal, {} corrected, {} unrecovered "
        "('can't recover' / 'recovery failed'); first {}, last {}",
        g.lines.size(), g.fatal, g.nonfatal, g.corrected, g.unrecovered,
        event_when(*g.lines.front()), event_when(*g.lines.back())));
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
