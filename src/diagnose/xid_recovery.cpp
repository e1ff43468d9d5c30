// Xid 154: the recovery action the driver announces, graded by its value.
#include <fmt/format.h>

#include "diagnose/context.h"
#include "diagnose/kernel_events.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

constexpr unsigned kXidRecovery = 154;

struct RecoveryAction {
  unsigned value = 0;
  std::string label;
};

// "GPU recovery action changed from 0x0 (None) to 0x4 (Drain and Reset)" -> {4, "Drain and
// Reset"}.
std::optional<RecoveryAction> announced_action(std::string_view msg) {
  const size_t p = msg.find("to 0x");
  if (p == std::string_view::npos) return std::nullopt;
  auto v = hex_value(msg.substr(p + 3, msg.find_first_of(" (", p + 3) - (p + 3)));
  if (!v) return std::nullopt;
  RecoveryAction a;
  a.value = static_cast<unsigned>(*v);
  const size_t open = msg.find('(', p), close = msg.find(')', open);
  if (open != std::string_view::npos && close != std::string_view::npos)
    a.label = std::string(msg.substr(open + 1, close - open - 1));
  return a;
}

struct ActionMeaning {
  Severity severity;
  std::string_view words;
  std::string_view remedy;
};

// By the number, not the label: the labels differ between driver versions.
ActionMeaning action_meaning(unsigned v) {
  switch (v) {
    case 0:
      return {Severity::kInfo, "no recovery action needed",
              "Nothing to do: the driver recovered (act on the Xid before it if it repeats)."};
    case 1:
      return {Severity::kCritical, "GPU reset required",
              "Stop the jobs on this GPU and reset it (sudo nvidia-smi -r -i <gpu>), or reboot the "
              "node; it stays unusable until then."};
    case 2:
      return {Severity::kCritical, "node reboot required",
              "Drain the node and reboot it: a GPU reset is not enough."};
    case 3:
      return {Severity::kCritical, "drain peer-to-peer traffic",
              "Stop the jobs that use peer-to-peer/NVLink traffic on this GPU (drain the node), "
              "then reset the GPU."};
    case 4:
      return {Severity::kCritical, "drain and reset",
              "Drain the node (let or move the running jobs off it), then reset the GPU (sudo "
              "nvidia-smi -r -i <gpu>)."};
    case 5:
      return {Severity::kCritical, "recover the IMEX domain",
              "Recover the IMEX domain (restart the IMEX service on the domain's nodes) and "
              "restart the affected jobs."};
    case 6:
      return {Severity::kCritical, "bus reset (PF FLR) required",
              "Drain the node and reset the GPU's PCIe function (a GPU reset with nvidia-smi -r "
              "performs it), or reboot."};
    case 7:
      return {Severity::kCritical, "system reboot required",
              "Drain the node and reboot (power-cycle) the whole system."};
    default:
      return {Severity::kWarning, "an action this tool does not know",
              "Look the value up in NVIDIA's Xid 154 documentation and follow it."};
  }
}

}  // namespace

void rule_xid_recovery_action(const DiagnoseContext& c, Findings& out) {
  const DriverGpuMap drivers = driver_gpu_map(c);
  for (const EventGroup& g : c.groups) {
    if (g.kind != EventKind::kXid || g.code != kXidRecovery) continue;
    // The last announcement is the one in force; keep the earlier ones as history.
    std::optional<RecoveryAction> now;
    const Event* at = nullptr;
    std::vector<std::string> history;
    for (const Event* e : g.events) {
      if (auto a = announced_action(e->message)) {
        now = a;
        at = e;
        if (history.size() < 5)
          history.push_back(event_when(*e) + ": " + e->message.substr(0, 120));
      }
    }
    Finding f;
    f.code = "xid.recovery_action";
    f.gpu = g.gpu;
    f.pci_bus_id = g.pci_bus_id;
    if (!now) {
      f.severity = Severity::kWarning;
      f.title = fmt::format("Xid 154 on {}: recovery action changed (value not readable)",
                            gpu_words(g.gpu, g.pci_bus_id));
      f.evidence = {"log: " + g.events.front()->message.substr(0, 160)};
      f.remedy = "Read the recovery action with nvidia-smi -q (GPU Recovery Action) and follow it.";
      out.push_back(std::move(f));
      continue;
    }
    const ActionMeaning m = action_meaning(now->value);
    f.severity = m.severity;
    f.title = fmt::format("Xid 154 on {}: {} (recovery action 0x{:x})",
                          gpu_words(g.gpu, g.pci_bus_id), m.words, now->value);
    f.evidence.push_back(fmt::format("announced {}: 0x{:x} ({}), graded by the value",
                                     event_when(*at), now->value,
                                     now->label.empty() ? "no label" : now->label));
    for (auto& h : history) f.evidence.push_back("history: " + h);
    // The Xid that changed the action: the nearest one before it on this GPU.
    const std::string key = gpu_key(c, *at, drivers);
    const size_t i = static_cast<size_t>(at - c.obs.events.data());
    for (size_t j = i; j-- > 0;) {
      const Event& o = c.obs.events[j];
      if (o.kind != EventKind::kXid || o.code == kXidRecovery || gpu_key(c, o, drivers) != key)
        continue;
      const XidInfo* x = lookup_xid(o.code.value_or(0));
      f.evidence.push_back(fmt::format("after Xid {} ({}) at {}", o.code.value_or(0),
                                       x ? x->short_name : "unknown", event_when(o)));
      break;
    }
    f.remedy = std::string(m.remedy);
    out.push_back(std::move(f));
  }
}

}  // namespace gw
