// Runs several policies over one trace side by side (the body of `gpuwarden simulate`), and the
// checkpoint-interval study (goodput vs interval, compared with Young/Daly).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/cluster.h"
#include "sim/engine.h"
#include "sim/report.h"
#include "sim/trace.h"

namespace gw::sim {

struct SimConfig {
  ClusterSpec cluster;
  std::vector<std::string> policies = {
      "fcfs", "fcfs+backfill", "priority+backfill", "fairshare+backfill", "sjf", "las"};
  SimOptions options;
};

// A uniform cluster of spec.nodes x spec.gpus_per_node (2 sockets, 2 GPUs per PCIe switch).
sched::Cluster build_cluster(const ClusterSpec& spec);
std::string describe_cluster(const ClusterSpec& spec);

// The jobs a replay runs, after the checks every replay makes (the CLI and sim_bench alike):
// a job wider than the simulated cluster is refused (a note and a "refused" record, never a
// silent drop); a job without a run time runs for its time limit when it has one (said in a
// note) and is refused otherwise; a trace with no run time at all is an error.
// The jobs are the trace's own (no copy: a 10-million-job replay holds each spec once) unless
// a job was refused or changed; then `kept` holds the replayed ones. `jobs` points into the
// trace or into `kept`, so the trace must outlive it; moving keeps it valid, copying would not.
struct PreparedJobs {
  std::span<const sched::JobSpec> jobs;
  std::vector<sched::JobSpec> kept;
  std::vector<JobRecord> refused;
  std::vector<std::string> notes;
  PreparedJobs() = default;
  PreparedJobs(PreparedJobs&&) = default;
  PreparedJobs& operator=(PreparedJobs&&) = default;
  PreparedJobs(const PreparedJobs&) = delete;
  PreparedJobs& operator=(const PreparedJobs&) = delete;
};
Result<PreparedJobs> prepare_jobs(const Trace& trace, const ClusterSpec& cluster);

// Every policy over the same jobs; fair-share weights come from the cluster's shares.
Result<SimReport> simulate_policies(const Trace& trace, const SimConfig& config);

struct SweepPoint {
  double interval_s = 0;
  double goodput = 0;
  double makespan_s = 0;
  size_t interruptions = 0;
};

struct CheckpointSweep {
  std::string policy;
  double checkpoint_cost_s = 0;
  double mtbf_per_gpu_h = 0;         // 1 / rate
  double young_daly_interval_s = 0;  // for a job of `reference_gpus` GPUs
  unsigned reference_gpus = 0;       // GPU-weighted mean job width
  std::vector<SweepPoint> points;
  double best_interval_s = 0;
  double best_goodput = 0;
};

// Re-runs the trace with each checkpoint interval (failures as configured; requeue forced on)
// and finds the one that maximises goodput. Empty `intervals_s` = a log-spaced default grid
// around the Young/Daly interval.
Result<CheckpointSweep> checkpoint_sweep(const Trace& trace, const SimConfig& config,
                                         const std::string& policy,
                                         std::vector<double> intervals_s = {});
std::string render_sweep(const CheckpointSweep& sweep, std::string_view format);

}  // namespace gw::sim
