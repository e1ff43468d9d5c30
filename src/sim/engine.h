// The event-driven simulator: submit, finish, failure, repair and wake-up events on a virtual
// clock (ManualClock), driving the very same sched::Scheduler and policy objects the live queue
// uses. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sched/cluster.h"
#include "sched/job.h"
#include "sched/policy.h"
#include "sched/scheduler.h"
#include "sim/failure.h"
#include "sim/report.h"

namespace gw::sim {

struct SimOptions {
  uint64_t seed = 1;
  sched::SchedulerOptions scheduler;
  sched::PolicyOptions policy;
  FailureOptions failure;
  std::optional<int64_t> horizon_ms;  // stop this long after the first submit
  size_t series_points = 200;         // utilization / queue-length points kept
  // Keep every job's outcome for per-job output (JSON, --jobs-out). Without it each job is
  // folded into the figures when it ends and forgotten: the figures are the same to the bit,
  // and a 10-million-job replay saves ~1.1 GB (docs/perf/sim.md).
  bool keep_job_outcomes = true;
};

// A run's jobs (JobTable: accepted ones, in submit order) and its totals.
struct SimOutcome : JobTable {
  PolicyResult result;
  std::vector<sched::Reservation> reservations;    // the first reservation each job got
  std::vector<std::string> rejected;               // jobs the scheduler refused, with why
  double useful_gpu_ms = 0, allocated_gpu_ms = 0;  // goodput = useful / allocated
  std::optional<std::string> stop_note;            // why the run stopped early, if it did
};

// Replays `jobs` (any order) on `cluster` under the named policy. The specs are read, never
// copied whole: they must outlive the call.
Result<SimOutcome> run_simulation(std::span<const sched::JobSpec> jobs,
                                  const sched::Cluster& cluster, std::string_view policy,
                                  const SimOptions& options);
inline Result<SimOutcome> run_simulation(const std::vector<sched::JobSpec>& jobs,
                                         const sched::Cluster& cluster, std::string_view policy,
                                         const SimOptions& options) {
  return run_simulation(std::span<const sched::JobSpec>(jobs), cluster, policy, options);
}

}  // namespace gw::sim
