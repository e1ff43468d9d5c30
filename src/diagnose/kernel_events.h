// Helpers shared by the kernel-log rules (xid.cpp, driver_events.cpp, kernel_pcie.cpp): when
// an event happened in words, the gap between two events on the same clock, which GPU a
// line names, and the PCI addresses known to be GPUs.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/event.h"

namespace gw {

struct DiagnoseContext;

// Seconds from a to b when both carry the same kind of time (wall, uptime or in-year).
std::optional<double> seconds_between(const Event& a, const Event& b);
// "2025-02-23 16:24:18 UTC", "7386 s after boot", "Mar 21 21:42:01", or the origin.
std::string event_when(const Event& e);
// "GPU 1 (00000000:19:00.0)", "GPU at PCI 00000000:19:00.0", "GPU0 as the driver numbers it
// (no PCI address in the log)", "an unidentified GPU".
std::string gpu_words(std::optional<unsigned> gpu, const std::optional<std::string>& pci,
                      std::optional<unsigned> driver_gpu = std::nullopt);
// The driver's "GPU<n>" -> normalised PCI address, learned from lines that name both
// ("Xid (PCI:...): 119, ... from GPU4 GSP", "NVRM: GPU4 ... PCI:...").
using DriverGpuMap = std::map<unsigned, std::string>;
DriverGpuMap driver_gpu_map(const DiagnoseContext& c);
// normalize_pci_bus_id that also takes the kernel log's "PCI:" tag.
std::optional<std::string> normalise_event_pci(const std::optional<std::string>& pci);
// A key naming the GPU an event is about: "g3", "p00000000:19:00", "d4", or "".
std::string gpu_key(const DiagnoseContext& c, const Event& e, const DriverGpuMap& m);
// Domain:bus:device of a normalised address ("00000000:19:00"), function dropped.
std::string pci_device(const std::string& normalised);
// A PCIe AER line that says the error was not recovered: "AER: can't recover", "device
// recovery failed", or a fatal one.
bool aer_unrecovered(std::string_view message);
// Devices (pci_device form) known to be GPUs: the snapshots' GPUs and every address an
// NVRM/Xid line names.
std::set<std::string> gpu_devices(const DiagnoseContext& c);

// Small text helpers (diagnose does not link the parsers).
std::string_view trim_text(std::string_view s);
std::optional<unsigned> leading_uint(std::string_view s);  // "149 ..." -> 149
std::optional<int> leading_int(std::string_view s);        // "-1 (" -> -1
std::optional<unsigned> hex_value(std::string_view s);     // "0x4" -> 4

}  // namespace gw
