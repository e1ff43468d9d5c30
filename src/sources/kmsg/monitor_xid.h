// Another GPU monitor's reading of a kernel Xid, as people paste it beside (or instead of) the
// kernel line: gpud's event reason "XID 149.38 (err status 0x00000000) NVLINK_NETIR_ERROR
// detected on GPU PCI:0000:00:00", "XID 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS GPU has
// fallen off the bus detected on GPU PCI:0000:01:00 UUID:GPU-...". Pure over text.
#pragma once

#include <optional>
#include <string_view>

#include "core/event.h"

namespace gw::kmsg {

// The line -> an Xid event (code, GPU address, message "gpud: <the reason>"), or nullopt when
// the line holds no such reading. Anything may stand before the reason (a bullet, a quote, a
// JSON key, a log prefix); the reason must name both the Xid and the GPU's PCI address.
std::optional<Event> parse_monitor_xid_line(std::string_view line);

}  // namespace gw::kmsg
