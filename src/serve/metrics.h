// Prometheus text exposition (format 0.0.4) of the daemon's state: dcgm-exporter's field names,
// types, units and labels for what NVML gives (data/dcgm-exporter/README.md has the facts and
// their source), plus gpuwarden_* series for what gpuwarden adds. Pure function.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot.h"
#include "serve/sampler.h"
#include "store/store.h"

namespace gw::serve {

// Clock event reasons with their dcgm-exporter label values, in bit order.
struct ClockReasonName {
  uint64_t bit;
  const char* label;  // "power_cap", "sw_thermal", ...
};
inline constexpr std::array<ClockReasonName, 9> kClockReasons = {{{0x1, "gpu_idle"},
                                                                  {0x2, "clocks_setting"},
                                                                  {0x4, "power_cap"},
                                                                  {0x8, "hw_slowdown"},
                                                                  {0x10, "sync_boost"},
                                                                  {0x20, "sw_thermal"},
                                                                  {0x40, "hw_thermal"},
                                                                  {0x80, "hw_power_brake"},
                                                                  {0x100, "display_clocks"}}};

// What the daemon accumulates per GPU between rounds.
struct GpuCounters {
  std::array<double, kClockReasons.size()> throttled_s{};  // seconds with each reason set
  std::vector<std::pair<unsigned, uint64_t>> xids;         // Xid -> count since start
  std::optional<unsigned> last_xid_in_window;              // newest Xid inside the event window
};

struct AlertSeries {
  std::string name;
  std::string severity;
  std::optional<unsigned> gpu;
  bool firing = false;
  std::string state;  // inactive / pending / firing
  std::string key;    // the instance ("GPU-<uuid>", "host")
};

struct DaemonHealth {
  int64_t started_ms = 0;
  bool storage_ok = true;
  std::string storage_error;
  uint64_t storage_bytes = 0;
  uint64_t storage_write_errors = 0;
  uint64_t rounds = 0;
  double last_round_s = 0;
  int64_t last_round_wall_ms = 0;  // system clock at the end of the newest round (liveness)
  uint64_t events_kmsg = 0, events_nvml = 0, events_deduplicated = 0;
  uint64_t reloads = 0, reload_failures = 0;
};

struct MetricsInput {
  const Snapshot* snapshot = nullptr;
  const std::vector<GpuFreshness>* fresh = nullptr;    // parallel to snapshot->gpus
  const std::vector<GpuCounters>* counters = nullptr;  // parallel to snapshot->gpus
  const std::vector<store::FindingRecord>* active = nullptr;
  const std::vector<Finding>* cleared = nullptr;  // findings seen since start, now clear
  const std::vector<AlertSeries>* alerts = nullptr;
  const DaemonHealth* health = nullptr;
  int64_t now_ms = 0;
  std::string hostname_label = "Hostname";
  // GPU index -> job ids (job_mapping.h): each DCGM series is repeated per job with hpc_job.
  const std::map<std::string, std::vector<std::string>>* jobs = nullptr;
};

std::string render_metrics(const MetricsInput& in);

// Escapes a label value for the text format (backslash, double quote, newline).
std::string escape_label(std::string_view v);

}  // namespace gw::serve
