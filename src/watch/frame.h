// What one refresh of `gpuwarden watch` shows, whoever produced it (the daemon's JSON API or a
// direct GPU source): plain data, so the view is a pure function of it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.h"
#include "core/snapshot.h"

namespace gw::watch {

struct WatchFinding {
  Finding finding;
  bool active = true;
  int64_t raised_ms = 0;
  std::optional<int64_t> cleared_ms;
};

// One point of a history series (the daemon's raw samples or 1-minute rollups).
struct Point {
  int64_t t_ms = 0;
  double value = 0;
};

// The recent history of one GPU: the sparkline series and the moments worth marking on them.
struct GpuHistory {
  std::vector<Point> util_pct, temp_c, power_w;
  std::vector<int64_t> xid_ms;       // an Xid (or fallen-off-the-bus) event on this GPU
  std::vector<int64_t> throttle_ms;  // a sample with a thermal or power slowdown reason set
};

// Who runs a process: resolved where the processes live (the machine the GPUs are in).
using UserOf = std::map<uint32_t, std::string>;

struct Frame {
  Snapshot snapshot;
  std::vector<WatchFinding> findings;      // active first, then recently cleared
  std::map<unsigned, GpuHistory> history;  // by GPU index
  UserOf users;
  std::string source;  // "daemon http://127.0.0.1:9400" or "demo fleet (fake NVML)"
  int64_t now_ms = 0;
  int64_t history_from_ms = 0, history_to_ms = 0;  // the window the sparklines cover
  std::optional<std::string> error;  // the feed could not refresh: shown, last frame kept
  // The queue job of each GPU process that belongs to one (the daemon matches process
  // groups); empty without a daemon or without a queue. The process table's JOB column.
  std::map<uint32_t, int64_t> jobs;
};

// Thermal and power slowdowns: the reasons that mark a sparkline (sync boost, app clocks and
// idle are not slowdowns worth a mark).
inline constexpr uint64_t kMarkedClockReasons =
    clock_reason::kSwPowerCap | clock_reason::kHwSlowdown | clock_reason::kSwThermalSlowdown |
    clock_reason::kHwThermalSlowdown | clock_reason::kHwPowerBrakeSlowdown;

}  // namespace gw::watch
