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
  kDriverMessage,  // another driver/kernel message a rule uses; what it is: Event::driver_kind
};

// What a kDriverMessage event says. For these events Event::code holds the enum's value, so
// that grouping and counting per (kind, GPU, code) keep the kinds apart.
enum class DriverMessageKind {
  kInitFailed = 1,           // "RmInitAdapter failed!" / "rm_init_adapter failed": GPU unusable
  kOpenModulesRequired = 2,  // "... requires use of the NVIDIA open kernel modules."
  kResetRequired = 3,        // NV_ERR_RESET_REQUIRED, "Reset required", "GspRmAlloc failed",
                             // "The GPU likely needs to be reset"
  kGspTimeout = 4,           // "_kgspIsHeartbeatTimedOut", "GSP RM heartbeat timed out"
  kDriverAssert = 5,         // nvAssertFailedNoLog / nvCheckFailedNoLog (context for others)
  kApiMismatch = 6,          // "API mismatch: the client has the version X ... module Y"
  kNoDeviceProbed = 7,       // probe routine not called/failed, "No NVIDIA graphics adapter"
  kPcieAer = 8,              // PCIe AER line ("pcieport 0000:00:03.0: AER: ...")
  kHungTask = 9,             // "INFO: task NAME:PID blocked for more than N seconds."
  kPcieLinkLimited = 10,     // "... Gb/s available PCIe bandwidth, limited by ... link at ADDR"
  kKernelFault = 11,         // an Oops/BUG/GPF whose IP is in an NVIDIA module (kernel_fault.h)
  kKernelWarning = 12,       // a kernel WARNING or UBSAN report in an NVIDIA module
  kGpuUnsupported = 13,      // "The NVIDIA X GPU installed in this system is supported through
                             // the NVIDIA 470.xx Legacy drivers" / "is not supported by the
                             // NVIDIA N driver release": the driver ignores that GPU
};

struct Event {
  EventKind kind = EventKind::kXid;
  std::optional<int64_t> time_ms;  // wall-clock, when the log line carries it
  std::optional<double> uptime_s;  // seconds since boot, dmesg's "[ 1234.5678]"
  // syslog/journalctl "Mar  3 10:00:00" and dmesg -H "[Dec 1 08:14]" carry no year: ms since
  // Jan 1 00:00 of an unknown year (for gaps between lines and for display only).
  std::optional<int64_t> time_in_year_ms;
  std::optional<unsigned> code;           // Xid / SXid number
  std::optional<std::string> pci_bus_id;  // normalised "00000000:3B:00.0"
  std::optional<unsigned> gpu_index;      // resolved from pci_bus_id when possible
  std::optional<uint32_t> pid;
  std::optional<std::string> process_name;
  std::optional<DriverMessageKind> driver_kind;  // set for kDriverMessage
  // The driver's own GPU number in "NVRM: GPU4 ..." lines (not the NVML index).
  std::optional<unsigned> driver_gpu;
  std::string message;  // the rest of the line, trimmed (continuation lines joined)
  std::string origin;   // "kern.log:1234", "nvml"
};

std::string_view event_kind_name(EventKind k);
std::string_view driver_message_kind_name(DriverMessageKind k);  // "init_failed", ...

// Normalises PCI addresses ("0000:3b:00", "00000000:3B:00.0", "3B:00.0") to
// "00000000:3B:00.0"; returns nullopt when the text is not a PCI address.
std::optional<std::string> normalize_pci_bus_id(std::string_view text);

}  // namespace gw
