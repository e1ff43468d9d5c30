// SimReport: the numbers one simulation run produced, per policy, ready to render as a
// terminal table, JSON, CSV or an HTML/SVG report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/packed_optional.h"
#include "sched/job.h"

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

// What happened to one job: kept for every job of a replay, so kept small (no strings or lists:
// the account is an index into SimOutcome::accounts, the nodes a range of SimOutcome::nodes).
struct JobOutcome {
  sched::JobId id = 0;
  uint64_t source_line = 0;  // the trace line it came from (0: not from a file)
  int64_t submit_ms = 0;
  int64_t runtime_ms = 0;  // useful work it needed
  OptionalMs first_start_ms;
  OptionalMs end_ms;
  // Useful work it got done (kept by checkpoints, finished, or running at the horizon), and
  // that over the time from first start to end (or horizon): its effective training time.
  int64_t useful_ms = 0;
  std::optional<double> effective_training_time;
  // After each preemption the job stays off its GPUs until it restarts or the run ends; a
  // preemption always costs run time, so the shortest of those gaps is > 0 when there is one.
  int64_t shortest_preemption_gap_ms = 0;
  uint32_t preemption_gaps = 0;
  uint32_t account = 0;    // index into SimOutcome::accounts
  uint32_t gpus = 0;       // requested
  uint32_t allocated = 0;  // GPUs it held (whole nodes for multi-node jobs)
  uint32_t interruptions = 0;
  uint32_t preemptions = 0;
  uint32_t nodes_at = 0;  // its last attempt's nodes: SimOutcome::nodes[nodes_at, +node_count)
  uint32_t node_count = 0;
  sched::JobState state = sched::JobState::kPending;
  uint8_t final_transitions = 0;  // how often it reached a final state (must be 1)
};

// Every job's fate under one policy, kept compact: a replay of millions of jobs holds one
// JobOutcome each, and a JobRecord is made only when a job is read (rendering).
struct JobTable {
  std::vector<JobOutcome> jobs;       // accepted jobs, in submit order
  std::vector<std::string> accounts;  // JobOutcome::account's names
  std::vector<uint32_t> nodes;        // JobOutcome's node ranges, ascending each
  std::vector<JobRecord> refused;     // jobs never replayed, after the accepted ones

  std::span<const uint32_t> nodes_of(const JobOutcome& j) const {
    return std::span<const uint32_t>(nodes).subspan(j.nodes_at, j.node_count);
  }
  const std::string& account_of(const JobOutcome& j) const { return accounts[j.account]; }
  size_t size() const { return jobs.size() + refused.size(); }
  JobRecord operator[](size_t i) const;  // seconds since the trace's first submit

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = JobRecord;
    using difference_type = std::ptrdiff_t;
    Iterator(const JobTable* t, size_t i) : t_(t), i_(i) {}
    JobRecord operator*() const { return (*t_)[i_]; }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const JobTable* t_;
    size_t i_;
  };
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }
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
  JobTable job_records;                   // every job of the trace, refused ones included
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
