// /dev/kmsg record format -> dmesg-like lines. Pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gw {

// Records "pri,seq,usec,flags[,...];message\n" followed by optional " KEY=value" continuation
// lines become "[  1234.567890] message\n". Records older than `min_uptime_s` are dropped.
// Escapes the kernel writes ("\x0a") are left as they are.
std::string kmsg_records_to_dmesg(std::string_view raw, std::optional<double> min_uptime_s);

}  // namespace gw
