// Event: one thing that happened, mostly from the kernel log (Xid, SXid, fallen off the bus)
// or from NVML (GPU lost, event API Xids).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gw {

enum class EventKind {
  kXid,            // NVRM: Xid (PCI:0000:3b:00): 79, ...
  kSXid,           // nvidia-nvswitch: SXid (PCI:...): 12028, ...
  kFallenOffBus,   // "GPU has fallen off the bus" (with or without an Xid)
  kGpuLost,        // NVML answered GPU_IS_LOST
  kDriverMessage,  // another NVRM line worth keeping (e.g. version mismatch API text)
};

struct Event {
  EventKind kind = EventKind::kXid;
  std::optional<int64_t> time_ms;         // wall-clock, when the log line carries it
  std::optional<double> uptime_s;         // seconds since boot, dmesg's "[ 1234.5678]"
  std::optional<unsigned> code;           // Xid / SXid number
  std::optional<std::string> pci_bus_id;  // normalised "00000000:3B:00.0"
  std::optional<unsigned> gpu_index;      // resolved from pci_bus_id when possible
  std::optional<uint32_t> pid;
  std::optional<std::string> process_name;
  std::string message;  // the rest of the line, trimmed
  std::string origin;   // "kern.log:1234", "nvml"
};

std::string_view event_kind_name(EventKind k);

// Normalises PCI addresses ("0000:3b:00", "00000000:3B:00.0", "3B:00.0") to
// "00000000:3B:00.0"; returns nullopt when the text is not a PCI address.
std::optional<std::string> normalize_pci_bus_id(std::string_view text);

}  // namespace gw
