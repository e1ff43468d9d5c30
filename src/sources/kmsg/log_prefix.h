// The prefixes that log tools put in front of a kernel message, parsed into times. Pure.
// Handled (each optional, and nested where tools nest them):
//   /dev/kmsg records          "6,1234,5678901,-;"
//   node-log (Kubernetes/Talos) "172.20.0.5: kern: warning: [2025-09-13T20:46:45.810476849Z]: "
//   dmesg --decode             "kern  :warn  : "
//   RFC 3339 / ISO 8601        "2024-11-15T05:39:15,491363+00:00 " (dmesg --time-format=iso,
//                              journalctl -o short-iso / short-iso-precise), up to 9 fraction
//                              digits, "T" or " " between date and time, Z / +hh:mm / +hhmm
//   syslog / journalctl short  "Mar  3 10:00:00 host kernel: " (short-precise adds
//                              ".123456"; --no-hostname drops the host)
//   dmesg brackets             "[ 1234.567890]" (uptime; journalctl -o short-monotonic too),
//                              "[Sun Feb 23 16:24:18 2025]" (-T / --ctime), "[Dec 1 08:14]" and
//                              "[  +0.000123]" (-H / -wH minute and delta lines), followed by an
//                              optional caller id "[ T1946]" / "[    C3]"
//   "kernel: " / "kernel:[" tags, also with an uptime bracket after them
//   a syslog priority "<5>" (dmesg --raw) before any of these
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gw::kmsg {

// The largest dmesg -H delta ("[  +0.000123]") taken as one: a year. Above it the number is
// not a delta between two kernel lines.
inline constexpr double kMaxDeltaS = 366.0 * 86400;
// The largest uptime ("[ 1234.567890]") taken as one: a century.
inline constexpr double kMaxUptimeS = 100 * 366.0 * 86400;

struct LogPrefix {
  std::optional<int64_t> time_ms;          // wall clock, UTC epoch ms
  std::optional<double> uptime_s;          // seconds since boot
  std::optional<int64_t> time_in_year_ms;  // syslog / dmesg -H minute line: no year
  std::optional<double> delta_s;           // dmesg -H "[  +0.000123]": since the previous line
  bool minute_line = false;                // dmesg -H "[Dec 1 08:14]"
  // A time bracket whose value no kernel writes (a delta over kMaxDeltaS, an uptime over
  // kMaxUptimeS): the prefix is stripped, the line is read without a time.
  bool time_refused = false;
  bool recognised = false;  // some known prefix was found
};

// Parses the prefix at the start of `line` (leading blanks allowed) and returns the message
// after it; returns the trimmed line unchanged when no prefix is known.
std::string_view strip_log_prefix(std::string_view line, LogPrefix& p);

// RFC 3339 / ISO 8601 at the start of s -> epoch ms; `used` = characters consumed.
std::optional<int64_t> parse_iso_ms(std::string_view s, size_t& used);

}  // namespace gw::kmsg
