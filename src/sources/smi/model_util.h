// Helpers shared by the capture parsers for filling the core model.
#pragma once

#include <string>
#include <string_view>

#include "core/snapshot.h"

namespace gw::smi {

// Sets info.caps from the fields a parser managed to fill (a capture "supports" what it has).
void derive_capabilities(GpuState& gpu);

// "12.2" -> 12020 (NVML's CUDA integer).
std::optional<int> parse_cuda_version(std::string_view v);

// "610.62 [Deprecated; ...]" -> "610.62".
std::string clean_version(std::string_view v);

// "C:\\Windows\\explorer.exe" / "/usr/bin/python" -> kept as is; "C", "G", "C+G" -> graphics.
inline bool process_type_is_graphics(std::string_view type) {
  return type.find('G') != std::string_view::npos;
}

// Sets clock_reasons from a reason's display name ("SW Power Cap", "sw_power_cap",
// "clocks_event_reason_hw_slowdown"...). Returns false for unknown names.
bool apply_clock_reason(std::string_view name, bool active, GpuSample& s);

// Maps an event-reason counter name ("SW Power Capping", "sw_power_cap",
// "clocks_event_reasons_counters_hw_therm_slowdown"...) to its slot. nullptr when unknown.
std::optional<uint64_t>* violation_slot(std::string_view name, ViolationCounters& v);

}  // namespace gw::smi
