// Internal: what the engine remembers per GPU between evaluations (a "track"), and the metric
// functions that read it. A track outlives the GPU's presence in snapshots so that a GPU that
// vanished can still be reported as lost.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "alert/alert.h"
#include "core/event.h"
#include "core/snapshot.h"

namespace gw::alert {

// One sample, reduced to what windowed metrics need.
struct WindowPoint {
  int64_t t_ms = 0;
  bool loaded = false;
  std::optional<uint64_t> clock_reasons;
};

struct EventPoint {
  int64_t t_ms = 0;
  EventKind kind = EventKind::kXid;
  std::optional<unsigned> code;
};

struct Track {
  AlertTarget target;
  std::optional<DeviceInfo> info;   // last known identity and limits
  std::optional<GpuState> current;  // this evaluation's reading; nullopt: not in the snapshot
  bool seen = false;                // ever listed in a snapshot
  std::deque<WindowPoint> points;   // oldest first
  std::deque<EventPoint> events;    // oldest first
};

struct MetricInput {
  const Track& track;
  int64_t now_ms;
  std::chrono::milliseconds window;
};

// nullopt: unknown metric name (config validation keeps this from happening at run time).
std::optional<std::optional<double>> compute_metric(std::string_view name, const MetricInput& in);

// Xid codes seen in the window, oldest first (for the {xids} placeholder).
std::vector<unsigned> xids_in_window(const MetricInput& in);

}  // namespace gw::alert
