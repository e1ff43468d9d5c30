// PyTorch ProcessGroupNCCL watchdog, flight-recorder and desync-debug lines -> WatchdogReport
// (core/nccl_watchdog.h). Pure function over text.
#pragma once

#include <optional>
#include <string_view>

#include "core/nccl_watchdog.h"

namespace gw {

// One line -> a report, or nullopt. A number is taken only when the character after it shows
// it whole: a line cut inside "SeqNum=80" gives no SeqNum rather than a wrong one.
std::optional<WatchdogReport> parse_nccl_watchdog_line(std::string_view line);

}  // namespace gw
