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
};

// What happened to one job.
struct JobOutcome {
  sched::JobId id = 0;
  uint64_t source_line = 0;  // the trace line it came from (0: not from a file)
  std::string account;
  unsigned gpus = 0;       // requested
  unsigned allocated = 0;  // GPUs it held (whole nodes for multi-node jobs)
  int64_t submit_ms = 0;
  int64_t runtime_ms = 0;  // useful work it needed
  std::optional<int64_t> first_start_ms;
  std::optional<int64_t> end_ms;
  sched::JobState state = sched::JobState::kPending;
  uint32_t interruptions = 0;
  uint32_t preemptions = 0;
  uint32_t final_transitions = 0;  // how often it reached a final state (must be 1)
  std::vector<uint32_t> nodes;     // nodes of its last attempt, ascending
  // For each preemption, how long the job then stayed off its GPUs (until it restarted or the
  // run ended). A preemption always costs run time, so every gap is > 0.
  std::vector<int64_t> preemption_gaps_ms;
  // Useful work it got done (kept by checkpoints, finished, or running at the horizon), and
  // that over the time from first start to end (or horizon): its effective training time.
  int64_t useful_ms = 0;
  std::optional<double> effective_training_time;
};

struct SimOutcome {
  PolicyResult result;
  std::vector<JobOutcome> jobs;                    // accepted jobs, in submit order
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
