// SimReport: the numbers one simulation run produced, per policy, ready to render as a
// terminal table, JSON, CSV or an HTML/SVG report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gw::sim {

struct SeriesPoint {
  double t_s = 0;  // seconds since the first submit
  double value = 0;
};

struct PolicyResult {
  std::string policy;  // "fcfs", "priority", "fairshare", "fcfs+backfill", ...
  size_t jobs = 0;
  size_t jobs_finished = 0;
  double jct_mean_s = 0, jct_median_s = 0, jct_p95_s = 0, jct_p99_s = 0;
  double queue_mean_s = 0, queue_median_s = 0, queue_p95_s = 0, queue_p99_s = 0;
  double gpu_utilization = 0;  // allocated GPU-seconds / (GPUs x makespan)
  double makespan_s = 0;
  double jain_fairness = 0;                    // across tenants, 1 = perfectly fair
  std::optional<double> finish_time_fairness;  // max over tenants of (shared JCT / isolated JCT)
  double hol_blocking_s = 0;                   // time the head of the queue blocked runnable jobs
  double goodput = 1;                          // useful GPU-hours / allocated GPU-hours
  size_t interruptions = 0;                    // jobs killed by failures
  size_t preemptions = 0;
  double wall_time_s = 0;                 // how long the simulation itself took
  std::vector<double> jct_s;              // every finished job's JCT, for the CDF plot
  std::vector<SeriesPoint> utilization;   // over time
  std::vector<SeriesPoint> queue_length;  // over time
};

struct SimReport {
  std::string trace;    // name and path of the trace
  std::string cluster;  // "Philly-like: 552 nodes x 8 GPUs"
  uint64_t seed = 0;
  std::vector<std::string> notes;  // caveats: synthesised limits, missing users, ...
  std::vector<PolicyResult> policies;
};

}  // namespace gw::sim
