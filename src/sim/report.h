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

// One job's fate under one policy (the per-job output, docs/simulate.md#per-job-output).
// Times are seconds since the trace's first submit.
struct JobRecord {
  uint64_t id = 0;
  uint64_t source_line = 0;  // line in the trace file (0: unknown)
  std::string account;
  unsigned gpus = 0;
  double submit_s = 0;
  std::optional<double> first_start_s;
  std::optional<double> end_s;
  std::string state;  // done, failed, cancelled, running, pending, preempted, requeued, refused
  uint32_t preemptions = 0;
  uint32_t interruptions = 0;
  std::vector<uint32_t> nodes;  // of the last attempt
  unsigned gpus_allocated = 0;  // of the last attempt
  // Useful work done (finished, kept by checkpoints, or running at the horizon), and that over
  // the time from first start to end or horizon; unset if it never started or had no time.
  double useful_s = 0;
  std::optional<double> effective_training_time;
};

// Failure events of one class, and how many of them stopped a job.
struct FailureClassCount {
  std::string name;
  size_t events = 0;
  size_t interruptions = 0;
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
  std::vector<JobRecord> job_records;     // every job of the trace, refused ones included
  // GPU-weighted useful time / elapsed time from first start to end (or horizon), over the
  // jobs that started.
  std::optional<double> effective_training_time;
  std::vector<FailureClassCount> failures_by_class;  // empty without a failure model
};

// One check of the failure model against a published figure that was not its input.
struct FailureCheck {
  // "same source": against the calibration source itself (its input, or a bound under chosen
  // parameters: not a prediction); "cross source": a figure of another source, not fitted on.
  std::string source;
  std::string name;       // "Llama 3 effective training time"
  std::string inputs;     // the parameters it was computed with
  std::string published;  // the published figure, with its source
  std::optional<double> published_value;
  std::optional<double> model_value;
  std::string unit;     // "fraction" or "hours"
  std::string verdict;  // how far apart and why
  bool agrees = false;  // within the stated tolerance
};

struct FailureModelReport {
  std::string calibration;           // the one source the rates were fitted on
  std::vector<std::string> classes;  // "gpu: 1.18e-05 per GPU-hour (GPU)"
  std::vector<FailureCheck> checks;
};

struct SimReport {
  std::string trace;    // name and path of the trace
  std::string cluster;  // "Philly-like: 552 nodes x 8 GPUs"
  uint64_t seed = 0;
  std::vector<std::string> notes;  // caveats: synthesised limits, missing users, ...
  std::vector<PolicyResult> policies;
  std::optional<FailureModelReport> failure_model;  // when failures are simulated
};

}  // namespace gw::sim
